"""The sync state's index of entries by file (``state.Entries``) agrees with a scan of every entry
after what changes them: stores (into continuation files once a file is full), updates, a retag
forgets emptying a file, hand edits read by a full sync (an entry moved,
one deleted, one added that splits its file), and the state read back from its file and journal."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from engram.engine import Engram
from engram.files import state as sync_state
from engram.files.sync import FileSync

SCOPE_DIR = "agents/default"


def _scanned(entries: sync_state.Entries) -> dict[str, set[str]]:
    by_path: dict[str, set[str]] = defaultdict(set)
    for entry_id, entry in entries.items():
        by_path[entry.path].add(entry_id)
    return dict(by_path)


def _assert_agrees(entries: sync_state.Entries, paths_seen: set[str]) -> dict[str, set[str]]:
    """Every file ever seen in the test (so one emptied since is asked about too) answered as a scan does."""
    by_path = _scanned(entries)
    paths_seen |= set(by_path) | {f"{SCOPE_DIR}/never-written.md"}
    for rel in sorted(paths_seen):
        assert entries.ids_in(rel) == by_path.get(rel, set()), rel
        assert entries.holds(rel) == (rel in by_path), rel
    return by_path


def _kept(syncer: FileSync) -> sync_state.SyncState:
    assert syncer._state is not None  # the state the syncer keeps in memory between passes
    return syncer._state[1]


def _block(text: str, entry_id: str) -> str:
    """An entry's lines in a markdown file: its bullet (holding the id marker) and its sub-bullets."""
    lines = text.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if f"id:{entry_id} " in line)
    end = start + 1
    while end < len(lines) and lines[end].startswith("  "):
        end += 1
    return "".join(lines[start:end])


def test_the_index_by_file_agrees_with_a_scan_after_stores_updates_forgets_splits_and_hand_edits(
    engram: Engram, folder: Path
) -> None:
    syncer = FileSync(engram, folder, max_file_bytes=2048)
    syncer.attach()
    seen: set[str] = set()
    try:
        garden = [engram.remember(f"note number {i} about the garden and its roses", tags="garden").memory
                  for i in range(12)]
        kitchen = engram.remember("a note about the kitchen knives", tags="kitchen").memory
        shed = [engram.remember(f"shed item {i}: a rake and a spade", tags="shed").memory for i in range(3)]
        by_path = _assert_agrees(_kept(syncer).entries, seen)
        assert f"{SCOPE_DIR}/garden-2.md" in by_path  # the quick pass went on in a continuation file

        engram.update(garden[0].id, content="note number 0 about the garden, roses pruned")
        engram.update(garden[1].id, tags="kitchen")
        engram.forget(garden[2].id)
        for memory in shed:
            engram.forget(memory.id)
        by_path = _assert_agrees(_kept(syncer).entries, seen)
        assert f"{SCOPE_DIR}/shed.md" not in by_path and f"{SCOPE_DIR}/shed.md" in seen

        # By hand: the kitchen entry moved into garden-2.md, one garden entry deleted, and a new one
        # written in garden.md, which takes it over files.max_file_bytes.
        kitchen_md, garden_md, garden2_md = (folder / SCOPE_DIR / name for name in ("kitchen.md", "garden.md",
                                                                                   "garden-2.md"))
        moved = _block(kitchen_md.read_text(encoding="utf-8"), kitchen.id)
        kitchen_md.write_text(kitchen_md.read_text(encoding="utf-8").replace(moved, ""), encoding="utf-8")
        garden2_md.write_text(garden2_md.read_text(encoding="utf-8") + moved, encoding="utf-8")
        text = garden_md.read_text(encoding="utf-8").replace(_block(garden_md.read_text(encoding="utf-8"), garden[3].id), "")
        garden_md.write_text(text + "".join(f"- hand-written note {n} about the climbing roses on the south wall\n"
                                            for n in range(3)), encoding="utf-8")
        report = syncer.sync()
        assert not report.problems, report.problems
        by_path = _assert_agrees(_kept(syncer).entries, seen)
        assert garden[3].id not in _kept(syncer).entries
        assert engram.count() == 12 + 1 + 3 - 1 - 3 - 1 + 3
        assert kitchen.id in set().union(*(ids for rel, ids in by_path.items() if rel.startswith(f"{SCOPE_DIR}/garden")))
        hand_written = {m.id for m in engram.list(limit=50) if m.content.startswith("hand-written note")}
        assert len(hand_written) == 3 and hand_written & by_path[f"{SCOPE_DIR}/garden-2.md"]  # split off garden.md
        assert f"{SCOPE_DIR}/kitchen.md" not in by_path  # emptied by hand (its other entry stays in garden.md)

        engram.remember("one more note about the garden and its roses", tags="garden")
        engram.forget(garden[4].id)  # the journal records it removed: the read below replays that
        kept = _kept(syncer)
        _assert_agrees(kept.entries, seen)
        # Read back from the state file and its journal (replayed into the entries): the same entries, indexed alike.
        read, _ = sync_state.read(syncer.folder, kept.format, kept.database, kept.where)
        assert read.entries == kept.entries
        assert _assert_agrees(read.entries, seen) == _scanned(kept.entries)
    finally:
        syncer.detach()
