"""A source that changes a record in place under the same id, imported again (CLI and library, real
SQLite homes, sources built here in their own formats): mcp-memory-service's JSON export and its
``sqlite_vec.db``, whose ``content_hash`` is a memory's identity while its creation time may move
(the service's ``update_memory_metadata`` with ``preserve_timestamps=False``), and sclaw's
``memory.db``, whose ``Index`` replaces a fact under its id (``INSERT OR REPLACE``, its
``created_at`` now when the caller gives none). A re-import finds the memory the first one made:
no second copy under a ``-2`` key, and sclaw's new text brought over, as Zep's rewrites are."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from engram.config import load_settings
from engram.engine import Engram
from engram.importers import apply_plan, read_plan

from .cli_runs import as_json, run
from .test_import_sqlite_sources import SCLAW_SCHEMA

ROTATES = "The staging database password rotates on the first Monday of each month"


@pytest.fixture(autouse=True)
def _no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_EMBEDDINGS__PROVIDER", "none")


def service_export(created: float, updated: float, tags: list[str]) -> str:
    """mcp-memory-service's sync export (its ``MemoryExporter`` shape) of one memory."""
    def iso(t: float) -> str:  # as the service writes it beside the float: UTC, a "Z"
        return datetime.fromtimestamp(t, UTC).replace(tzinfo=None).isoformat() + "Z"

    return json.dumps({
        "export_metadata": {"source_machine": "laptop-1", "export_timestamp": "2025-03-01T10:00:00",
                            "total_memories": 1, "database_path": "/home/sam/.local/share/mcp-memory/sqlite_vec.db",
                            "platform": "Linux", "python_version": "3.12.3", "include_embeddings": False,
                            "filter_tags": None, "exporter_version": "5.0.0"},
        "memories": [{"content": ROTATES, "content_hash": hashlib.sha256(ROTATES.lower().encode()).hexdigest(),
                      "tags": tags, "memory_type": "note", "metadata": {"project": "atlas"},
                      "created_at": created, "updated_at": updated,
                      "created_at_iso": iso(created), "updated_at_iso": iso(updated)}]})


def test_an_mcp_memory_service_memory_whose_creation_moved_is_found_again(tmp_path: Path) -> None:
    # The service moved the memory's creation under the same content_hash: the id, which held the
    # time, was another, and a second copy was stored under the key's -2. The same memory now, its
    # later tags brought (a later updated_at), its creation time left as the first import gave it.
    home = tmp_path / "home"
    first, later = tmp_path / "january.json", tmp_path / "march.json"
    first.write_text(service_export(1736937000.5, 1736937000.5, ["ops"]), encoding="utf-8")
    later.write_text(service_export(1736000000.0, 1740823200.0, ["ops", "database"]), encoding="utf-8")
    assert as_json(home, "import", str(first))["imported"] == 1
    again = as_json(home, "import", str(later))
    assert (again["imported"], again["updated"], again["skipped"]) == (0, 1, 0), again
    [memory] = as_json(home, "list")
    assert (memory["content"], memory["created_at"], memory["tags"]) == (ROTATES, 1736937000.5, ["ops", "database"])


def _service_db(path: Path, created: float) -> Path:
    conn = sqlite3.connect(path)
    conn.executescript("""
        CREATE TABLE memories (id INTEGER PRIMARY KEY AUTOINCREMENT, content_hash TEXT UNIQUE NOT NULL,
            content TEXT NOT NULL, tags TEXT, memory_type TEXT, metadata TEXT, created_at REAL, updated_at REAL,
            created_at_iso TEXT, updated_at_iso TEXT, deleted_at REAL DEFAULT NULL);""")
    conn.execute("INSERT INTO memories (content_hash, content, tags, memory_type, metadata, created_at, updated_at) "
                 "VALUES (?, ?, 'ops', 'note', '{}', ?, ?)",
                 (hashlib.sha256(ROTATES.lower().encode()).hexdigest(), ROTATES, created, created))
    conn.commit()
    conn.close()
    return path


def test_what_an_earlier_build_imported_with_the_time_in_its_id_is_still_skipped(tmp_path: Path) -> None:
    # An earlier build made the id from the hash and the creation time: that memory is the same one.
    db = _service_db(tmp_path / "sqlite_vec.db", 1736937000.5)
    with Engram.from_settings(load_settings(home=tmp_path / "home", embeddings={"provider": "none"})) as mem:
        plan = read_plan("mcp-memory-service", db)
        plan.records = [dataclasses.replace(r, time_in_id=True) for r in plan.records]  # as the earlier build read it
        assert apply_plan(mem, plan).imported == 1
        summary = mem.import_from(db)
        assert (summary.imported, summary.skipped) == (0, 1), summary
        assert mem.count() == 1


SCLAW_FACT = ("INSERT OR REPLACE INTO facts (id, content, source, tags, metadata, created_at) "
              "VALUES ('1770631800000000000-0-1', ?, 'telegram:42:', '[\"preferences\"]', ?, ?)")


def _sclaw(path: Path, content: str, meta: dict[str, str], created: str) -> Path:
    """sclaw's memory.db, its fact written as its Index writes one (INSERT OR REPLACE by id)."""
    conn = sqlite3.connect(path)
    if not path.stat().st_size:
        conn.executescript(SCLAW_SCHEMA)
    conn.execute(SCLAW_FACT, (content, json.dumps(meta), created))
    conn.commit()
    conn.close()
    return path


@pytest.mark.parametrize("moved", [False, True])
def test_a_sclaw_fact_replaced_in_place_brings_its_new_text_to_the_memory(tmp_path: Path, moved: bool) -> None:
    # Before: a fact replaced with its time kept was skipped as it stood (the old text stayed); one
    # replaced without a time (sclaw stamps it now) got a new id, and a second memory.
    home = tmp_path / "home"
    db = _sclaw(tmp_path / "memory.db", "User prefers dark mode", {"kind": "preference"}, "2026-02-09T10:30:00Z")
    assert as_json(home, "import", str(db))["imported"] == 1
    _sclaw(db, "User prefers light mode in the mornings", {"kind": "preference", "since": "march"},
           "2026-03-01T08:00:00Z" if moved else "2026-02-09T10:30:00Z")
    again = as_json(home, "import", str(db))
    assert (again["imported"], again["updated"], again["skipped"]) == (0, 1, 0), again
    [memory] = as_json(home, "list")
    assert memory["content"] == "User prefers light mode in the mornings"
    assert (memory["metadata"]["since"], memory["metadata"]["sclaw"]["id"]) == ("march", "1770631800000000000-0-1")
    assert memory["created_at"] == 1770633000.0 and memory["tags"] == ["preferences"]
    assert [v["content"] for v in as_json(home, "versions", memory["key"])["versions"]] == ["User prefers dark mode"]
    third = as_json(home, "import", str(db))  # the same database again: nothing to bring
    assert (third["imported"], third["updated"], third["skipped"]) == (0, 0, 1), third


def test_a_sclaw_fact_changed_in_engram_keeps_engrams_text(tmp_path: Path) -> None:
    home = tmp_path / "home"
    db = _sclaw(tmp_path / "memory.db", "User prefers dark mode", {}, "2026-02-09T10:30:00Z")
    as_json(home, "import", str(db))
    [memory] = as_json(home, "list")
    run(home, "update", memory["key"], "--content", "User prefers dark mode, always")
    _sclaw(db, "User prefers light mode", {}, "2026-02-09T10:30:00Z")
    again = as_json(home, "import", str(db))
    assert any("was changed in engram since it was imported, and is kept" in w for w in again["warnings"]), again
    assert [m["content"] for m in as_json(home, "list")] == ["User prefers dark mode, always"]


@pytest.mark.parametrize("kind", ["sclaw", "mcp-memory-service"])
def test_what_an_earlier_build_imported_before_the_source_moved_its_time_is_found(tmp_path: Path, kind: str) -> None:
    # An earlier build made the id from the source id and the creation time; the source then moved
    # that time (sclaw replaced the fact without one, the service with preserve_timestamps=False):
    # the ids holding the new time are none an import gave, and the record was imported again as a
    # second memory. It is found by the source id its memory keeps (metadata["sclaw"]["id"], ["content_hash"]).
    if kind == "sclaw":
        db = _sclaw(tmp_path / "memory.db", "User prefers dark mode", {}, "2026-02-09T10:30:00Z")
    else:
        db = _service_db(tmp_path / "sqlite_vec.db", 1736937000.5)
    with Engram.from_settings(load_settings(home=tmp_path / "home", embeddings={"provider": "none"})) as mem:
        plan = read_plan(kind, db)
        plan.records = [dataclasses.replace(r, time_in_id=True) for r in plan.records]  # as the earlier build read it
        assert apply_plan(mem, plan).imported == 1
        [before] = mem.list()
        if kind == "sclaw":
            _sclaw(db, "User prefers dark mode", {}, "2026-03-01T08:00:00Z")
        else:
            conn = sqlite3.connect(db)
            conn.execute("UPDATE memories SET created_at = 1736000000.0")
            conn.commit()
            conn.close()
        summary = mem.import_from(db)
        assert (summary.imported, summary.skipped) == (0, 1), summary
        [after] = mem.list()
        assert (after.id, after.created_at) == (before.id, before.created_at)
