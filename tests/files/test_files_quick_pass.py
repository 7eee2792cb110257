"""Reflecting engine events in the folder without reading the scope whole (FileSync's quick pass):
concurrent stores each land once, a later full pass finds nothing left to do, files kept parsed
are not parsed again, and a file another syncer rewrote is read again, not overwritten blind."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from engram.engine import Engram
from engram.files import state as sync_state
from engram.files.sync import FileSync
from tests.files.conftest import TwoProcesses


def _all_text(folder: Path) -> str:
    return "".join(p.read_text(encoding="utf-8") for p in sorted(folder.rglob("*")) if p.suffix in (".md", ".yaml"))


def test_concurrent_stores_updates_and_forgets_leave_files_a_full_pass_agrees_with(
    engram: Engram, folder: Path, fmt: str
) -> None:
    syncer = FileSync(engram, folder, format=fmt)
    syncer.attach()
    try:
        stored: dict[str, str] = {}
        errors: list[BaseException] = []

        def client(n: int) -> None:
            try:
                for i in range(8):
                    result = engram.remember(f"client {n} memory {i}", tags="even" if i % 2 == 0 else "odd")
                    stored[result.memory.id] = result.memory.content
            except BaseException as exc:  # reported below: a thread's failure must fail the test
                errors.append(exc)

        threads = [threading.Thread(target=client, args=(n,)) for n in range(12)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not errors and len(stored) == 96
        ids = sorted(stored)
        engram.remember("client 0 memory 0, changed", key=engram.get(ids[0]).key, tags="even")
        engram.forget(ids[1])
        text = _all_text(folder)
        for memory_id, content in stored.items():
            if memory_id == ids[1]:
                assert memory_id not in text
            elif memory_id != ids[0]:
                assert text.count(memory_id) == 1 and content in text, content
        assert "client 0 memory 0, changed" in text and text.count(ids[0]) == 1
        report = syncer.sync()  # reads every file and the whole database
        assert not report.changed and not report.problems, report
    finally:
        syncer.detach()


def test_stores_after_the_first_do_not_parse_the_file_again(
    engram: Engram, folder: Path, fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    syncer = FileSync(engram, folder, format=fmt)
    syncer.attach()
    try:
        engram.remember("the first memory", tags="notes")
        parses: list[str] = []
        parse = syncer.fmt.parse
        monkeypatch.setattr(syncer.fmt, "parse", lambda text, path, **kw: parses.append(path) or parse(text, path, **kw))
        for i in range(5):
            engram.remember(f"memory number {i}", tags="notes")
        assert parses == [], "a store read its file again instead of patching the copy it keeps"
        assert all(f"memory number {i}" in _all_text(folder) for i in range(5))
    finally:
        syncer.detach()


def test_a_file_another_syncer_rewrote_is_read_again(engram: Engram, folder: Path,
                                                     two_processes: TwoProcesses) -> None:
    first = engram.remember("written by this process", tags="notes")
    second = two_processes.other.remember("written by the other process", tags="notes")
    third = engram.remember("written by this process again", tags="notes")
    text = (folder / "agents/default/notes.md").read_text(encoding="utf-8")
    for result in (first, second, third):
        assert text.count(result.memory.id) == 1 and result.memory.content in text
    assert not two_processes.mine.sync().changed


def test_the_state_another_syncer_saved_is_read_again_not_overwritten(engram: Engram,
                                                                      two_processes: TwoProcesses) -> None:
    engram.remember("kept in notes by this process", tags="notes")
    theirs_memory = two_processes.other.remember("kept in facts by the other", tags="facts").memory
    engram.remember("notes again, by this process", tags="notes")  # its file is unchanged: quick pass
    mine = two_processes.mine
    state = sync_state.load(mine.folder, "markdown", mine._database_identity())
    # A state kept from before the other process saved would drop its entry here, and a later
    # removal of that entry from its file would then read as a new entry, not a forget.
    assert state.entries[theirs_memory.id].path == "agents/default/facts.md"


def test_a_hand_edit_of_a_file_a_store_touches_reaches_the_database_first(
    engram: Engram, syncer: FileSync, folder: Path
) -> None:
    edited = engram.remember("tea at four", tags="notes").memory
    engram.remember("coffee at nine", tags="notes")  # the file is kept parsed from here on
    notes = folder / "agents/default/notes.md"
    notes.write_text(notes.read_text(encoding="utf-8").replace("- tea at four (", "- green tea at four ("),
                     encoding="utf-8")
    added = engram.remember("lunch at noon", tags="notes").memory
    assert engram.get(edited.id).content == "green tea at four"  # not overwritten with the kept copy
    text = notes.read_text(encoding="utf-8")
    assert "green tea at four" in text and added.id in text and "coffee at nine" in text
    assert not syncer.sync().changed


def test_an_older_state_beside_newer_files_loses_nothing(engram: Engram, folder: Path, fmt: str) -> None:
    """The sync state is written without waiting for the disk (``files.state.save``), after the
    memory files, which are: a power loss may bring back an older state beside newer files, never
    the reverse. Read against the older state, what files and database hold alike stays as it is,
    and an entry the database changed again after its file was written keeps the database's text
    (its earlier file text set aside as a conflict)."""
    syncer = FileSync(engram, folder, format=fmt)
    syncer.attach()
    try:
        kept = engram.remember("kept as it was", key="kept").memory
        edited = engram.remember("before the edit", key="edited").memory
        gone = engram.remember("to be forgotten", key="gone").memory
        again = engram.remember("changed twice", key="again").memory
        state_files = [folder / ".engram-sync.json", folder / ".engram-sync.journal"]
        older = [path.read_bytes() for path in state_files]
        engram.remember("after the edit", key="edited")
        engram.forget(gone.id)
        added = engram.remember("stored after the state", key="added").memory
        engram.remember("changed twice, once", key="again")
        assert "to be forgotten" not in _all_text(folder)
        syncer.detach()  # the database moves on without its file: the pass that would follow is lost
        engram.remember("changed twice, twice", key="again")
        for path, text in zip(state_files, older, strict=True):
            path.write_bytes(text)

        report = syncer.sync()
        assert not report.db_created and not report.db_updated and not report.db_forgotten, report
        assert len(report.conflicts) == 1 and again.id in report.conflicts[0]
        by_key = {m.key: m.content for m in engram.list(limit=100)}
        assert by_key == {"kept": "kept as it was", "edited": "after the edit", "added": "stored after the state",
                          "again": "changed twice, twice"}
        text = _all_text(folder)
        assert gone.id not in text and "to be forgotten" not in text
        for memory in (kept, edited, added, again):
            assert text.count(memory.id) == 1
        assert "changed twice, twice" in text and "after the edit" in text
        assert not syncer.sync().changed  # and the pass after that finds the two sides agreeing
    finally:
        syncer.detach()


def test_a_quick_pass_that_gives_up_leaves_the_state_as_it_was(engram: Engram, folder: Path) -> None:
    syncer = FileSync(engram, folder)
    syncer.attach()
    first = engram.remember("first, in notes", tags="notes").memory
    second = engram.remember("second, in facts", tags="facts").memory
    syncer.detach()
    engram.remember("first, changed", key=first.key, tags="notes")
    engram.remember("second, changed", key=second.key, tags="facts")
    facts = folder / "agents/default/facts.md"
    facts.write_text(facts.read_text(encoding="utf-8") + "- added by hand\n", encoding="utf-8")
    st, _ = syncer._load_state()
    entries, files = dict(st.entries), dict(st.files)
    # The first entry's file is as the last pass left it, the second's was edited: the pass changes
    # the first entry's record, then gives up at the second, and must put the first one back.
    assert syncer._reflect_quickly(first.scope, {first.id, second.id}, st) is None
    assert (st.entries, st.files) == (entries, files)
    report = syncer.sync()
    assert report.db_created == 1 and not report.conflicts, report
    text = _all_text(folder)
    assert "first, changed" in text and "second, changed" in text and "added by hand" in text


def test_stores_into_a_full_file_go_to_its_continuation_files_without_a_full_pass(
    engram: Engram, folder: Path, fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A file at files.max_file_bytes sent every later store to the full pass (the whole scope read,
    # files and database: ~0.18 s of CPU a store at 21,000 memories). New entries now go to the
    # first continuation file with room, as the full pass's split would put them.
    syncer = FileSync(engram, folder, format=fmt, max_file_bytes=2048)
    full_passes: list[object] = []
    sync = syncer.sync
    monkeypatch.setattr(syncer, "sync", lambda scopes=None: full_passes.append(scopes) or sync(scopes))
    syncer.attach()
    try:
        padding = "padding words " * 5 + "padding words"
        stored = [engram.remember(f"memory {i:02d} " + padding, tags="notes").memory for i in range(30)]
        batched = [{"content": f"batched {i:02d} " + "padding words " * 5 + "padding words", "tags": ["notes"]}
                   for i in range(12)]
        stored += [r.memory for r in engram.remember_many(batched)]
        assert full_passes == []
        files = sorted(p for p in (folder / "agents/default").iterdir() if not p.name.startswith("."))
        assert len(files) >= 4 and all(p.stat().st_size <= 2048 for p in files), [(p.name, p.stat().st_size)
                                                                                 for p in files]
        text = _all_text(folder)
        assert all(text.count(m.id) == 1 and m.content in text for m in stored)
        report = syncer.sync()  # reads every file and the whole database
        assert not report.changed and not report.problems, report
    finally:
        syncer.detach()


def test_a_store_beside_a_full_file_hashes_only_the_file_it_changed(
    engram: Engram, folder: Path, fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The quick pass hashed every file it had read, the full one a new entry skipped included
    # (~2.5 ms a store for a 5 MB file). A file it left as the last pass did keeps its recorded
    # hash: the state must still name each file's text, so a later hand edit is still seen.
    from engram.files import paths

    syncer = FileSync(engram, folder, format=fmt, max_file_bytes=2048)
    syncer.attach()
    try:
        for i in range(30):
            engram.remember(f"memory {i:02d} " + "padding words " * 5 + "padding words", tags="notes")
        hashed: list[str] = []  # the text each hash read, whole or only what was added to it
        init, grown = paths.RunningHash.__init__, paths.RunningHash.grown
        monkeypatch.setattr(paths.RunningHash, "__init__", lambda self, text: init(self, text) or hashed.append(text))
        monkeypatch.setattr(paths.RunningHash, "grown", lambda self, tail: hashed.append(tail) or grown(self, tail))
        added = engram.remember("one more beside the full files " + "padding words " * 5 + "padding words", tags="notes").memory
        scope_dir = folder / "agents/default"
        holding = [p for p in scope_dir.iterdir() if added.id in p.read_text(encoding="utf-8")]
        assert len(holding) == 1
        # Only the file the entry went to: the text it got, or its whole text when it was made.
        hashed = [text for text in hashed if text]  # (a grown hash starts from an empty one)
        assert len(hashed) == 1 and added.id in hashed[0]
        assert holding[0].read_text(encoding="utf-8").endswith(hashed[0])
        st = sync_state.load(syncer.folder, syncer.fmt.name, syncer._database_identity())
        for path in sorted(p for p in scope_dir.iterdir() if not p.name.startswith(".")):
            rel = path.relative_to(folder).as_posix()
            assert st.files[rel] == paths.text_hash(path.read_text(encoding="utf-8")), rel
        first = sorted(p for p in scope_dir.iterdir() if not p.name.startswith("."))[0]
        edited = next(m for m in engram.list(limit=100) if m.id in first.read_text(encoding="utf-8"))
        first.write_text(first.read_text(encoding="utf-8").replace(edited.content, "edited by hand"),
                         encoding="utf-8")
        engram.remember("a store after the hand edit", tags="notes")
        assert engram.get(edited.id).content == "edited by hand"
        assert not syncer.sync().changed
    finally:
        syncer.detach()


def test_files_kept_parsed_stay_within_their_bound_and_files_let_go_sync_alike(
    engram: Engram, folder: Path, fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every file a quick pass touched stayed parsed for the process's life, ~1 KB per memory (over
    # a gigabyte in a server of a million memories). Now the least recently used are let go past
    # KEPT_FILES files of files.max_file_bytes, and one let go is read again when next needed:
    # stores, updates and forgets land as before, with no full pass, and a full pass agrees.
    syncer = FileSync(engram, folder, format=fmt, max_file_bytes=2048)
    kept = syncer._quick.parsed
    full_passes: list[object] = []
    sync = syncer.sync
    monkeypatch.setattr(syncer, "sync", lambda scopes=None: full_passes.append(scopes) or sync(scopes))
    syncer.attach()
    try:
        padding = "padding words " * 4 + "padding words"  # (a YAML line longer than ~100 is folded)
        notes = [engram.remember(f"note {i:02d} " + padding, tags="notes").memory for i in range(30)]
        others = [engram.remember(f"other {i:02d} " + padding, tags=f"topic{i % 10}").memory for i in range(30)]
        scope_dir = folder / "agents/default"
        files = sorted(p for p in scope_dir.iterdir() if not p.name.startswith("."))
        assert len(files) >= 14 and sum(p.stat().st_size for p in files) > kept.max_chars
        assert 0 < kept.chars <= kept.max_chars and len(kept) < len(files)
        note_parts = sorted((p for p in files if p.name.startswith("notes")), key=lambda p: p.stat().st_size)
        assert len(note_parts) >= 4 and not any(p.relative_to(folder).as_posix() in kept for p in note_parts)

        # A store into the notes walks past its full files, let go, without parsing them again.
        parses: list[str] = []
        parse = syncer.fmt.parse
        monkeypatch.setattr(syncer.fmt, "parse", lambda text, path, **kw: parses.append(path) or parse(text, path, **kw))
        added = engram.remember("note added later " + padding, tags="notes").memory
        holding = [p for p in scope_dir.iterdir() if added.id in p.read_text(encoding="utf-8")]
        assert len(holding) == 1 and holding[0].stat().st_size <= 2048
        assert set(parses) <= {holding[0].relative_to(folder).as_posix()}, parses

        # Files let go are read again for an update and a forget of the entries they hold.
        changed = engram.remember("note 00, changed " + padding, key=notes[0].key, tags="notes").memory
        engram.forget(notes[1].id)
        engram.remember("other 00, changed " + padding, key=others[0].key, tags="topic0")
        engram.forget(others[1].id)
        assert full_passes == [] and kept.chars <= kept.max_chars
        text = _all_text(folder)
        assert changed.id == notes[0].id and text.count(notes[0].id) == 1 and "note 00, changed" in text
        assert notes[1].id not in text and others[1].id not in text and "other 00, changed" in text
        for memory in notes[2:] + others[2:] + [added]:
            assert text.count(memory.id) == 1 and memory.content in text, memory.content

        # A file let go and then edited by hand is seen as such: the store touching it brings the
        # edit to the database first (a full pass over the scope), as with a file kept.
        let_go = next(p for p in sorted(scope_dir.iterdir()) if p.relative_to(folder).as_posix() not in kept
                      and p.name.startswith("notes"))
        edited, touched = [m for m in notes[2:] if m.id in let_go.read_text(encoding="utf-8")][:2]
        let_go.write_text(let_go.read_text(encoding="utf-8").replace(edited.content, "edited by hand"),
                          encoding="utf-8")
        engram.remember(touched.content + ", changed", key=touched.key, tags="notes")
        assert engram.get(edited.id).content == "edited by hand" and len(full_passes) == 1
        assert engram.get(touched.id).content.endswith(", changed")
        report = syncer.sync()  # reads every file and the whole database
        assert not report.changed and not report.problems, report
        assert all(p.stat().st_size <= 2048 for p in scope_dir.iterdir() if not p.name.startswith("."))
    finally:
        syncer.detach()
