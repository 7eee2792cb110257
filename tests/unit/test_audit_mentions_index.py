"""Step 0016: ``audit_log_mentions``, the partial index of link and recall rows, through which an
erase reads the audit rows that may name the erased memories (with the ``(memory_id, at)`` index for
the rows about them), instead of reading the whole trail: one row per memory ever stored or
changed, so an erase cost more the larger the store. The query is the one ``forget(erase=True)``
runs, caught as SQLite runs it and then explained, on a new store and one from before the step."""

from __future__ import annotations

from pathlib import Path

from engram.db import migrate as migrations
from engram.db.sqlite import Database
from engram.engine import Engram
from tests.migration_steps import sqlite_steps_before


def _erase_plans(engram: Engram) -> list[str]:
    """The query plans of the audit trail's reads that erasing one memory runs."""
    told = engram.remember("my bank password hint is blue").memory.id
    engram.remember("the weather was fine", key="weather")
    engram.link(told, "weather")
    engram.recall("password hint")
    seen: list[str] = []
    with engram.store.db.read() as conn:
        conn.set_trace_callback(seen.append)
    try:
        engram.forget(told, erase=True)
    finally:
        with engram.store.db.read() as conn:
            conn.set_trace_callback(None)
    reads = [sql for sql in seen if sql.lstrip().upper().startswith("SELECT") and "FROM audit_log WHERE" in sql]
    assert reads, seen
    with engram.store.db.read() as conn:
        return [" | ".join(row[-1] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}")) for sql in reads]


def test_an_erase_reads_the_trail_through_its_indexes(tmp_path: Path) -> None:
    with Engram.from_settings(home=tmp_path, embeddings={"provider": "none"}, files={"enabled": False}) as engram:
        plans = _erase_plans(engram)
    assert all("SCAN audit_log" not in plan for plan in plans), plans
    assert any("audit_log_mentions" in plan for plan in plans) and any("audit_log_memory" in plan for plan in plans)


def test_a_store_from_before_the_step_gets_the_index(tmp_path: Path) -> None:
    db = Database(tmp_path / "memory.db")
    with db.write() as conn:
        sqlite_steps_before(conn, 16)
        assert conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'audit_log_mentions'").fetchone() is None
    db.close()
    with Engram.from_settings(home=tmp_path, embeddings={"provider": "none"}, files={"enabled": False}) as engram:
        assert 16 in migrations.applied(engram.store.db)
        plans = _erase_plans(engram)
    assert all("SCAN audit_log" not in plan for plan in plans), plans
