"""An existing PostgreSQL store gains valid time: step 0007 adds the columns and closes the
validity of facts superseded before it, at their successor's creation."""

from __future__ import annotations

from collections.abc import Callable

import psycopg

from engram.db.postgres import PgDatabase
from engram.engine import Engram
from engram.store.postgres import PostgresMemoryStore


def _as_before_valid_time(url: str) -> None:
    """Turn a migrated database back into one from before step 0007, holding a superseded fact."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP INDEX memories_event_time")
        for column in ("valid_from", "valid_until", "superseded_at"):
            conn.execute(f"ALTER TABLE memories DROP COLUMN {column}")
        conn.execute("DELETE FROM schema_migrations WHERE version = 7")
        insert = (
            "INSERT INTO memories (id, agent, session, key, content, content_hash, category, type, layer,"
            " created_at, updated_at, superseded_by) VALUES (%s, 'alice', '', %s, %s, 'h', 'knowledge', 'learned',"
            " 'semantic', %s, %s, %s)"
        )
        conn.execute(insert, ("old", "berlin", "User lives in Berlin", 100.0, 100.0, "new"))
        conn.execute(insert, ("new", "paris", "User lives in Paris", 500.0, 500.0, None))


def test_existing_store_is_migrated_and_superseded_facts_are_closed(new_database: Callable[[], str]) -> None:
    url = new_database()
    _as_before_valid_time(url)
    store = PostgresMemoryStore(PgDatabase.connect(url))
    try:
        mem = Engram(store, agent="alice", clock=lambda: 1000.0)
        old = mem.get("old")
        assert (old.valid_from, old.valid_until, old.superseded_at) == (None, 500.0, 500.0)
        assert mem.get("new").valid_until is None
        assert [h.memory.id for h in mem.recall("user lives", as_of=300.0)] == ["old"]
        assert [h.memory.id for h in mem.recall("user lives")] == ["new"]
    finally:
        store.close()
