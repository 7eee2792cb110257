"""Agents kept apart in the memory folder: per-agent databases each sync only their own part of it,
and ClawCode's session folders belong to one agent whoever syncs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engram.interfaces.cli.app import app

runner = CliRunner()


def _run(home: Path, *args: str) -> str:
    result = runner.invoke(app, ["--home", str(home), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def _keys(home: Path, agent: str) -> set[str]:
    """Every key stored in ``agent``'s own database, whatever its scope."""
    import sqlite3

    with sqlite3.connect(home / "agents" / agent / "memory.db") as db:
        return {key for (key,) in db.execute("SELECT key FROM memories")}


@pytest.fixture
def per_agent(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("ENGRAM_PER_AGENT_DATABASES", "true")
    return tmp_path / "home"


def test_per_agent_databases_each_sync_only_their_own_agent_folder(per_agent: Path) -> None:
    home = per_agent
    _run(home, "--agent", "alice", "remember", "alice private diary", "--key", "adiary", "--tags", "notes")
    _run(home, "--agent", "bob", "remember", "bob private note", "--key", "bnote", "--tags", "notes")
    bob_sync = json.loads(_run(home, "--agent", "bob", "--json", "sync"))
    alice_sync = json.loads(_run(home, "--agent", "alice", "--json", "sync"))
    assert bob_sync["to_database"] == alice_sync["to_database"] == {"created": 0, "updated": 0, "forgotten": 0}
    assert _keys(home, "alice") == {"adiary"} and _keys(home, "bob") == {"bnote"}

    _run(home, "--agent", "alice", "forget", "adiary")
    alice_notes = home / "memory/agents/alice/notes.md"
    assert "alice private diary" not in alice_notes.read_text()
    before = alice_notes.read_text()
    bob_sync = json.loads(_run(home, "--agent", "bob", "--json", "sync"))
    assert bob_sync["to_files"]["files_written"] == [] and alice_notes.read_text() == before
    alice_sync = json.loads(_run(home, "--agent", "alice", "--json", "sync"))
    assert alice_sync["to_database"]["created"] == 0
    assert json.loads(_run(home, "--agent", "alice", "--json", "list")) == []
    assert "alice private diary" not in alice_notes.read_text()
    assert _keys(home, "bob") == {"bnote"}


def test_per_agent_databases_share_global_memories_through_the_global_folder(per_agent: Path) -> None:
    # A global memory is every agent's: with a database per agent, global/ carries it to each, and
    # a forget by one agent reaches the others (each database keeps its own sync state).
    home = per_agent
    _run(home, "--agent", "alice", "remember", "The office closes at six", "--key", "office", "--scope", "global",
         "--tags", "facts")
    _run(home, "--agent", "bob", "sync")
    assert "office" in _keys(home, "bob")
    _run(home, "--agent", "alice", "sync")
    [copy] = json.loads(_run(home, "--agent", "bob", "--json", "list", "--scope", "global"))
    _run(home, "--agent", "bob", "forget", copy["id"])
    assert "The office closes" not in (home / "memory/global/facts.md").read_text()
    _run(home, "--agent", "alice", "sync")
    listed = json.loads(_run(home, "--agent", "alice", "--json", "list", "--scope", "global"))
    assert [m["key"] for m in listed] == []


def test_per_agent_databases_leave_other_agents_type_files(per_agent: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_FILES__TYPE_JSON", "true")
    home = per_agent
    _run(home, "--agent", "alice", "remember", "alice private diary", "--key", "adiary", "--tags", "notes")
    [diary] = list((home / "memory/types").rglob("*.json"))
    _run(home, "--agent", "bob", "remember", "bob private note", "--key", "bnote", "--tags", "notes")
    _run(home, "--agent", "bob", "sync")
    assert diary.exists() and len(list((home / "memory/types").rglob("*.json"))) == 2


@pytest.fixture
def session_folders(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("ENGRAM_FILES__SESSION_FOLDERS", "session")
    return tmp_path / "home"


def _count(home: Path, *who: str) -> int:
    return int(json.loads(_run(home, *who, "--json", "count"))["count"])


def test_session_folders_belong_to_one_agent_whoever_syncs(session_folders: Path) -> None:
    home = session_folders
    _run(home, "--agent", "alice", "--session", "s1", "remember", "--scope", "session", "alice private session note",
         "--key", "anote", "--tags", "notes")
    assert "alice private session note" in (home / "memory/sessions/s1/notes.md").read_text()
    out = json.loads(_run(home, "--json", "sync"))  # run as the default agent
    assert out["to_database"] == {"created": 0, "updated": 0, "forgotten": 0}
    assert json.loads(_run(home, "--session", "s1", "--json", "list")) == []
    assert _count(home, "--agent", "alice", "--session", "s1") == 1

    # The default agent's own sessions stay nested under its name, and both survive either sync.
    _run(home, "--session", "s1", "remember", "--scope", "session", "default session note", "--key", "dnote", "--tags", "notes")
    assert "default session note" in (home / "memory/sessions/default/s1/notes.md").read_text()
    for who in (("--agent", "alice"), (), ("--agent", "alice")):
        out = json.loads(_run(home, *who, "--json", "sync"))
        assert out["to_database"] == {"created": 0, "updated": 0, "forgotten": 0}, who
        assert out["problems"] == []
    assert _count(home, "--agent", "alice", "--session", "s1") == 1
    assert _count(home, "--session", "s1") == 1
    assert "alice private session note" not in (home / "memory/sessions/default/s1/notes.md").read_text()


def test_a_session_folder_sync_does_not_read_is_never_taken_as_deletions(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # Written as sessions/default/s1/ before the switch to ClawCode's layout, which reads the
    # default agent's sessions at sessions/s1/: reported, not read, and its entries kept.
    home = tmp_path / "home"
    _run(home, "--session", "s1", "remember", "--scope", "session", "default session note", "--key", "dnote", "--tags", "notes")
    monkeypatch.setenv("ENGRAM_FILES__SESSION_FOLDERS", "session")
    out = json.loads(_run(home, "--json", "sync"))
    assert out["to_database"]["forgotten"] == 0
    assert len(out["problems"]) == 1 and out["problems"][0].startswith("sessions/default/s1/notes.md")
    assert _count(home, "--session", "s1") == 1


def test_a_file_too_deep_in_an_agent_folder_is_not_named_a_session_folder(session_folders: Path) -> None:
    # agents/default/deep/ has three parts and names the default agent, as sessions/default/s1/
    # does: only the latter is a session folder in the other layout.
    home = session_folders
    _run(home, "remember", "a note", "--key", "anote")
    deep = home / "memory" / "agents" / "default" / "deep"
    deep.mkdir(parents=True)
    (deep / "x.md").write_text("- stray note\n")
    out = json.loads(_run(home, "--json", "sync"))
    assert len(out["problems"]) == 1, out["problems"]
    assert out["problems"][0].startswith("agents/default/deep/x.md")
    assert "at another level" in out["problems"][0] and "move this folder" not in out["problems"][0]
