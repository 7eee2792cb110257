"""The markdown document keeps its heading positions while entries are added (so an import of
thousands is not quadratic); every sequence of edits must leave the text it left before."""

from __future__ import annotations

import random

from engram.files.entry import SECTION_KEY, Entry, build_entry
from engram.files.markdown import MarkdownDocument, parse

# The second file has no blank line before its headings: an entry added there brings one.
STARTS = ["# Memory\n\nIntro line.\n\n## Tools\n\n- uses vim <!-- id:t0 -->\n\n## People\n\n- knows Ana <!-- id:p0 -->\n",
          "# Memory\n- first <!-- id:f0 -->\n## Tools\n- uses vim <!-- id:t0 -->\n## People\n- knows Ana <!-- id:p0 -->\n"]


def _entry(n: int, section: str | None, entry_id: str | None = None) -> Entry:
    metadata = {SECTION_KEY: section} if section else {}
    return build_entry({"content": f"fact {n}", "id": entry_id or f"e{n}", "metadata": metadata},
                       max_content_chars=1000)


def _edit(doc: MarkdownDocument, rng: random.Random, forget_positions: bool) -> str:
    ids: list[str] = []
    for n in range(300):
        if forget_positions:
            doc._headings = None  # what every add did before the positions were kept
        roll = rng.random()
        if n < 150:  # a run of adds into the file's own sections, as an import makes
            doc.add(_entry(n, rng.choice([None, "Tools", "People"])))
            ids.append(f"e{n}")
        elif roll < 0.6 or not ids:
            doc.add(_entry(n, rng.choice([None, "Tools", "People", f"New {n % 5}"])))
            ids.append(f"e{n}")
        elif roll < 0.8:
            target = rng.choice(ids)
            assert doc.replace(target, _entry(n, rng.choice([None, "Tools", "Other"]), target))
        else:
            victim = ids.pop(rng.randrange(len(ids)))
            assert doc.remove(victim)
    return doc.text()


def test_kept_heading_positions_give_the_same_text_as_finding_them_each_time() -> None:
    for seed, start in enumerate(STARTS * 3):
        kept = _edit(parse(start, "MEMORY.md", max_content_chars=1000), random.Random(seed), False)
        found = _edit(parse(start, "MEMORY.md", max_content_chars=1000), random.Random(seed), True)
        assert kept == found
        assert kept.count("## ") >= 2


def _rendered_afresh(doc: MarkdownDocument) -> str:
    doc._text = None
    return doc.text()


def test_text_grown_by_an_added_entry_is_the_text_rendered_afresh() -> None:
    # An entry added after the last line the text shows extends the kept text instead of walking
    # every block again (``MarkdownDocument.add``); after any sequence of edits, with the text
    # rendered between them (as every sync pass does), it must be what a full render gives.
    starts = [*STARTS, "", "# Memory\n", "# Memory\n\n\n", "# Memory\n\n- only <!-- id:o0 -->\n\n\n"]
    extended = 0
    for seed, start in enumerate(starts * 2):
        rng = random.Random(seed)
        doc = parse(start, "MEMORY.md", max_content_chars=1000)
        ids: list[str] = []
        for n in range(120):
            before = doc.text()
            roll = rng.random()
            if roll < 0.7 or not ids:
                content = f"fact {n}" + ("\n\nsecond paragraph\n" if rng.random() < 0.2 else "")
                metadata = {SECTION_KEY: s} if (s := rng.choice([None, None, "Tools", f"New {n % 3}"])) else {}
                doc.add(build_entry({"content": content, "id": f"e{n}", "metadata": metadata}, max_content_chars=1000))
                ids.append(f"e{n}")
                extended += doc._text is not None and doc._text[0] == before  # the kept pieces
            elif roll < 0.85:
                assert doc.remove(ids.pop(rng.randrange(len(ids))))
            else:
                target = rng.choice(ids)
                assert doc.replace(target, _entry(n, rng.choice([None, "Tools"]), target))
            kept = doc.text()
            assert kept == _rendered_afresh(doc), (seed, n)
    assert extended >= 50  # the shortcut was taken (77 times here), not only the full render


def test_entries_added_between_renders_are_joined_once_into_the_text_rendered_afresh() -> None:
    # A sync pass adds a batch's entries and renders once: the kept text grows by one piece per
    # entry appended at the end (no copy of the whole file per entry) and is joined when asked for.
    joined = 0
    for seed, start in enumerate([*STARTS, "# Memory\n\n- only <!-- id:o0 -->\n"]):
        rng = random.Random(seed)
        doc = parse(start, "MEMORY.md", max_content_chars=1000)
        doc.text()
        for n in range(0, 60, 6):
            for k in range(n, n + 6):
                # Without headings every entry lands at the end; with them, some go before one.
                section = rng.choice([None, None, None, "Tools"] if "##" in start else [None])
                doc.add(build_entry({"content": f"fact {k}", "id": f"b{k}",
                                     "metadata": {SECTION_KEY: section} if section else {}}, max_content_chars=1000))
            pieces = doc._text
            assert doc.text() == _rendered_afresh(doc), (seed, n)
            if pieces is not None:
                assert len(pieces) == 7 and doc._text == ["".join(pieces)]
                joined += 1
    assert joined >= 10  # the heading-less file's batches, all appended at the end, took the pieces path

