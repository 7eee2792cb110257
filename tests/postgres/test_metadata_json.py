"""Metadata comes back from PostgreSQL as it was written, floats included: PostgreSQL's JSONB
printed 3.784434779949819e+16 back as the integer 37844347799498190, so the columns are JSON
(migration 0009), which keeps the text. Filters still compare by value."""

from __future__ import annotations

import json
from collections.abc import Callable

import psycopg

from engram.db.postgres import PgDatabase
from engram.engine import Engram, Filters
from engram.history.postgres import PostgresHistoryStore
from engram.model import Message, Role
from engram.store.postgres import PostgresMemoryStore

FLOATS = {"big": 3.784434779949819e+16, "huge": -1.5e300, "tiny": 5e-324, "whole": 2.0, "count": 7,
          "nested": [1e17, {"x": 1.0}]}


def test_memory_and_message_metadata_keep_floats(new_database: Callable[[], str]) -> None:
    url = new_database()
    store = PostgresMemoryStore(PgDatabase.connect(url))
    try:
        mem = Engram(store, agent="alice")
        stored = mem.remember("metadata with floats", key="floats", metadata=FLOATS).memory
        for memory in (mem.get(stored.id), mem.list()[0]):
            assert json.dumps(dict(memory.metadata), sort_keys=True) == json.dumps(FLOATS, sort_keys=True)
            assert isinstance(memory.metadata["big"], float) and isinstance(memory.metadata["count"], int)
        assert [m.id for m in mem.list(Filters(metadata={"count": 7}))] == [stored.id]
        assert mem.list(Filters(metadata={"whole": 2})) == []  # 2 and 2.0 stay different, as on SQLite
    finally:
        store.close()

    history = PostgresHistoryStore.open(url)
    try:
        history.append("web:chat", Message(Role.USER, "hello", metadata=FLOATS))
        assert json.dumps(dict(history.get_all("web:chat")[0].metadata), sort_keys=True) == json.dumps(FLOATS, sort_keys=True)
    finally:
        history.close()


def test_rows_written_before_the_migration_are_kept(new_database: Callable[[], str]) -> None:
    url = new_database()
    PostgresMemoryStore(PgDatabase.connect(url)).close()
    with psycopg.connect(url, autocommit=True) as conn:  # back to JSONB, as before step 0009, with a row
        for table in ("memories", "history_messages"):
            conn.execute(f"ALTER TABLE {table} ALTER COLUMN metadata TYPE JSONB USING metadata::jsonb")
        conn.execute("DELETE FROM schema_migrations WHERE version = 9")
        conn.execute(
            "INSERT INTO memories (id, agent, session, key, content, content_hash, category, type, layer,"
            " metadata, created_at, updated_at) VALUES ('old', 'alice', '', 'k', 'an old memory', 'h', 'knowledge',"
            " 'learned', 'semantic', '{\"source\": \"notes\", \"n\": 1.5}', 1.0, 1.0)")
    store = PostgresMemoryStore(PgDatabase.connect(url))
    try:
        mem = Engram(store, agent="alice")
        assert dict(mem.get("old").metadata) == {"source": "notes", "n": 1.5}
        assert [m.id for m in mem.list(Filters(metadata={"source": "notes"}))] == ["old"]
    finally:
        store.close()


def test_the_audit_record_of_a_forget_keeps_the_metadata_as_written(new_database: Callable[[], str],
                                                                     tmp_path) -> None:
    # A forget's audit row holds the memory whole, so an operator can restore it by hand: on JSONB
    # its metadata's keys came back reordered and its large floats as integers.
    from engram.config import load_settings

    written = {"zeta": 1, "alpha": FLOATS["big"], "nested": FLOATS["nested"]}
    settings = load_settings(home=tmp_path, database_url=new_database(), embeddings={"provider": "none"},
                             agent="alice")
    mem = Engram.from_settings(settings)
    try:
        stored = mem.remember("the vault moved to the north wing", key="vault", metadata=written).memory
        mem.forget(stored.id, reason="moved again")
        forgotten = mem.audit_trail(action="forgotten")[0]
        assert json.dumps(forgotten.detail["metadata"]) == json.dumps(written)  # same keys, same order, floats
        assert isinstance(forgotten.detail["metadata"]["alpha"], float)
    finally:
        mem.close()
