"""A realistic bench corpus of real English, generated at run time from text already on the machine.

Sources (whatever is present; nothing is downloaded or committed): Debian package descriptions
(``apt-cache dumpavail``), the manual pages under ``/usr/share/man/man1-8`` (roff markup
stripped) and Python's own documentation topics (``pydoc_data.topics``). Documents are split
into sentences and memories are runs of 1-4 consecutive sentences (at most 500 characters), so
the vocabulary, term frequencies and co-occurrences are those of real technical prose, unlike
recombined LoCoMo turns. Queries are Debian packages' one-line summaries ("tool to manage
disk partitions"), a person's short description of something they may have stored.

    python bench/real_corpus.py --count 1000   # print a sample
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import random
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])")
_ROFF_ESCAPE = re.compile(r"\\(s[-+]?\d|f[BIRP1-4]|f\(..|f\[[^]]*\]|\(..|\[[^]]*\]|\*.|[-&e|^ 0c])")
_SPACES = re.compile(r"\s+")
MAX_CHARS = 500


def debian_descriptions() -> tuple[list[str], list[str]]:
    """(long descriptions, one-line summaries) of the packages apt knows about."""
    try:
        dump = subprocess.run(["apt-cache", "dumpavail"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return [], []
    docs, summaries = [], []
    for block in dump.split("\n\n"):
        lines = block.split("\n")
        for i, line in enumerate(lines):
            if line.startswith("Description:"):
                summaries.append(line.split(":", 1)[1].strip())
                body = []
                for more in lines[i + 1:]:
                    if not more.startswith(" "):
                        break
                    body.append("" if more.strip() == "." else more.strip())
                docs.append(" ".join(body))
                break
    return docs, list(dict.fromkeys(summaries))


def man_pages(limit: int | None = None) -> Iterator[str]:
    """The text of the English manual pages, roff requests and escapes removed."""
    files = sorted(p for section in range(1, 9) for p in Path(f"/usr/share/man/man{section}").glob("*.gz"))
    for path in files[:limit]:
        try:
            raw = gzip.decompress(path.read_bytes()).decode("utf-8", "replace")
        except (OSError, EOFError, gzip.BadGzipFile):
            continue
        words = []
        for line in raw.splitlines():
            if line.startswith((".", "'")):
                # Macros whose arguments are running text (.B word, .I word, .SH NAME) keep them.
                head, _, rest = line.partition(" ")
                if head in (".B", ".I", ".BR", ".IR", ".RB", ".RI", ".BI", ".IB", ".SH", ".SS", ".IP", ".TP"):
                    words.append(rest.replace('"', ""))
                continue
            words.append(line)
        yield _ROFF_ESCAPE.sub("", " ".join(words))


def python_topics() -> Iterator[str]:
    try:
        from pydoc_data.topics import topics
    except ImportError:
        return
    yield from topics.values()


def sentences(document: str) -> list[str]:
    flat = _SPACES.sub(" ", document).strip()
    return [s for s in _SENTENCE_END.split(flat) if 20 <= len(s) <= MAX_CHARS and " " in s]


def memories(count: int, seed: int = 7) -> tuple[list[str], list[str]]:
    """``count`` distinct memory texts (fewer if the machine has less text) and the query pool."""
    rng = random.Random(seed)
    docs, summaries = debian_descriptions()
    split: list[list[str]] = []

    def documents(first: bool) -> Iterator[list[str]]:
        # The first pass reads the sources (lazily: a small corpus never opens most man pages).
        if not first:
            yield from split
            return
        for document in itertools.chain(docs, python_topics(), man_pages()):
            if parts := sentences(document):
                split.append(parts)
                yield parts

    texts: dict[str, None] = {}
    # Passes over the documents with other window lengths and offsets until there are enough.
    for number, window in enumerate((1, 2, 3, 2, 3, 4, 3, 4, 2, 3, 4)):
        for parts in documents(number == 0):
            i = rng.randrange(window) if window > 1 else 0
            while i < len(parts):
                n = rng.randint(1, window)
                text = " ".join(parts[i : i + n])
                if len(text) <= MAX_CHARS:
                    texts[text] = None
                    if len(texts) >= count:
                        return list(texts), summaries
                i += n
    return list(texts), summaries


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=1000)
    args = parser.parse_args()
    texts, summaries = memories(args.count)
    words = {w for t in texts for w in re.findall(r"\w+", t.lower())}
    print(f"{len(texts):,} memories, {len(words):,} distinct words, {len(summaries):,} query summaries")
    for text in random.Random(1).sample(texts, min(5, len(texts))):
        print(" -", text)
    print("queries:", random.Random(1).sample(summaries, min(5, len(summaries))))


if __name__ == "__main__":
    main()
