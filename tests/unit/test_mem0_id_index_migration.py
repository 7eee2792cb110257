"""Step 0015: ``memories_mem0_id``, the index the mem0 facade finds a memory by the id mem0 gave it
through (``metadata["mem0"]["id"]``), and ``audit_log_mem0_id``, the one it finds a deleted memory's
trail through, on a store migrated from before the step and on a new one. The queries are the ones
``Memory.get`` and ``Memory.history`` run for a mem0 id, caught as SQLite runs them and then
explained: a seek through the index, where it read the JSON of every row of the owners' scopes."""

from __future__ import annotations

import json
from pathlib import Path

from engram.compat.mem0 import Memory
from engram.db import migrate as migrations
from engram.db.sqlite import Database
from engram.engine import Engram
from tests.migration_steps import sqlite_steps_before

MEM0_ID = "5a0c6a1e-1111-4c1b-9d35-0a1b2c3d4e5f"


def _store_before_0015(path: Path) -> None:
    """A store as engram left it before step 15: alice's memory that ``import_mem0`` brought (its mem0
    id at ``metadata["mem0"]["id"]``), and bob's own with a mem0 id that is not one (a number)."""
    db = Database(path)
    with db.write() as conn:
        sqlite_steps_before(conn, 15)
        rows = (("e1", "alice", {"user_id": "alice", "mem0": {"id": MEM0_ID, "hash": "h"}}, "mem0"),
                ("e2", "bob", {"user_id": "bob", "mem0": {"id": 7}}, "mem0"))
        for memory_id, agent, metadata, source in rows:
            conn.execute(
                "INSERT INTO memories (id, agent, session, metadata, tags, category, type, layer, content_hash, key,"
                " content, source, created_at, updated_at) VALUES (?, ?, '', ?, '[]', 'knowledge', 'learned', 'semantic',"
                " ?, ?, 'Keeps her blue umbrellas by the door', ?, 100.0, 400.0)",
                (memory_id, agent, json.dumps(metadata), memory_id, memory_id, source))
    db.close()


def _lookup_plans(facade: Memory, mem0_id: str) -> tuple[dict | None, list[str]]:
    """``facade.get(mem0_id)`` and the query plans of its reads of the memories by mem0 id."""
    db = facade.engram.store.db
    seen: list[str] = []
    with db.read() as conn:
        conn.set_trace_callback(seen.append)
    try:
        found = facade.get(mem0_id)
    finally:
        with db.read() as conn:
            conn.set_trace_callback(None)
    lookups = [sql for sql in seen if '"mem0"."id"' in sql and sql.lstrip().upper().startswith("SELECT")]
    assert lookups, seen
    with db.read() as conn:
        return found, [" ".join(row[-1] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}")) for sql in lookups]


def test_a_store_from_before_the_step_gets_the_index_and_a_mem0_id_is_found_through_it(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    _store_before_0015(path)
    facade = Memory(Engram.from_settings(home=tmp_path, path=path, embeddings={"provider": "none"}))
    try:
        assert 15 in migrations.applied(facade.engram.store.db)
        found, plans = _lookup_plans(facade, MEM0_ID)
        assert all("USING INDEX memories_mem0_id" in plan for plan in plans), plans
        assert all("SCAN m" not in plan for plan in plans), plans
        assert found is not None and found["id"] == MEM0_ID and found["memory"] == "Keeps her blue umbrellas by the door"
        # A number is no mem0 id the lookup takes for the string "7", with or without the index.
        assert facade.get("7") is None
    finally:
        facade.close()


def test_the_history_of_a_memory_deleted_by_its_mem0_id_is_found_through_the_trails_index(tmp_path: Path) -> None:
    # The trail's forget row keeps the memory whole: its mem0 id leads to the engram id its rows are under.
    path = tmp_path / "memory.db"
    _store_before_0015(path)
    facade = Memory(Engram.from_settings(home=tmp_path, path=path, embeddings={"provider": "none"}))
    try:
        facade.delete(MEM0_ID)
        db = facade.engram.store.db
        seen: list[str] = []
        with db.read() as conn:
            conn.set_trace_callback(seen.append)
        try:
            history = facade.history(MEM0_ID)
        finally:
            with db.read() as conn:
                conn.set_trace_callback(None)
        assert [(e["event"], e["memory_id"]) for e in history][-1] == ("DELETE", MEM0_ID)
        lookups = [sql for sql in seen if '"metadata"."mem0"."id"' in sql]
        assert lookups, seen
        with db.read() as conn:
            plans = [" ".join(row[-1] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}")) for sql in lookups]
        assert all("USING INDEX audit_log_mem0_id" in plan for plan in plans), plans
    finally:
        facade.close()


def test_a_new_store_has_the_indexes(tmp_path: Path) -> None:
    db = Database(tmp_path / "memory.db")
    try:
        migrations.migrate(db)
        with db.read() as conn:
            assert conn.execute("SELECT sql FROM sqlite_master WHERE name = 'memories_mem0_id'").fetchone() == (
                "CREATE INDEX memories_mem0_id ON memories (json_extract(metadata, '$.\"mem0\".\"id\"'))"
                " WHERE json_extract(metadata, '$.\"mem0\".\"id\"') IS NOT NULL",)
            assert conn.execute("SELECT sql FROM sqlite_master WHERE name = 'audit_log_mem0_id'").fetchone() == (
                "CREATE INDEX audit_log_mem0_id ON audit_log (json_extract(detail, '$.\"metadata\".\"mem0\".\"id\"'))"
                " WHERE json_extract(detail, '$.\"metadata\".\"mem0\".\"id\"') IS NOT NULL",)
    finally:
        db.close()


def test_a_lookup_among_many_owners_names_them_in_one_list(tmp_path: Path) -> None:
    # The lookup names every owner's scope; SQLite planned an OR of a hundred scopes again at every
    # run (STAT4: a bound value re-plans the statement), ~6 ms of a lookup that reads one row. Past
    # filter_sql.MANY_SCOPES the scopes are one list (one parameter): the plan still seeks the index.
    facade = Memory(Engram.from_settings(home=tmp_path, path=tmp_path / "memory.db", embeddings={"provider": "none"}))
    try:
        owners = 20  # past filter_sql.MANY_SCOPES
        facade.import_mem0({"results": [
            {"id": f"m-{n}", "memory": f"note {n}", "hash": f"h{n}", "created_at": "2025-03-01T08:00:00+00:00",
             "user_id": f"user{n}"} for n in range(owners)]})
        db = facade.engram.store.db
        seen: list[str] = []
        with db.read() as conn:
            conn.set_trace_callback(seen.append)
        try:
            found = facade.get("m-7")
        finally:
            with db.read() as conn:
                conn.set_trace_callback(None)
        assert found is not None and (found["id"], found["user_id"]) == ("m-7", "user7")
        [lookup] = [sql for sql in seen if '"mem0"."id"' in sql and sql.lstrip().upper().startswith("SELECT")]
        assert lookup.count("m.agent = ") == 0 and "json_each(" in lookup, lookup
        with db.read() as conn:
            plan = " ".join(row[-1] for row in conn.execute(f"EXPLAIN QUERY PLAN {lookup}"))
        assert "USING INDEX memories_mem0_id" in plan, plan
    finally:
        facade.close()
