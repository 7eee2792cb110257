"""An existing SQLite store gains valid time: step 0008 adds the columns and closes the validity
of facts superseded before it, at their successor's creation."""

from __future__ import annotations

from engram.db import migrate as migrations
from engram.db.sqlite import Database
from engram.engine import Engram
from engram.store.sqlite import SqliteMemoryStore
from tests.migration_steps import sqlite_steps_before


def _old_store(path) -> None:
    """A store as engram left it before valid time (every step below 0008)."""
    db = Database(path)
    with db.write() as conn:
        sqlite_steps_before(conn, 8)
        row = ("alice", "", "{}", "[]", "knowledge", "learned", "semantic", "h")
        conn.execute(
            "INSERT INTO memories (id, agent, session, metadata, tags, category, type, layer, content_hash, key,"
            " content, created_at, updated_at, superseded_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            ("old", *row, "berlin", "User lives in Berlin", 100.0, 100.0, "new"),
        )
        conn.execute(
            "INSERT INTO memories (id, agent, session, metadata, tags, category, type, layer, content_hash, key,"
            " content, created_at, updated_at, superseded_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            ("new", *row, "paris", "User lives in Paris", 500.0, 500.0, None),
        )
    db.close()


def test_existing_store_is_migrated_and_superseded_facts_are_closed(tmp_path) -> None:
    path = tmp_path / "memory.db"
    _old_store(path)
    store = SqliteMemoryStore(path)
    try:
        mem = Engram(store, agent="alice", clock=lambda: 1000.0)
        old = mem.get("old")
        assert (old.valid_from, old.valid_until, old.superseded_at) == (None, 500.0, 500.0)
        assert mem.get("new").valid_until is None
        assert [h.memory.id for h in mem.recall("user lives", as_of=300.0)] == ["old"]
        assert [h.memory.id for h in mem.recall("user lives")] == ["new"]
        assert 8 in migrations.applied(store.db)
    finally:
        store.close()
