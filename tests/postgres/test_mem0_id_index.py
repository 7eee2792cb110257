"""Schema step 0020: ``memories_mem0_id``, the index the mem0 facade finds a memory by the id mem0
gave it through (``metadata["mem0"]["id"]``), and ``audit_log_mem0_id``, the one its ``history``
finds a deleted memory's trail through, on a new database and on one from before the step. The
plans are those of the clause the facade's lookup asks the store for (``_mem0_id_filter``, compiled
by the store's ``filter_sql``) and of the trail's query, sequential scans priced out (a table of a
few rows is read whole whatever indexes it has)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import psycopg

from engram.compat.mem0 import Memory, _mem0_id_filter
from engram.engine import Engram
from engram.model import Scope
from engram.store.postgres import filter_sql

MEM0_ID = "5a0c6a1e-1111-4c1b-9d35-0a1b2c3d4e5f"
EXPORT = {"results": [
    {"id": MEM0_ID, "memory": "Keeps her blue umbrellas by the door", "hash": "h1", "metadata": {"topic": "home"},
     "created_at": "2025-03-01T08:00:00+00:00", "user_id": "alice"},
    {"id": "5a0c6a1e-2222-4c1b-9d35-0a1b2c3d4e5f", "memory": "Feeds the cat at seven", "hash": "h2",
     "metadata": None, "created_at": "2025-03-05T19:00:00+00:00", "user_id": "bob"}]}


def _plan(url: str) -> str:
    where, params = filter_sql(_mem0_id_filter([Scope("alice"), Scope("bob")], MEM0_ID))
    return _explain(url, f"SELECT m.id FROM memories m WHERE {where}", params)


def _explain(url: str, sql: str, params: list) -> str:
    with psycopg.connect(url) as conn:
        conn.execute("SET enable_seqscan = off")
        return "\n".join(row[0] for row in conn.execute(f"EXPLAIN {sql}", params))


def _audit_plan(url: str) -> str:
    """The plan of the trail's read of the forgets of a memory with this mem0 id, as the facade's history
    runs it (``PostgresAuditLog.forgotten_by_origin_id``), caught from the connection (which migrates
    the database: ``PgDatabase.connect``)."""
    seen: list[tuple[str, list]] = []
    original = psycopg.Connection.execute

    def caught(self, query, params=None, **kwargs):  # type: ignore[no-untyped-def]
        if isinstance(query, str) and "'mem0'" in query and "audit_log" in query:
            seen.append((query, list(params or ())))
        return original(self, query, params, **kwargs)

    from engram.audit import PostgresAuditLog
    from engram.db.postgres import PgDatabase

    db = PgDatabase.connect(url)
    psycopg.Connection.execute = caught  # type: ignore[method-assign]
    try:
        PostgresAuditLog(db).forgotten_by_origin_id("mem0", MEM0_ID)
    finally:
        psycopg.Connection.execute = original  # type: ignore[method-assign]
        db.close()
    assert len(seen) == 1, seen
    return _explain(url, *seen[0])


def test_a_database_from_before_the_step_gets_the_index_the_mem0_id_lookup_seeks_through(
        new_database: Callable[[], str], tmp_path: Path) -> None:
    url = new_database()
    assert "memories_mem0_id" in _plan(url) and "audit_log_mem0_id" in _audit_plan(url)  # a new database has them
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP INDEX memories_mem0_id")
        conn.execute("DROP INDEX audit_log_mem0_id")
        conn.execute("DELETE FROM schema_migrations WHERE version = 20")
    assert "memories_mem0_id" not in _plan(url)  # (the trail's plan is read on a migrated database alone)
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT indexname FROM pg_indexes WHERE indexname LIKE '%mem0_id'").fetchall() == []
    facade = Memory(Engram.from_settings(database_url=url, home=tmp_path, embeddings={"provider": "none"}))  # migrates
    try:
        assert "memories_mem0_id" in _plan(url) and "audit_log_mem0_id" in _audit_plan(url)
        assert facade.import_mem0(EXPORT)["imported"] == 2
        found = facade.get(MEM0_ID)
        assert found is not None and found["memory"] == "Keeps her blue umbrellas by the door" and found["user_id"] == "alice"
        facade.update(MEM0_ID, "Keeps her red umbrellas by the door")
        assert facade.get(MEM0_ID)["memory"] == "Keeps her red umbrellas by the door"  # type: ignore[index]
        facade.delete(MEM0_ID)  # its history is found by the mem0 id, through the trail's forget row
        assert [(e["event"], e["memory_id"], e["new_memory"]) for e in facade.history(MEM0_ID)] == [
            ("ADD", MEM0_ID, "Keeps her blue umbrellas by the door"),
            ("UPDATE", MEM0_ID, "Keeps her red umbrellas by the door"), ("DELETE", MEM0_ID, None)]
    finally:
        facade.close()
