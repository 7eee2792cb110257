"""The split of an oversized file (``split.fit``) pinned entry by entry against its rule, stated
the plain way: entries leave the file's end one at a time until it fits, then fill continuation
files in order, each up to the limit. ``fit`` finds the same result without measuring the file
after each entry (that was quadratic: 12 s for 20,000 memories); these check it is the same."""

from __future__ import annotations

from collections.abc import Callable

from engram.files import split
from engram.files.document import Document, Format, get_format
from engram.files.entry import SECTION_KEY, Entry, Problem, build_entry
from engram.files.state import SyncState

MAX_CHARS = 1 << 20


def _entries(count: int, prefix: str = "id") -> list[Entry]:
    """Entries of many sizes, some not ASCII, some on several lines, some in markdown sections."""
    out = []
    for i in range(count):
        content = f"memory {i:04d} " + "words " * (i % 17) + ("ünïcödé ✓ 漢字 " if i % 5 == 0 else "")
        if i % 7 == 0:
            content += "\nsecond line"
        metadata = {SECTION_KEY: f"Part {i % 3}"} if i % 4 == 0 else {}
        out.append(build_entry({"content": content, "id": f"{prefix}{i:04d}", "tags": ["notes"], "metadata": metadata},
                               max_content_chars=MAX_CHARS))
    return out


def _filled(fmt: Format, entries: list[Entry]) -> Document:
    doc = fmt.new("Notes")
    for entry in entries:
        doc.add(entry)
    return doc


def _bytes(doc: Document) -> int:
    return len(doc.text().encode("utf-8"))


def _plain_fit(rel: str, docs: dict[str, Document], doc_for: Callable[[str], Document | None], fmt: Format, *,
               limit: int, problems: list[Problem]) -> None:
    """The rule one entry at a time, every size measured on the encoded text."""
    doc = docs[rel]
    if _bytes(doc) <= limit:
        return
    entries = [e for e in fmt.parse(doc.text(), rel, max_content_chars=MAX_CHARS).parsed.entries if e.id]
    moved: list[Entry] = []
    while _bytes(doc) > limit and entries:
        moved.append(entries.pop())
        doc.remove(moved[-1].id)  # type: ignore[arg-type]
    part = 2
    for entry in reversed(moved):
        while True:
            target = split.part_path(rel, part)
            other = doc_for(target)
            assert other is not None
            other.add(entry)
            if _bytes(other) <= limit:
                break
            other.remove(entry.id)  # type: ignore[arg-type]
            if not fmt.parse(other.text(), target, max_content_chars=MAX_CHARS).parsed.entries:
                problems.append(Problem(rel, entry.line, f"entry {entry.id} too large"))
                break
            part += 1


def _split_both_ways(fmt_name: str, entries: list[Entry], limit: int,
                     existing: dict[str, list[Entry]] | None = None) -> tuple[dict[str, str], dict[str, str]]:
    """The files (path → text) ``fit`` leaves and those the plain rule leaves, from the same start."""
    fmt = get_format(fmt_name)
    results = []
    for run in ("fit", "plain"):
        docs = {"notes.md": _filled(fmt, entries)}
        docs.update({rel: _filled(fmt, held) for rel, held in (existing or {}).items()})
        problems: list[Problem] = []

        def doc_for(target: str, docs: dict[str, Document] = docs) -> Document:
            return docs.setdefault(target, fmt.new("Notes"))

        if run == "fit":
            split.fit("notes.md", docs, doc_for, fmt, limit=limit, max_content_chars=MAX_CHARS,
                      st=SyncState(fmt.name, ""), problems=problems)
        else:
            _plain_fit("notes.md", docs, doc_for, fmt, limit=limit, problems=problems)
        texts = {rel: doc.text() for rel, doc in docs.items()}
        texts["problems"] = " ".join(sorted(p.message.split()[1] for p in problems))
        results.append(texts)
    return results[0], results[1]


def _ids(fmt_name: str, rel: str, text: str) -> list[str]:
    return [e.id for e in get_format(fmt_name).parse(text, rel, max_content_chars=MAX_CHARS).parsed.entries]  # type: ignore[misc]


def test_a_file_of_many_entries_splits_as_one_at_a_time_would(fmt: str) -> None:
    entries = _entries(600)
    got, plain = _split_both_ways(fmt, entries, limit=4096)
    assert got == plain
    files = [rel for rel in got if rel != "problems"]
    assert len(files) > 10 and all(len(got[rel].encode("utf-8")) <= 4096 for rel in files)
    # Every entry once, the file first and its continuations after it.
    order = ["notes.md"] + [split.part_path("notes.md", n) for n in range(2, len(files) + 1)]
    assert sorted(files) == sorted(order)
    held = [i for rel in order for i in _ids(fmt, rel, got[rel])]
    assert sorted(held) == sorted(e.id for e in entries) and len(set(held)) == len(held)
    # Each continuation but the last was filled: the next file's first entry would not have fitted.
    for rel, after in zip(order[1:], order[2:], strict=False):
        doc = get_format(fmt).parse(got[rel], rel, max_content_chars=MAX_CHARS)
        doc.add(get_format(fmt).parse(got[after], after, max_content_chars=MAX_CHARS).parsed.entries[0])
        assert _bytes(doc) > 4096


def test_an_entry_too_large_alone_and_a_continuation_already_holding_entries(fmt: str) -> None:
    entries = _entries(200)
    big = build_entry({"content": "x" * 5000, "id": "big", "tags": ["notes"]}, max_content_chars=MAX_CHARS)
    entries.insert(150, big)
    got, plain = _split_both_ways(fmt, entries, limit=4096, existing={"notes-2.md": _entries(3, "old")})
    assert got == plain
    assert got["problems"] == "big"
    # What the continuation held stays there, the moved entries after it.
    assert {"old0000", "old0001", "old0002"} <= set(_ids(fmt, "notes-2.md", got["notes-2.md"]))
    assert not any("old000" in text for rel, text in got.items() if rel != "notes-2.md")


def test_a_document_knows_its_size_as_entries_are_added_and_removed(fmt: str) -> None:
    doc = get_format(fmt).new("Notes")
    assert doc.size() == _bytes(doc)
    for entry in _entries(60):
        doc.add(entry)
        assert doc.size() == _bytes(doc), entry.id
    copy = doc.copy()
    copy.remove_all(["id0059", "id0003", "id0003", "absent"])
    assert copy.size() == _bytes(copy) < _bytes(doc)
    assert "id0003" not in copy.text() and "id0003" in doc.text()
