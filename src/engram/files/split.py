"""Keeping memory files under ``files.max_file_bytes``: a file sync writes is one it can read back.

Before a changed file is written, if its text would pass the limit, entries are moved from its end
into continuation files beside it (``notes.md`` → ``notes-2.md``, ``notes-3.md``…), each filled up
to the limit; the sync state follows them, so a moved entry stays where it was put, as if a person
had moved it. An entry too large for any file on its own is not written at all: it is reported,
and left out of the state, so the next sync tries again instead of taking its absence as a
deletion. Nothing written is ever larger than what reading accepts.
"""

from __future__ import annotations

from collections.abc import Callable

from .document import Document, Format
from .entry import Entry, Problem
from .state import SyncState

# The most continuation files tried for one file before giving up (reported, never silent).
MAX_PARTS = 1000


def part_path(rel: str, part: int) -> str:
    """The file's ``part``-th file: itself for 1, else its continuation ``notes-2.md``, ..."""
    if part == 1:
        return rel
    stem, suffix = rel.rsplit(".", 1)
    return f"{stem}-{part}.{suffix}"


def size(doc: Document) -> int:
    """The file's size in bytes once written (UTF-8). Counted without encoding a copy when the text
    is ASCII, as most memory files are: a pass asks twice, and at 10,000 entries each copy was 1 ms."""
    text = doc.text()
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def fit(
    rel: str,
    docs: dict[str, Document],
    doc_for: Callable[[str], Document | None],
    fmt: Format,
    *,
    limit: int,
    max_content_chars: int,
    st: SyncState,
    problems: list[Problem],
) -> set[str]:
    """Move entries out of ``docs[rel]`` until it fits ``limit``; returns the files changed."""
    doc = docs[rel]
    if size(doc) <= limit:
        return set()
    entries = [e for e in fmt.parse(doc.text(), rel, max_content_chars=max_content_chars).parsed.entries if e.id]
    moved: list[Entry] = []
    while size(doc) > limit and entries:
        entry = entries.pop()
        doc.remove(entry.id)  # type: ignore[arg-type]
        moved.append(entry)
    changed = {rel}
    part = 2
    for entry in reversed(moved):  # keep their order
        while True:
            target = part_path(rel, part)
            other = doc_for(target) if part <= MAX_PARTS else None
            if other is None:
                problems.append(Problem(rel, entry.line, f"entry {entry.id} not written: no continuation file"
                                                         f" of this file can take it under files.max_file_bytes"))
                st.entries.pop(entry.id, None)  # type: ignore[arg-type]
                break
            other.add(entry)
            if size(other) <= limit:
                if entry.id in st.entries:
                    st.entries[entry.id] = st.entries[entry.id]._replace(path=target)  # type: ignore[index]
                changed.add(target)
                break
            other.remove(entry.id)  # type: ignore[arg-type]
            if not _has_entries(other, fmt, target, max_content_chars):
                # Alone in an empty file it is still too large: it cannot be written anywhere.
                problems.append(Problem(rel, entry.line, f"entry {entry.id} not written: on its own it is larger"
                                                         f" than files.max_file_bytes ({limit} bytes)"))
                st.entries.pop(entry.id, None)  # type: ignore[arg-type]
                break
            part += 1
    return changed


def _has_entries(doc: Document, fmt: Format, rel: str, max_content_chars: int) -> bool:
    return bool(fmt.parse(doc.text(), rel, max_content_chars=max_content_chars).parsed.entries)
