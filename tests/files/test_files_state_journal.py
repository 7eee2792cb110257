"""The sync state's journal (``engram.files.state``): a store appends the entries it changed
instead of rewriting the state whole; a later reader replays it; it is folded into the state once
it outgrows it; a line cut short, or a journal left by an earlier state, is never applied."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.engine import Engram
from engram.files import state as sync_state
from engram.files.paths import Folder
from engram.files.sync import FileSync
from tests.files.conftest import TwoProcesses


def _load(syncer: FileSync) -> sync_state.SyncState:
    return sync_state.load(syncer.folder, syncer.fmt.name, syncer._database_identity())


def test_stores_append_to_the_journal_and_a_fresh_reader_sees_every_entry(engram: Engram, syncer: FileSync,
                                                                          folder: Path) -> None:
    first = engram.remember("the first memory", tags="notes").memory  # a full write: nothing kept yet
    state_file = folder / sync_state.STATE_FILE
    before = state_file.stat()
    later = [engram.remember(f"memory {i}", tags="notes" if i % 2 else "facts").memory for i in range(6)]
    engram.forget(later[0].id)
    engram.remember("memory 1, changed", key=later[1].key, tags="notes")
    after = state_file.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (before.st_ino, before.st_size, before.st_mtime_ns)
    lines = (folder / sync_state.JOURNAL_FILE).read_text(encoding="ascii").splitlines()
    announced = [line for line in lines if line.startswith('{"a":')]
    assert len(lines) - len(announced) == 9  # header + 8 passes
    assert len(announced) == 5  # each entry added to an existing file: its append, announced first
    replayed = _load(syncer)
    assert set(replayed.entries) == {first.id, *(m.id for m in later[1:])}
    assert replayed.entries[later[2].id].path == "agents/default/facts.md"
    assert replayed.entries[later[1].id] == syncer._state[1].entries[later[1].id]
    assert replayed.files == syncer._state[1].files
    assert not syncer.sync().changed  # a full pass reading the replayed state finds both sides agreeing


def test_the_journal_is_folded_into_the_state_once_it_outgrows_it(engram: Engram, syncer: FileSync, folder: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sync_state, "JOURNAL_MIN_BYTES", 0)
    stored = [engram.remember(f"memory number {i}", tags="notes").memory.id for i in range(40)]
    journal = (folder / sync_state.JOURNAL_FILE).stat().st_size
    assert journal <= (folder / sync_state.STATE_FILE).stat().st_size  # folded, not grown without bound
    assert set(_load(syncer).entries) == set(stored)


def test_a_line_cut_short_and_a_journal_of_an_earlier_state_are_not_applied(tmp_path: Path) -> None:
    folder = Folder(tmp_path)
    st = sync_state.SyncState("markdown", "db", {"a": sync_state.EntryState("x.md", "h1")}, {"x.md": "f1"})
    written = sync_state.save(folder, st)
    st.entries["b"] = sync_state.EntryState("x.md", "h2")
    st.files["x.md"] = "f2"
    written = sync_state.append(folder, st, written, ["b"], ["x.md"])
    del st.entries["a"]
    sync_state.append(folder, st, written, ["a"], [])
    assert set(sync_state.load(folder, "markdown", "db").entries) == {"b"}

    journal = tmp_path / sync_state.JOURNAL_FILE
    whole = journal.read_bytes()
    journal.write_bytes(whole[:-5])  # a crash cut the last append short: the line before it stands
    loaded = sync_state.load(folder, "markdown", "db")
    assert set(loaded.entries) == {"a", "b"} and loaded.files == {"x.md": "f2"}

    journal.write_bytes(whole)
    earlier = journal.read_bytes()
    sync_state.save(folder, sync_state.SyncState("markdown", "db", {"c": sync_state.EntryState("y.md", "h3")}))
    journal.write_bytes(earlier)  # the new state beside the journal of the one before (a crash between)
    assert set(sync_state.load(folder, "markdown", "db").entries) == {"c"}


def test_a_journal_another_process_appended_to_is_read_again(engram: Engram,
                                                             two_processes: TwoProcesses) -> None:
    other = two_processes.other
    kept = [engram.remember("mine, first", tags="notes").memory.id,
            other.remember("theirs, first", tags="facts").memory.id]
    for i in range(3):  # both keep the state and append to the one journal, in turns
        kept.append(engram.remember(f"mine {i}", tags="notes").memory.id)
        kept.append(other.remember(f"theirs {i}", tags="facts").memory.id)
    assert set(_load(two_processes.mine).entries) == set(kept)
    assert not two_processes.mine.sync().changed and not two_processes.theirs.sync().changed


def test_a_new_syncer_appends_to_a_whole_journal_and_rewrites_after_one_cut_short(engram: Engram,
                                                                                   folder: Path) -> None:
    """A process that starts (``engram remember`` from the shell) reads the state and appends its
    change to the journal it read whole; after a line cut short it writes the state afresh
    (a line appended after the cut would never be read)."""
    first = FileSync(engram, folder)
    first.attach()
    engram.remember("stored by the first process", tags="notes")
    first.detach()
    state_file, journal = folder / sync_state.STATE_FILE, folder / sync_state.JOURNAL_FILE
    inode = state_file.stat().st_ino

    second = FileSync(engram, folder)  # another process: nothing kept in memory
    second.attach()
    kept = engram.remember("stored by the second process", tags="notes").memory
    second.detach()
    assert state_file.stat().st_ino == inode  # appended, not rewritten
    assert kept.id in journal.read_text(encoding="ascii")

    journal.write_bytes(journal.read_bytes()[:-3])  # a crash cut its last line short
    third = FileSync(engram, folder)
    third.attach()
    last = engram.remember("stored by the third process", tags="notes").memory
    third.detach()
    assert state_file.stat().st_ino != inode  # written afresh
    assert set(_load(third).entries) >= {kept.id, last.id}
    assert not third.sync().changed
