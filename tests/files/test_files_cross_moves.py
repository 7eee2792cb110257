"""An entry moved by hand between two agents' own databases (``per_agent_databases``): the
operator's sync carries the memory whole into the new owner's database (``files.cross_moves``)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engram.interfaces.cli.app import app

runner = CliRunner()


def _run(home: Path, *args: str) -> str:
    result = runner.invoke(app, ["--home", str(home), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def _rows(home: Path, agent: str, sql: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(home / "agents" / agent / "memory.db") as db:
        return db.execute(sql).fetchall()


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("ENGRAM_PER_AGENT_DATABASES", "true")
    return tmp_path / "home"


def test_a_file_moved_from_bobs_folder_to_alices_keeps_the_memory_versions_vector_and_recalls(home: Path) -> None:
    _run(home, "--agent", "bob", "remember", "bob likes green tea", "--key", "btea", "--tags", "notes")
    _run(home, "--agent", "bob", "remember", "bob likes jasmine tea", "--key", "btea", "--tags", "notes")
    _run(home, "--agent", "alice", "remember", "alice likes coffee", "--key", "acoffee", "--tags", "notes")
    _run(home, "--agent", "bob", "recall", "jasmine tea")
    _run(home, "sync")
    [(memory_id, created, recalls, seen)] = _rows(home, "bob", "SELECT id, created_at, recall_count, last_accessed FROM memories")
    assert recalls == 1

    (home / "memory/agents/bob/notes.md").rename(home / "memory/agents/alice/tea.md")
    report = json.loads(_run(home, "--json", "sync"))

    assert report["to_database"]["moved"] == 1 and report["to_database"]["forgotten"] == 0
    assert _rows(home, "bob", "SELECT id FROM memories") == []
    kept = f"SELECT id, key, created_at, recall_count, last_accessed FROM memories WHERE id = '{memory_id}'"
    assert _rows(home, "alice", kept) == [(memory_id, "btea", created, 1, seen)]
    versions = f"SELECT content FROM memory_versions WHERE memory_id = '{memory_id}'"
    assert _rows(home, "alice", versions) == [("bob likes green tea",)]
    assert _rows(home, "alice", "SELECT COUNT(*) FROM memory_vectors v JOIN memories m ON m.rowid = v.memory_rowid"
                                f" WHERE m.id = '{memory_id}'") == [(1,)]
    [moved] = json.loads(_run(home, "--agent", "alice", "--json", "audit", "--action", "moved"))
    assert (moved["memory_id"], moved["detail"]) == (memory_id, {"from": "agent:bob", "to": "agent:alice"})
    assert json.loads(_run(home, "--agent", "bob", "--json", "audit", "--action", "forgotten")) == []
    assert "jasmine" in _run(home, "--agent", "alice", "get", "btea")
    assert "jasmine" not in _run(home, "--agent", "bob", "recall", "jasmine tea")
    # Settled: a second pass changes nothing in either database.
    again = json.loads(_run(home, "--json", "sync"))
    assert again["to_database"] == {"created": 0, "updated": 0, "forgotten": 0, "moved": 0}
