"""Agent and session names as folder names: two agents whose names differ only in case get two
folders on every file system, adapters' ``a:b`` names are folders Windows can hold, and folders an
earlier version named with the names as they are move to the new names without a memory lost,
repeated or set in conflict."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from engram.engine import Engram
from engram.files import folder_names, layout
from engram.files.sync import FileSync
from engram.model import Scope


def _state(folder: Path, name: str = ".engram-sync.json") -> dict:
    return json.loads((folder / name).read_text(encoding="utf-8"))


def _memories(engram: Engram) -> dict[str, tuple[Scope, str]]:
    return {m.id: (m.scope, m.content) for m in engram.store.iter_all()}


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _drop(path: Path, content: str) -> None:
    """Take the entry ``content`` (its bullet and its tags line) out of the file."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"- {content}"))
    path.write_text("\n".join(lines[:start] + lines[start + 2:]) + "\n", encoding="utf-8")


def _names_as_is(monkeypatch: pytest.MonkeyPatch) -> None:
    """Folders named as earlier versions named them (the names as they are)."""
    named = layout.Layout.scope_dir
    monkeypatch.setattr(layout.Layout, "scope_dir", lambda self, scope, as_is=False: named(self, scope, as_is=True))


def test_agents_whose_names_differ_in_case_keep_apart_both_ways(engram: Engram, syncer: FileSync, folder: Path) -> None:
    upper = engram.for_agent("Alice").remember("Alice likes green tea", tags="notes").memory
    lower = engram.for_agent("alice").remember("alice likes black coffee", tags="notes").memory
    report = syncer.sync()
    assert not report.conflicts and not report.problems
    agents = sorted(p.name for p in (folder / "agents").iterdir())
    assert agents == ["!alice", "alice"]
    assert len({name.casefold() for name in agents}) == 2  # two folders on a case-insensitive disk too
    upper_file, lower_file = folder / "agents/!alice/notes.md", folder / "agents/alice/notes.md"
    assert "green tea" in upper_file.read_text() and "coffee" not in upper_file.read_text()
    assert "coffee" in lower_file.read_text() and "green tea" not in lower_file.read_text()

    _edit(upper_file, "green tea", "jasmine tea")
    _edit(lower_file, "black coffee", "espresso")
    report = syncer.sync()
    assert (report.db_updated, report.db_created, report.db_forgotten) == (2, 0, 0) and not report.conflicts
    assert engram.store.get_many([upper.id])[0].content == "Alice likes jasmine tea"
    assert engram.store.get_many([lower.id])[0].content == "alice likes espresso"
    assert {scope.agent for scope, _ in _memories(engram).values()} == {"Alice", "alice"}
    assert len(_memories(engram)) == 2


def test_adapter_agents_and_sessions_get_folders_without_colons(engram: Engram, syncer: FileSync, folder: Path) -> None:
    engram.for_agent("adk:app:u1").remember("The user writes Go", tags="notes")
    engram.for_agent("adk:app:u1", "Chat:7").remember("Asked about channels", tags="notes", scope="session")
    engram.for_agent("bob", "S1").remember("bob's upper session", tags="notes", scope="session")
    engram.for_agent("bob", "s1").remember("bob's lower session", tags="notes", scope="session")
    syncer.sync()
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.md"))
    assert files == ["agents/adk+app+u1/notes.md", "sessions/adk+app+u1/!chat+7/notes.md",
                     "sessions/bob/!s1/notes.md", "sessions/bob/s1/notes.md"]
    assert not any(":" in f for f in files)
    _edit(folder / "sessions/adk+app+u1/!chat+7/notes.md", "channels", "select")
    _edit(folder / "sessions/bob/!s1/notes.md", "upper session", "UPPER session")
    report = syncer.sync()
    assert report.db_updated == 2 and not report.conflicts and not report.problems
    by_content = {content: scope for scope, content in _memories(engram).values()}
    assert by_content["Asked about select"] == Scope("adk:app:u1", "Chat:7")
    assert by_content["bob's UPPER session"] == Scope("bob", "S1")
    assert by_content["bob's lower session"] == Scope("bob", "s1")


def _old_folder(engram: Engram, folder: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, tuple[Scope, str]]:
    """A folder synced by an earlier version: names as they are, the last stores in the journal."""
    with monkeypatch.context() as patch:
        _names_as_is(patch)
        old = FileSync(engram, folder)
        old.attach()
        engram.for_agent("Claude").remember("Claude prefers tabs", tags="style")
        engram.for_agent("Claude", "S1").remember("Reviewing the parser", tags="work", scope="session")
        engram.for_agent("adk:app:u1").remember("The user writes Go", tags="notes")
        engram.for_agent("bob").remember("bob keeps his own folder", tags="notes")
        old.sync()
        # After the full pass: these reach the folder by the quick pass, recorded in the journal.
        engram.for_agent("Claude").remember("Claude uses ruff", tags="style")
        engram.for_agent("adk:app:u1", "Q").remember("Asked about generics", tags="notes", scope="session")
        old.detach()
    journal = (folder / ".engram-sync.journal").read_text()
    assert "Claude uses ruff" not in journal and len(journal.splitlines()) > 1  # the quick pass's lines
    assert (folder / "agents/Claude/style.md").is_file() and (folder / "agents/adk:app:u1/notes.md").is_file()
    assert (folder / "sessions/adk:app:u1/Q/notes.md").is_file()
    return _memories(engram)


def test_an_earlier_versions_folder_moves_to_the_new_names(engram: Engram, folder: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    before = _old_folder(engram, folder, monkeypatch)
    _edit(folder / "agents/Claude/style.md", "Claude prefers tabs", "Claude prefers spaces")
    _edit(folder / "sessions/adk:app:u1/Q/notes.md", "generics", "iterators")
    _drop(folder / "agents/bob/notes.md", "bob keeps his own folder")
    _drop(folder / "agents/adk:app:u1/notes.md", "The user writes Go")

    report = FileSync(engram, folder).sync()

    assert not report.conflicts and not report.problems and report.db_created == 0
    assert (report.db_updated, report.db_forgotten) == (2, 2)
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.md"))
    assert files == ["agents/!claude/style.md", "agents/adk+app+u1/notes.md", "agents/bob/notes.md",
                     "sessions/!claude/!s1/work.md", "sessions/adk+app+u1/!q/notes.md"]
    assert not list(folder.rglob("*.conflict"))
    after = _memories(engram)
    dropped = {i for i, (_, content) in before.items() if content in ("bob keeps his own folder", "The user writes Go")}
    assert len(dropped) == 2 and set(after) == set(before) - dropped
    before = {i: m for i, m in before.items() if i not in dropped}
    assert {i: s for i, (s, _) in after.items()} == {i: s for i, (s, _) in before.items()}
    contents = {c for _, c in after.values()}
    assert {"Claude prefers spaces", "Asked about iterators", "Claude uses ruff"} <= contents
    state = _state(folder)
    assert {path for path, *_ in state["entries"].values()} == set(files) - {"agents/adk+app+u1/notes.md",
                                                                            "agents/bob/notes.md"}
    assert set(state["files"]) == set(files)
    assert set(state["entries"]) == set(after)
    # And the next pass finds nothing to do.
    again = FileSync(engram, folder).sync()
    assert not again.changed and not again.problems


def test_a_crash_between_the_state_and_the_rename_is_healed(engram: Engram, folder: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    before = _old_folder(engram, folder, monkeypatch)

    class Crash(BaseException):
        pass

    def crash(*args: object) -> None:
        raise Crash

    with monkeypatch.context() as patch:
        patch.setattr(folder_names.os, "rename", crash)
        with pytest.raises(Crash):
            FileSync(engram, folder).sync()
    # The state names the new folders; the old ones are still there.
    assert all(not path.startswith("agents/Claude/") for path, *_ in _state(folder)["entries"].values())
    assert (folder / "agents/Claude").is_dir() and not (folder / "agents/!claude").exists()

    # A store first (the quick pass): it must not start a second folder of the scope.
    syncer = FileSync(engram, folder)
    syncer.attach()
    try:
        new = engram.for_agent("Claude").remember("Claude writes docstrings", tags="style").memory
    finally:
        syncer.detach()
    assert not (folder / "agents/Claude").exists()
    assert "Claude writes docstrings" in (folder / "agents/!claude/style.md").read_text()

    report = FileSync(engram, folder).sync()
    assert not report.changed and not report.problems
    assert set(_memories(engram)) == set(before) | {new.id}
    assert not list(folder.rglob("*.conflict"))
    assert not [p for p in folder.rglob("*") if p.is_dir() and p.name in ("Claude", "adk:app:u1", "S1", "Q")]


def test_a_folder_made_by_hand_under_the_name_as_it_is_is_read(engram: Engram, syncer: FileSync, folder: Path) -> None:
    (folder / "agents/Claude").mkdir(parents=True)
    (folder / "agents/Claude/notes.md").write_text("# Notes\n\n- Claude answers in French\n", encoding="utf-8")
    # A store for Claude before any pass read the folder: its folder is renamed before it is written
    # to, not made a second time beside the hand-made one.
    engram.for_agent("Claude").remember("Claude keeps answers short", tags="style")
    assert not (folder / "agents/Claude").exists()
    report = syncer.sync()
    assert not report.changed and not report.problems
    assert sorted(_memories(engram).values()) == [(Scope("Claude"), "Claude answers in French"),
                                                  (Scope("Claude"), "Claude keeps answers short")]
    assert "Claude answers in French" in (folder / "agents/!claude/notes.md").read_text()
    assert "Claude keeps answers short" in (folder / "agents/!claude/style.md").read_text()


def test_both_folders_of_one_agent_the_old_one_is_reported_not_read(engram: Engram, syncer: FileSync,
                                                                    folder: Path) -> None:
    for name, text in (("Claude", "from the old folder"), ("!claude", "from the new folder")):
        (folder / "agents" / name).mkdir(parents=True)
        (folder / "agents" / name / "notes.md").write_text(f"# Notes\n\n- {text}\n", encoding="utf-8")
    report = syncer.sync()
    assert [m[1] for m in _memories(engram).values()] == ["from the new folder"]
    [problem] = report.problems
    assert problem.path == "agents/Claude/notes.md"
    assert "agents/!claude/" in problem.message and "move" in problem.message
    assert "- from the old folder" in (folder / "agents/Claude/notes.md").read_text()  # left as it was


def test_a_folder_that_cannot_be_renamed_is_left_out_and_reported(engram: Engram, folder: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    before = _old_folder(engram, folder, monkeypatch)
    engram.for_agent("Claude").remember("Claude changed in the database meanwhile", tags="style")

    def refuse(*args: object) -> None:
        raise PermissionError("read-only")

    with monkeypatch.context() as patch:
        patch.setattr(folder_names.os, "rename", refuse)
        report = FileSync(engram, folder).sync()
    assert any("not renamed" in p.message and p.path == "agents/Claude/" for p in report.problems)
    assert not report.conflicts and report.db_forgotten == 0
    assert not (folder / "agents/!claude").exists()  # no second folder of the scope
    assert all(path.startswith(("agents/Claude/", "agents/bob/", "agents/adk:app:u1/", "sessions/"))
               for path, *_ in _state(folder)["entries"].values())
    report = FileSync(engram, folder).sync()
    assert not report.conflicts and not report.problems and report.db_forgotten == 0
    assert "meanwhile" in (folder / "agents/!claude/style.md").read_text()
    assert set(before) <= set(_memories(engram))


def test_per_agent_state_files_are_named_portably_and_moved_from_the_old_names(engram: Engram, folder: Path) -> None:
    claude = FileSync(engram, folder, database_agent="Claude")
    claude.attach()
    try:
        engram.for_agent("Claude").remember("Claude prefers tabs", tags="style")
        gone = engram.for_agent("Claude").remember("Claude once liked vim", tags="style").memory
        claude.sync()
    finally:
        claude.detach()
    adk = FileSync(engram, folder, database_agent="adk:app:u1")
    adk.sync()
    dot_files = {p.name for p in folder.iterdir() if p.name.startswith(".engram-sync.")}
    assert {".engram-sync.!claude.json", ".engram-sync.!claude.journal",
            ".engram-sync.adk+app+u1.json", ".engram-sync.adk+app+u1.journal"} <= dot_files
    # As an earlier version named them.
    for kind in ("json", "journal"):
        os.rename(folder / f".engram-sync.!claude.{kind}", folder / f".engram-sync.Claude.{kind}")
    _drop(folder / "agents/!claude/style.md", "Claude once liked vim")
    report = FileSync(engram, folder, database_agent="Claude").sync()
    # Forgotten, not put back: the state recorded it, so its removal from the file is one.
    assert report.db_forgotten == 1 and not report.conflicts
    assert engram.store.get_many([gone.id]) == []
    names = {p.name for p in folder.iterdir() if p.name.startswith(".engram-sync.")}
    assert ".engram-sync.!claude.json" in names and ".engram-sync.Claude.json" not in names
    assert ".engram-sync.Claude.journal" not in names


def test_clawcode_session_folders_of_an_agent_named_with_capitals(engram: Engram, folder: Path) -> None:
    claude = engram.for_agent("Claude")
    syncer = FileSync(claude, folder, session_folders="session")
    claude.for_agent("Claude", "Chat1").remember("Talked about parsers", tags="notes", scope="session")
    (folder / "sessions/!claude/s2").mkdir(parents=True)
    (folder / "sessions/!claude/s2/notes.md").write_text("# Notes\n\n- one level too deep\n", encoding="utf-8")
    report = syncer.sync()
    assert (folder / "sessions/!chat1/notes.md").is_file()
    # sessions/!claude/ stands for the owner Claude, whose sessions sit in sessions/<session>/.
    [problem] = report.problems
    assert problem.path == "sessions/!claude/s2/notes.md" and "sessions/<session>/" in problem.message
    assert [content for _, content in _memories(engram).values()] == ["Talked about parsers"]


def test_an_upgraded_home_with_per_agent_databases_syncs_without_conflicts(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """All three moves at once, as an upgrade meets them: the agent's database folder, its sync
    state files and its memory folder. The state was recorded against the database where it was;
    the same file in its renamed folder is still that database, so a change on the database side
    since is an update of the file, not a conflict with it."""
    from engram.config import Settings, load_settings
    from engram.files.wiring import attach_from_settings

    def opened() -> tuple[Engram, FileSync]:
        engram = Engram.from_settings(load_settings(home=tmp_path, agent="Claude", per_agent_databases=True), mirror=False)
        syncer = attach_from_settings(engram, engram.settings)
        assert syncer is not None
        return engram, syncer

    with monkeypatch.context() as earlier:  # the names as they are, as earlier versions wrote them
        earlier.setattr(Settings, "agent_folder", lambda self, agent=None: self.home / "agents" / (agent or self.agent))
        _names_as_is(earlier)
        engram, syncer = opened()
        kept = engram.remember("Claude keeps bees on the roof", tags="bees").memory
        syncer.sync()
        syncer.detach()
        engram.close()
    memory = tmp_path / "memory"
    for kind in ("json", "journal"):
        os.rename(memory / f".engram-sync.!claude.{kind}", memory / f".engram-sync.Claude.{kind}")
    assert (tmp_path / "agents/Claude/memory.db").is_file() and (memory / "agents/Claude/bees.md").is_file()

    engram, syncer = opened()
    try:
        engram.update(kept.id, importance=0.9)  # the database side changes; the file does not
        report = syncer.sync()
    finally:
        syncer.detach()
        engram.close()
    assert not report.conflicts and not report.problems, (report.conflicts, report.problems)
    assert sorted(os.listdir(tmp_path / "agents")) == ["!claude"]
    assert os.listdir(memory / "agents") == ["!claude"]
    assert not list(memory.rglob("*.conflict"))
    assert "importance: 0.9" in (memory / "agents/!claude/bees.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(("recorded", "current", "same"), [
    ("sqlite:/h/memory.db:41", "sqlite:/h/memory.db:41", True),
    ("sqlite:/h/agents/Claude/memory.db:41", "sqlite:/h/agents/!claude/memory.db:41", True),  # the folder renamed
    ("sqlite:/h/agents/adk:app:u1/memory.db:41", "sqlite:/h/agents/adk+app+u1/memory.db:41", True),
    ("sqlite:/h/memory.db:41", "sqlite:/h/memory.db:42", False),  # a new file in the same place
    ("jsonfile:/h/memory.json:41", "sqlite:/h/memory.db:41", False),
    ("postgres:db@host/a:", "postgres:db@host/b:", False),  # no inode: the location decides
    ("", "sqlite:/h/memory.db:41", False),
])
def test_the_state_follows_its_database_file_when_moved_not_when_replaced(recorded: str, current: str, same: bool) -> None:
    from engram.files.state import same_database

    assert same_database(recorded, current) is same


def test_an_agent_whose_name_cannot_be_a_folder_is_left_out_not_every_agent(engram: Engram, syncer: FileSync,
                                                                           folder: Path) -> None:
    """A valid name of 128 capitals is 256 characters written portably, past a file name's 255: that
    agent's memories stay in the database, reported, and every other agent's folder syncs."""
    long_name = "A" * 128
    kept = engram.for_agent(long_name).remember("a fact of the long-named agent").memory
    engram.remember("a fact of the default agent", tags="facts")
    report = syncer.sync()
    assert [p.message for p in report.problems] == [
        f"agent:{long_name} is not mirrored in the memory folder: agent: \"{long_name}\" is too long to name a "
        "folder once each capital is written as !x (allowed: at most 255 characters so written)"]
    assert os.listdir(folder / "agents") == ["default"]
    assert "a fact of the default agent" in (folder / "agents/default/facts.md").read_text(encoding="utf-8")
    assert engram.store.get_many([kept.id])[0].content == "a fact of the long-named agent"


def test_a_tag_named_as_a_windows_device_gets_a_file_windows_can_hold(engram: Engram, syncer: FileSync,
                                                                      folder: Path) -> None:
    # A memory's file is named by its first tag; on Windows nul.md is the NUL device whatever its
    # extension (it takes every write and keeps nothing), and con.md, aux.md, com1.md are devices too.
    for tag in ("nul", "CON", "Aux", "com1", "lpt9", "prn"):
        engram.remember(f"A note filed under {tag}", tags=tag)
    engram.remember("A note filed under console", tags="console")
    syncer.sync()
    files = sorted(p.name for p in (folder / "agents/default").glob("*.md"))
    assert files == ["aux-tag.md", "com1-tag.md", "con-tag.md", "console.md", "lpt9-tag.md", "nul-tag.md", "prn-tag.md"]
    _edit(folder / "agents/default/nul-tag.md", "filed under nul", "filed under null")
    report = syncer.sync()
    assert report.db_updated == 1 and not report.problems
    assert "A note filed under null" in {content for _, content in _memories(engram).values()}
