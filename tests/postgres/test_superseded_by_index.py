"""Schema step 0019: ``memories_superseded_by``, the index a move reads the memories a moved one
supersedes through (``superseded_by = %s``), on a new database and on one from before the step."""

from __future__ import annotations

from collections.abc import Callable

import psycopg

from engram.db.postgres import PgDatabase
from engram.model import Memory, Scope
from engram.store.postgres import PostgresMemoryStore


def _plan(url: str) -> str:
    """The plan of the move's read of the memories ``new`` supersedes, sequential scans priced out
    (a table of two rows is read whole whatever indexes it has)."""
    with psycopg.connect(url) as conn:
        conn.execute("SET enable_seqscan = off")
        return "\n".join(row[0] for row in conn.execute("EXPLAIN SELECT id FROM memories m WHERE m.superseded_by = %s",
                                                         ("new",)))


def test_a_database_from_before_the_step_gets_the_index_a_move_reads_through(new_database: Callable[[], str]) -> None:
    url = new_database()
    assert "memories_superseded_by" in _plan(url)  # a new database has it
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP INDEX memories_superseded_by")
        conn.execute("DELETE FROM schema_migrations WHERE version = 19")
    assert "memories_superseded_by" not in _plan(url)
    store = PostgresMemoryStore(PgDatabase.connect(url))  # migrates
    try:
        store.import_memories([Memory(id="old", key="old", content="the boiler is grey", scope=Scope("alice"),
                                      superseded_by="new", superseded_at=2.0, created_at=1.0, updated_at=1.0),
                               Memory(id="new", key="new", content="the boiler is red", scope=Scope("alice"),
                                      created_at=2.0, updated_at=2.0)])
        assert "memories_superseded_by" in _plan(url)
        moved = store.move_many({"new": Scope()})
        assert moved["new"].scope == Scope() and store.get_many(["old"])[0].superseded_by == "new"  # type: ignore[union-attr]
    finally:
        store.close()
