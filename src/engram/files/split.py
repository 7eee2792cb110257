"""Keeping memory files under ``files.max_file_bytes``: a file sync writes is one it can read back.

Before a changed file is written, if its text would pass the limit, entries are moved from its end
into continuation files beside it (``notes.md`` → ``notes-2.md``, ``notes-3.md``…), each filled up
to the limit; the sync state follows them, so a moved entry stays where it was put, as if a person
had moved it. An entry too large for any file on its own is not written at all: it is reported,
and left out of the state, so the next sync tries again instead of taking its absence as a
deletion. Nothing written is ever larger than what reading accepts.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence

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
    """The file's size in bytes once written (``utf8_size`` of its text, which the document keeps
    as entries are added: ``Document.size``)."""
    return doc.size()


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
    entries: Sequence[Entry] | None = None,
    settled: Callable[[int], None] | None = None,
) -> set[str]:
    """Move entries out of ``docs[rel]`` until it fits ``limit``; returns the files changed.
    ``entries``: the document's entries in its order, where the caller added them itself (an
    export), so its text need not be parsed again to find them (half the time of a split).
    ``settled(n)`` hears of the entries whose place is final, when the file needs splitting: those
    it keeps at once, then each moved one as it is placed (or reported), so a bar of one large file
    moves as it is split, not from none to all."""
    doc = docs[rel]
    if size(doc) <= limit:
        return set()
    if entries is None:
        entries = fmt.parse(doc.text(), rel, max_content_chars=max_content_chars).parsed.entries
    entries = [e for e in entries if e.id]
    moved = entries[len(entries) - _to_move(doc, [e.id for e in entries], limit):]  # type: ignore[misc]
    doc.remove_all(e.id for e in moved)  # type: ignore[misc]
    if settled is not None:
        settled(len(entries) - len(moved))
    changed = {rel}
    filled: set[str] = set()  # the continuation files this took an entry into: they have one
    part = 2
    for entry in moved:  # in their order
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
                filled.add(target)
                break
            other.remove(entry.id)  # type: ignore[arg-type]
            # Parsing a full file to ask cost as much as filling it; one this filled has entries.
            if target not in filled and not _has_entries(other, fmt, target, max_content_chars):
                # Alone in an empty file it is still too large: it cannot be written anywhere.
                problems.append(Problem(rel, entry.line, f"entry {entry.id} not written: on its own it is larger"
                                                         f" than files.max_file_bytes ({limit} bytes)"))
                st.entries.pop(entry.id, None)  # type: ignore[arg-type]
                break
            part += 1
        if settled is not None:
            settled(1)
    return changed


def _to_move(doc: Document, ids: list[str], limit: int) -> int:
    """How many entries, from the end of ``ids`` (the file's, in order), must leave ``doc`` for it
    to fit ``limit``: the fewest, or all of them when even that is not enough. Each entry removed
    shrinks the text (its lines go; nothing is added), so the count is found by bisection over
    trial copies, ~log2(n) renders of the file: removing one at a time and measuring after each
    rendered it once per entry moved (12 s for 20,000 memories at a small limit)."""
    def fits(count: int) -> bool:
        trial = doc.copy()
        trial.remove_all(ids[len(ids) - count:])
        return size(trial) <= limit

    # The fewest that fit (fits is False up to some count, True from it); all when none does.
    return min(bisect.bisect_left(range(1, len(ids) + 1), True, key=fits) + 1, len(ids))


def _has_entries(doc: Document, fmt: Format, rel: str, max_content_chars: int) -> bool:
    return bool(fmt.parse(doc.text(), rel, max_content_chars=max_content_chars).parsed.entries)
