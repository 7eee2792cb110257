"""The operator's `engram sync` / `watch` in a home with one database per agent: every agent's
folder is settled in that agent's own database, global/ in each, and the report covers them all.
Review: they synced only the database the run opened (the default agent's, or ENGRAM_AGENT's with
--all-agents), so a hand edit of agents/bob/ reached no database and the report said 0 updated."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from engram.files.sync import wait_for
from engram.files.watcher import Watcher
from engram.root import build_engram, load_settings
from tests.cli_in_process import cli_output
from tests.files.conftest import entry_block

OPERATOR = [pytest.param((), None, id="no-agent"), pytest.param(("--all-agents",), {"ENGRAM_AGENT": "alice"}, id="all-agents")]


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("ENGRAM_PER_AGENT_DATABASES", "true")
    monkeypatch.setenv("ENGRAM_EMBEDDINGS__PROVIDER", "none")
    monkeypatch.delenv("ENGRAM_AGENT", raising=False)
    return tmp_path / "home"


def _contents(home: Path, agent: str) -> dict[str, str]:
    """Every memory in ``agent``'s own database, key -> content, whatever its scope."""
    path = home / "agents" / agent / "memory.db"
    if not path.is_file():
        return {}
    with sqlite3.connect(path) as db:
        return dict(db.execute("SELECT key, content FROM memories"))


def _two_agents_edited_by_hand(home: Path) -> None:
    """alice and bob each with a memory mirrored to the folder, then both files edited by hand."""
    cli_output(home, "--agent", "alice", "remember", "alice likes tea", "--key", "tea", "--tags", "drinks")
    cli_output(home, "--agent", "bob", "remember", "bob likes coffee", "--key", "coffee", "--tags", "drinks")
    for agent, old, new in (("alice", "likes tea", "likes green tea"), ("bob", "likes coffee", "likes strong coffee")):
        drinks = home / "memory/agents" / agent / "drinks.md"
        drinks.write_text(drinks.read_text().replace(old, new))


@pytest.mark.parametrize(("operator", "env"), OPERATOR)
def test_the_operators_sync_settles_each_agents_folder_in_its_own_database(
        home: Path, operator: tuple[str, ...], env: dict[str, str] | None) -> None:
    _two_agents_edited_by_hand(home)

    report = json.loads(cli_output(home, "--json", "sync", *operator, env=env))

    assert report["to_database"] == {"created": 0, "updated": 2, "forgotten": 0, "moved": 0}
    assert _contents(home, "bob") == {"coffee": "bob likes strong coffee"}
    assert _contents(home, "alice") == {"tea": "alice likes green tea"}
    assert _contents(home, "default") == {}  # the no-agent run's own database took nobody's
    again = json.loads(cli_output(home, "--json", "sync", *operator, env=env))
    assert again["to_database"] == {"created": 0, "updated": 0, "forgotten": 0, "moved": 0}
    assert again["to_files"]["files_written"] == []


def test_an_agents_sync_still_reaches_only_its_own_database(home: Path) -> None:
    _two_agents_edited_by_hand(home)

    report = json.loads(cli_output(home, "--agent", "alice", "--json", "sync"))

    assert report["to_database"]["updated"] == 1
    assert _contents(home, "alice") == {"tea": "alice likes green tea"}
    assert _contents(home, "bob") == {"coffee": "bob likes coffee"}


@pytest.mark.parametrize(("operator", "env"), OPERATOR)
def test_the_operators_watch_settles_each_agents_folder_in_its_own_database(
        home: Path, operator: tuple[str, ...], env: dict[str, str] | None) -> None:
    _two_agents_edited_by_hand(home)

    cli_output(home, "watch", "--duration", "0", *operator, env=env)  # its first pass, then stops

    assert _contents(home, "bob") == {"coffee": "bob likes strong coffee"}
    assert _contents(home, "alice") == {"tea": "alice likes green tea"}


def test_the_operators_watcher_carries_an_edit_of_an_agents_folder_to_that_agents_database(home: Path) -> None:
    from engram.files.every_database import EveryDatabaseSync
    from engram.root import folder_syncer

    cli_output(home, "--agent", "bob", "remember", "bob likes coffee", "--key", "coffee", "--tags", "drinks")
    settings = load_settings(home=home, files={"enabled": False})
    with build_engram(settings) as engram:
        syncer = folder_syncer(engram, settings)
        assert isinstance(syncer, EveryDatabaseSync)
        syncer.sync()
        drinks = home / "memory/agents/bob/drinks.md"
        bob = engram.for_agent("bob")  # bob's database as this process has it open
        with Watcher(syncer, debounce_s=0.05):
            drinks.write_text(drinks.read_text().replace("likes coffee", "likes cold coffee"))
            # Read through the engine, not by a second SQLite library in this process on the open file
            # (Python's sqlite3 beside engram's driver: their POSIX locks on one file undo each other,
            # and that reader saw the page before the commit now and then: the test was flaky).
            assert wait_for(lambda: bob.get("coffee").content == "bob likes cold coffee")
    assert _contents(home, "bob") == {"coffee": "bob likes cold coffee"}
    assert _contents(home, "default") == {}


def test_the_operators_sync_brings_a_global_memory_to_every_database_in_one_run(home: Path) -> None:
    # alice's global memory, not in the folder yet: her database's pass writes it into global/
    # after the default agent's had read global/, which reads it again in the same run.
    cli_output(home, "remember", "the default agent keeps a note", "--key", "note", "--tags", "notes")
    cli_output(home, "--agent", "bob", "remember", "bob likes coffee", "--key", "coffee", "--tags", "drinks")
    cli_output(home, "--agent", "alice", "remember", "The office closes at six", "--key", "office", "--scope", "global",
               "--tags", "facts", env={"ENGRAM_FILES__ENABLED": "false"})

    report = json.loads(cli_output(home, "--json", "sync"))

    assert report["to_database"]["created"] == 2  # bob's database and the default agent's
    assert report["to_files"]["files_written"] == ["global/facts.md"]
    for agent in ("default", "alice", "bob"):
        assert _contents(home, agent)["office"] == "The office closes at six"
    assert json.loads(cli_output(home, "--json", "sync"))["to_database"] == {
        "created": 0, "updated": 0, "forgotten": 0, "moved": 0}


def test_the_operators_sync_reports_each_databases_backup_before_a_bulk_forget(home: Path) -> None:
    _two_agents_edited_by_hand(home)
    for agent in ("alice", "bob"):
        (home / "memory/agents" / agent / "drinks.md").write_text("# Drinks\n")

    report = json.loads(cli_output(home, "--json", "sync"))

    assert report["to_database"]["forgotten"] == 2
    assert [part.split(": ", 1)[0] for part in report["backup"].split("; ")] == ["agent alice's database",
                                                                                 "agent bob's database"]
    assert report["backup"].count("backed up the database before forgetting 1 memory") == 2
    assert _contents(home, "alice") == _contents(home, "bob") == {}
    listed = [json.loads(cli_output(home, "--agent", agent, "--json", "backup", "--list")) for agent in ("alice", "bob")]
    assert [len(backups) for backups in listed] == [1, 1]


@pytest.mark.parametrize("command", ["sync", "watch"])
def test_the_operators_sync_gives_an_agent_with_files_but_no_database_its_own(home: Path, command: str) -> None:
    # Review: carol's folder, written by hand, was synced by no database: her entries stayed out of
    # every database, never given ids, and the report said nothing.
    cli_output(home, "--agent", "alice", "remember", "alice likes tea", "--key", "tea", "--tags", "drinks")
    notes = home / "memory/agents/carol/notes.md"
    notes.parent.mkdir(parents=True)
    notes.write_text("# Notes\n\n- carol likes juice\n")

    cli_output(home, command, *(("--duration", "0") if command == "watch" else ()))

    assert _contents(home, "carol") == {"carol-likes-juice": "carol likes juice"}
    assert "<!-- id:" in notes.read_text()
    assert _contents(home, "alice") == {"tea": "alice likes tea"}
    again = json.loads(cli_output(home, "--json", "sync"))
    assert again["to_database"] == {"created": 0, "updated": 0, "forgotten": 0, "moved": 0}
    assert again["to_files"]["files_written"] == []


def test_the_operators_sync_names_the_database_its_progress_counts(home: Path) -> None:
    # Review: each database's count of folders started again from 0 under one "syncing" label.
    from engram.root import folder_syncer

    _two_agents_edited_by_hand(home)
    settings = load_settings(home=home, files={"enabled": False})
    calls: list[tuple[str, int, int]] = []
    with build_engram(settings) as engram:
        folder_syncer(engram, settings).sync(progress=lambda *call: calls.append(call))
    phases = list(dict.fromkeys(phase for phase, _, _ in calls))
    assert phases[:3] == ["syncing agent default's database", "syncing agent alice's database", "syncing agent bob's database"]
    assert all(phase.startswith("syncing global/ again in agent ") for phase in phases[3:])
    for phase in phases:
        counts = [done for seen, done, _ in calls if seen == phase]
        assert counts == sorted(counts)


def _ids(home: Path, agent: str) -> dict[str, str]:
    """content -> id of every memory in ``agent``'s own database."""
    with sqlite3.connect(home / "agents" / agent / "memory.db") as db:
        return dict(db.execute("SELECT content, id FROM memories"))


@pytest.mark.parametrize("keep", [True, False], ids=["copied", "moved"])
def test_an_entry_pasted_from_alices_folder_into_bobs_is_bobs_own_memory_under_its_own_id(home: Path, keep: bool) -> None:
    # Review: a copy was imported into bob's database under alice's memory's id: one id, two databases,
    # two agents. A copy now gets an id of its own; a move keeps its id (it changes owner, as with one database).
    _two_agents_edited_by_hand(home)
    cli_output(home, "sync")
    alices, bobs = home / "memory/agents/alice/drinks.md", home / "memory/agents/bob/drinks.md"
    tea_id = _ids(home, "alice")["alice likes green tea"]
    block = "\n".join(entry_block(alices.read_text(), tea_id)) + "\n"
    if not keep:
        alices.write_text(alices.read_text().replace(block, ""))
    bobs.write_text(bobs.read_text() + block)

    cli_output(home, "sync")

    in_bobs = _ids(home, "bob")
    assert "alice likes green tea" in in_bobs
    if keep:
        assert _ids(home, "alice")["alice likes green tea"] == tea_id
        assert in_bobs["alice likes green tea"] != tea_id
        assert in_bobs["alice likes green tea"] in bobs.read_text() and tea_id not in bobs.read_text()
    else:
        assert "alice likes green tea" not in _ids(home, "alice")
        assert in_bobs["alice likes green tea"] == tea_id
    again = json.loads(cli_output(home, "--json", "sync"))
    assert again["to_database"] == {"created": 0, "updated": 0, "forgotten": 0, "moved": 0}
    assert again["to_files"]["files_written"] == []


def _scopes(home: Path, agent: str) -> dict[str, tuple[str, str]]:
    """id -> (agent, content) of every memory in ``agent``'s own database ('' for a global one)."""
    path = home / "agents" / agent / "memory.db"
    with sqlite3.connect(path) as db:
        return {row[0]: (row[1], row[2]) for row in db.execute("SELECT id, agent, content FROM memories")}


def _cut(source: Path, target: Path, memory_id: str) -> None:
    """Move the entry ``memory_id`` by hand from the file ``source`` to the end of ``target``."""
    text = source.read_text()
    block = "\n".join(entry_block(text, memory_id)) + "\n"
    source.write_text(text.replace(block, ""))
    target.write_text(target.read_text() + block)


def test_a_global_entry_moved_into_alices_folder_becomes_alices_in_every_database(home: Path) -> None:
    # Review: agents/alice/ is settled before global/, so alice's database met the entry there first
    # as a memory forgotten in the database, took it out, and wrote it back into global/: undone.
    cli_output(home, "--agent", "alice", "remember", "The office closes at six", "--key", "office", "--scope", "global",
               "--tags", "facts")
    cli_output(home, "--agent", "alice", "remember", "alice likes tea", "--key", "tea", "--tags", "facts")
    cli_output(home, "--agent", "bob", "remember", "bob likes coffee", "--key", "coffee", "--tags", "facts")
    cli_output(home, "sync")  # every database holds the global memory, under one id
    office_id = next(i for i, (_, content) in _scopes(home, "bob").items() if content == "The office closes at six")
    assert all(_scopes(home, agent)[office_id] == ("", "The office closes at six") for agent in ("alice", "bob"))
    assert not (home / "agents" / "default").exists()  # the operator's run made no database for an agent nobody used
    alices, shared = home / "memory/agents/alice/facts.md", home / "memory/global/facts.md"
    _cut(shared, alices, office_id)

    report = json.loads(cli_output(home, "--json", "sync"))

    assert _scopes(home, "alice")[office_id] == ("alice", "The office closes at six")
    assert office_id not in _scopes(home, "bob") and not (home / "agents" / "default").exists()
    assert office_id in alices.read_text() and not (shared.is_file() and office_id in shared.read_text())
    assert report["conflicts"] == [] and report["problems"] == []
    again = json.loads(cli_output(home, "--json", "sync"))
    assert again["to_database"] == {"created": 0, "updated": 0, "forgotten": 0, "moved": 0}
    assert again["to_files"]["files_written"] == [] and again["conflicts"] == []


def test_bobs_own_sync_leaves_alices_memory_moved_into_his_folder_to_her(home: Path) -> None:
    # bob's run reads neither alice's folder nor her database (``sides.belongs``): her memory stays
    # hers, in her database, until a run that syncs it (hers, or the operator's) settles her folder.
    cli_output(home, "--agent", "alice", "remember", "alice likes tea", "--key", "tea", "--tags", "drinks")
    cli_output(home, "--agent", "bob", "remember", "bob likes coffee", "--key", "coffee", "--tags", "drinks")
    cli_output(home, "sync")
    tea_id = _ids(home, "alice")["alice likes tea"]
    _cut(home / "memory/agents/alice/drinks.md", home / "memory/agents/bob/drinks.md", tea_id)

    cli_output(home, "--agent", "bob", "sync")

    assert _scopes(home, "alice")[tea_id] == ("alice", "alice likes tea")


def test_an_entry_moved_from_bobs_folder_while_his_memory_changed_stays_in_one_database_under_its_id(home: Path) -> None:
    # Review: bob's memory changed in his database since the last sync, and its entry was moved by hand
    # into alice's folder. Alice's pass took the id over as a move; bob's pass keeps a memory changed
    # since (its entry put back, with a conflict), so one id ended in two databases. Not a move, then:
    # alice gets a copy under an id of its own, and bob keeps his memory.
    cli_output(home, "--agent", "alice", "remember", "alice likes tea", "--key", "tea", "--tags", "drinks")
    cli_output(home, "--agent", "bob", "remember", "bob likes coffee", "--key", "coffee", "--tags", "drinks")
    cli_output(home, "sync")
    coffee_id = _ids(home, "bob")["bob likes coffee"]
    cli_output(home, "--agent", "bob", "update", "coffee", "--content", "bob likes strong coffee",
               env={"ENGRAM_FILES__ENABLED": "false"})  # the database alone: the folder still has the old text
    _cut(home / "memory/agents/bob/drinks.md", home / "memory/agents/alice/drinks.md", coffee_id)

    cli_output(home, "sync")

    assert coffee_id not in _scopes(home, "alice"), _scopes(home, "alice")
    assert _scopes(home, "bob")[coffee_id] == ("bob", "bob likes strong coffee")
    assert ("alice", "bob likes coffee") in _scopes(home, "alice").values()  # the moved text, alice's copy
    again = json.loads(cli_output(home, "--json", "sync"))
    assert again["to_database"] == {"created": 0, "updated": 0, "forgotten": 0, "moved": 0}, again


def test_an_entry_moved_from_bobs_folder_keeps_its_id_when_another_entry_there_links_to_it(home: Path) -> None:
    # Review: the old folder was searched as text for the id, and an entry linking to the moved one
    # names it (links:<id>): the move was taken for a copy, a new id and key made in alice's database.
    cli_output(home, "--agent", "bob", "remember", "bob likes coffee", "--key", "coffee", "--tags", "drinks")
    cli_output(home, "--agent", "bob", "remember", "bob grinds beans", "--key", "beans", "--tags", "drinks")
    cli_output(home, "--agent", "bob", "link", "coffee", "beans")
    cli_output(home, "--agent", "alice", "remember", "alice likes tea", "--key", "tea", "--tags", "drinks")
    cli_output(home, "sync")
    beans_id = _ids(home, "bob")["bob grinds beans"]
    assert beans_id in (home / "memory/agents/bob/drinks.md").read_text().replace(
        "\n".join(entry_block((home / "memory/agents/bob/drinks.md").read_text(), beans_id)), "")  # linked from coffee
    _cut(home / "memory/agents/bob/drinks.md", home / "memory/agents/alice/drinks.md", beans_id)

    cli_output(home, "sync")

    assert _scopes(home, "alice")[beans_id] == ("alice", "bob grinds beans")
    assert beans_id not in _scopes(home, "bob")
    again = json.loads(cli_output(home, "--json", "sync"))
    assert again["to_database"] == {"created": 0, "updated": 0, "forgotten": 0, "moved": 0}, again


def _copy(source: Path, target: Path, memory_id: str) -> None:
    """Copy the entry ``memory_id`` by hand from the file ``source`` to the end of ``target`` (the source keeps it)."""
    target.write_text(target.read_text() + "\n".join(entry_block(source.read_text(), memory_id)) + "\n")


@pytest.mark.parametrize("run", [pytest.param((), id="operator"), pytest.param(("--agent", "alice"), id="alice")])
def test_a_global_entry_copied_into_alices_folder_stays_global_in_every_database(home: Path, run: tuple[str, ...]) -> None:
    # Review: bob's global memory, not yet in alice's database, copied by hand into agents/alice/ was
    # imported there under its id as alice's; her pass over global/ then took the global entry out as
    # a copy of hers, and every other database forgot the global memory: bob lost it.
    cli_output(home, "--agent", "alice", "remember", "alice likes tea", "--key", "tea", "--tags", "facts")
    cli_output(home, "--agent", "bob", "remember", "The office closes at six", "--key", "office", "--scope", "global",
               "--tags", "facts")
    office_id = _ids(home, "bob")["The office closes at six"]
    shared, alices = home / "memory/global/facts.md", home / "memory/agents/alice/facts.md"
    _copy(shared, alices, office_id)

    cli_output(home, *run, "sync")
    cli_output(home, "sync")

    assert _scopes(home, "bob")[office_id] == ("", "The office closes at six")
    assert _scopes(home, "alice")[office_id] == ("", "The office closes at six")
    copies = [i for i, (agent, content) in _scopes(home, "alice").items() if agent == "alice" and "office" in content]
    assert len(copies) == 1 and copies[0] != office_id and copies[0] in alices.read_text()
    assert office_id in shared.read_text() and office_id not in alices.read_text()
    again = json.loads(cli_output(home, "--json", "sync"))
    assert again["to_database"] == {"created": 0, "updated": 0, "forgotten": 0, "moved": 0}, again


def test_alices_own_sync_gives_an_entry_copied_from_bobs_folder_an_id_of_its_own(home: Path) -> None:
    # Review: the operator's run told such a copy from a move, alice's own did not: it imported the
    # entry under bob's memory's id, one id in two databases as two agents' memories.
    cli_output(home, "--agent", "alice", "remember", "alice likes tea", "--key", "tea", "--tags", "drinks")
    cli_output(home, "--agent", "bob", "remember", "bob likes coffee", "--key", "coffee", "--tags", "drinks")
    coffee_id = _ids(home, "bob")["bob likes coffee"]
    _copy(home / "memory/agents/bob/drinks.md", home / "memory/agents/alice/drinks.md", coffee_id)

    cli_output(home, "--agent", "alice", "sync")

    assert coffee_id not in _scopes(home, "alice")
    assert ("alice", "bob likes coffee") in _scopes(home, "alice").values()
    assert _scopes(home, "bob")[coffee_id] == ("bob", "bob likes coffee")


def test_alices_own_sync_takes_a_global_entry_cut_into_her_folder_as_a_new_memory(home: Path) -> None:
    # The copy check reads the other folders: an entry cut from global/ is held by none. It kept its
    # id, which bob's database still held as a global memory (one id, two databases, until bob's
    # sync); alice's database now gives it an id of its own, and bob's sync forgets the global one.
    cli_output(home, "--agent", "alice", "remember", "alice likes tea", "--key", "tea", "--tags", "facts")
    cli_output(home, "--agent", "bob", "remember", "The office closes at six", "--key", "office", "--scope", "global",
               "--tags", "facts")
    office_id = _ids(home, "bob")["The office closes at six"]
    _cut(home / "memory/global/facts.md", home / "memory/agents/alice/facts.md", office_id)

    own = json.loads(cli_output(home, "--agent", "alice", "--json", "sync"))
    assert own["to_database"]["created"] == 1, own  # counted, its new id written into her file at once
    assert office_id not in (home / "memory/agents/alice/facts.md").read_text()
    cli_output(home, "--agent", "bob", "sync")

    assert office_id not in _scopes(home, "alice") and office_id not in _scopes(home, "bob")
    assert list(_scopes(home, "alice").values()).count(("alice", "The office closes at six")) == 1
