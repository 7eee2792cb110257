"""Every import joins the agent it is made for, and only that agent's earlier import counts as
already present: a second agent importing the same source gets its own copy (nothing of the
first agent's is hidden from it or revealed by a skip count), and each agent's re-run is a no-op.
Through the CLI against a real SQLite file, the library (snapshots, memories stored by imports
before ids were per agent) and HTTP with each caller's token."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engram.engine import Engram
from engram.errors import SnapshotError
from engram.importers.base import record_id
from engram.model import Memory, Scope
from engram.store.sqlite import SqliteMemoryStore
from tests.importers.test_import_cli import FIXTURES, as_json, run

SOURCES = [("mem0.json", 3), ("mcp-memory.jsonl", 3), ("mcp-memory-service.json", 2), ("openclaw", 6),
           ("basic-memory", 6)]


@pytest.mark.parametrize(("name", "expected"), SOURCES)
def test_a_second_agent_importing_the_same_source_gets_its_own_copy(tmp_path: Path, name: str, expected: int) -> None:
    home = tmp_path / "home"
    path = str(FIXTURES / name)
    for agent in ("alice", "bob"):
        first = as_json(home, "--agent", agent, "import", path, "--into-agent")
        assert (first["imported"], first["skipped"]) == (expected, 0), (agent, first)
        assert as_json(home, "--agent", agent, "count") == {"count": expected}
    for agent in ("alice", "bob"):  # each agent's own re-run skips what it imported
        again = as_json(home, "--agent", agent, "import", path, "--into-agent")
        assert (again["imported"], again["skipped"]) == (0, expected), (agent, again)
    alice = {m["content"]: m["id"] for m in as_json(home, "--agent", "alice", "list", "--limit", "50")}
    bob = {m["content"]: m["id"] for m in as_json(home, "--agent", "bob", "list", "--limit", "50")}
    assert alice.keys() == bob.keys() and not set(alice.values()) & set(bob.values())


def test_source_users_stay_agents_and_an_into_agent_import_is_separate(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert as_json(home, "import", str(FIXTURES / "mem0.json"))["imported"] == 3  # all alex's (one names ops-bot too)
    into = as_json(home, "--agent", "carol", "import", str(FIXTURES / "mem0.json"), "--into-agent")
    assert (into["imported"], into["skipped"]) == (3, 0)
    again = as_json(home, "import", str(FIXTURES / "mem0.json"))
    assert (again["imported"], again["skipped"]) == (0, 3)
    assert as_json(home, "--agent", "alex", "count") == {"count": 3}


def test_a_snapshot_imported_by_another_agent_joins_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    run(home, "remember", "The user prefers Python", "--key", "prefers-python")
    run(home, "remember", "The project pins Python 3.12", "--key", "python-version", "--link", "prefers-python")
    run(home, "supersede", "prefers-python", "python-version")
    snap = tmp_path / "snap.json"
    run(home, "export", str(snap))
    first = as_json(home, "--agent", "newagent", "import", str(snap))
    assert (first["imported"], first["skipped"]) == (2, 0), first
    again = as_json(home, "--agent", "newagent", "import", str(snap))
    assert (again["imported"], again["skipped"]) == (0, 2)
    assert as_json(home, "import", str(snap)) == {"imported": 0, "skipped": 2, "warnings": []}  # the exporting agent's own
    keys = ("prefers-python", "python-version")
    mine = {key: as_json(home, "--agent", "newagent", "get", key) for key in keys}
    theirs = {key: as_json(home, "get", key) for key in keys}
    assert {m["scope"] for m in mine.values()} == {"agent:newagent"}
    # Links and supersession point at newagent's own copies, not at the exporting agent's.
    assert mine["python-version"]["links"] == [mine["prefers-python"]["id"]]
    assert mine["prefers-python"]["superseded_by"] == mine["python-version"]["id"]
    assert mine["prefers-python"]["id"] != theirs["prefers-python"]["id"]


def test_a_snapshot_into_an_empty_store_keeps_its_ids(tmp_path: Path) -> None:
    with Engram(SqliteMemoryStore(tmp_path / "a.db"), agent="a") as source:
        kept = source.remember("kept as it was").memory
        document = source.export_snapshot()
    with Engram(SqliteMemoryStore(tmp_path / "b.db"), agent="b") as other:
        other.import_snapshot(document)
        assert other.list()[0].id != kept.id  # another agent's memory: an id of b's own
    with Engram(SqliteMemoryStore(tmp_path / "c.db"), agent="a") as restore:
        restore.import_snapshot(document)
        assert restore.get(kept.id).content == "kept as it was"


def test_an_import_made_before_ids_were_per_agent_is_still_skipped(tmp_path: Path) -> None:
    with Engram(SqliteMemoryStore(tmp_path / "m.db"), agent="alice") as mem:
        old_id = record_id("mem0", "a1", None)  # as imports gave ids before: the same for every agent
        mem.store.import_memories([Memory(id=old_id, key="first", content="first", scope=Scope("alice"),
                                          created_at=1.0, updated_at=1.0)])
        document = json.dumps({"results": [{"id": "a1", "memory": "first"}]})
        assert (mem.import_from(document, keep_agents=False).imported, mem.count()) == (0, 1)
        bob = mem.for_agent("bob").import_from(document, keep_agents=False)
        assert (bob.imported, bob.skipped) == (1, 0)


def test_a_dangling_superseded_by_is_refused_unless_engram_recorded_it(tmp_path: Path) -> None:
    with Engram(SqliteMemoryStore(tmp_path / "m.db"), agent="a") as mem:
        hidden = {"memories": [{"content": "x", "key": "k", "superseded_by": "no-such-id"}]}
        with pytest.raises(SnapshotError, match=r'memories\[0\]\.superseded_by: "no-such-id" is neither'):
            mem.import_snapshot(json.dumps(hidden))
        assert mem.store.stats().memories == 0
        # A store whose successor was forgotten exports superseded_by with superseded_at: kept.
        mem.remember("old fact", key="old")
        mem.remember("new fact", key="new")
        mem.supersede("old", "new")
        mem.forget("new")
        document = mem.export_snapshot()
    with Engram(SqliteMemoryStore(tmp_path / "fresh.db"), agent="a") as fresh:
        assert fresh.import_snapshot(document).imported == 1
