"""Step 0014: ``memories_superseded_by``, the index a move reads the memories a moved one supersedes
through (``superseded_by = ?``), on a store migrated from before the step and on a new one. The
queries are the ones ``move_many`` runs, caught as SQLite runs them and then explained."""

from __future__ import annotations

from pathlib import Path

from engram.db import migrate as migrations
from engram.db.sqlite import Database
from engram.model import Scope
from engram.store.sqlite import SqliteMemoryStore
from tests.migration_steps import sqlite_steps_before


def _store_before_0014(path: Path) -> None:
    """A store as engram left it before step 14: ``old`` superseded by ``new``, both alice's."""
    db = Database(path)
    with db.write() as conn:
        sqlite_steps_before(conn, 14)
        for memory_id, successor in (("old", "new"), ("new", None)):
            conn.execute(
                "INSERT INTO memories (id, agent, session, metadata, tags, category, type, layer, content_hash, key,"
                " content, created_at, updated_at, superseded_by) VALUES (?, 'alice', '', '{}', '[]', 'knowledge',"
                " 'learned', 'semantic', 'h', ?, 'User lives in Paris', 100.0, 400.0, ?)", (memory_id, memory_id, successor))
    db.close()


def _move_plans(store: SqliteMemoryStore) -> list[str]:
    """The query plans of the reads of ``superseded_by`` that moving ``new`` to global runs."""
    seen: list[str] = []
    with store.db.read() as conn:
        conn.set_trace_callback(seen.append)
    try:
        moved = store.move_many({"new": Scope()})
    finally:
        with store.db.read() as conn:
            conn.set_trace_callback(None)
    assert moved["new"].scope == Scope()  # type: ignore[union-attr]
    lookups = [sql for sql in seen if "superseded_by = " in sql and sql.lstrip().upper().startswith("SELECT")]
    assert lookups, seen
    with store.db.read() as conn:
        return [" ".join(row[-1] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}")) for sql in lookups]


def test_a_store_from_before_the_step_gets_the_index_and_a_move_reads_through_it(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    _store_before_0014(path)
    store = SqliteMemoryStore(path)
    try:
        assert 14 in migrations.applied(store.db)
        plans = _move_plans(store)
        assert all("USING INDEX memories_superseded_by" in plan for plan in plans), plans
        assert store.get_many(["old"])[0].superseded_by == "new"
    finally:
        store.close()


def test_a_new_store_has_the_index(tmp_path: Path) -> None:
    store = SqliteMemoryStore(tmp_path / "memory.db")
    try:
        with store.db.read() as conn:
            assert conn.execute("SELECT sql FROM sqlite_master WHERE name = 'memories_superseded_by'").fetchone() == (
                "CREATE INDEX memories_superseded_by ON memories (superseded_by) WHERE superseded_by IS NOT NULL",)
    finally:
        store.close()
