"""A bulk write into a new database leaves PostgreSQL statistics to plan by. Autovacuum analyzes
a table at most once a minute and counts only committed rows, so a table filled in bulk (an
import, ``remember_many``, a migration) had none: the planner read the duplicate check and the
key lookup of every later upsert through ``memories_scope_kind``, every row of the scope, rather
than through their own indexes, and each upsert slowed as the scope grew. The store analyzes the
table itself once it has inserted 50 rows + 10% of the rows last analyzed."""

from __future__ import annotations

from collections.abc import Callable

import psycopg

from engram import text
from engram.db.postgres import PgDatabase
from engram.model import Memory, Scope, make_draft
from engram.store.base import BatchWrite
from engram.store.postgres import PostgresMemoryStore

_ROWS = 300


def _plans(url: str) -> tuple[str, str]:
    """The plans of an upsert's duplicate check and of its key lookup (``_free_key``), as another
    connection sees them once the write committed."""
    with psycopg.connect(url) as conn:
        duplicate = conn.execute(
            "EXPLAIN SELECT id FROM memories m WHERE m.agent = %s AND m.session = %s AND m.content_hash = %s"
            " ORDER BY m.seq LIMIT 1", ("alice", "", text.content_hash("something new"))).fetchall()
        key = conn.execute("EXPLAIN SELECT key FROM memories WHERE agent = %s AND session = %s AND key = ANY(%s)",
                           ("alice", "", ["something-new", "something-new-2"])).fetchall()
    return "\n".join(row[0] for row in duplicate), "\n".join(row[0] for row in key)


def _assert_own_indexes(url: str) -> None:
    duplicate, key = _plans(url)
    assert "memories_scope_hash" in duplicate, duplicate
    assert "memories_agent_session_key_key" in key, key


def test_a_batch_write_into_a_new_database_leaves_the_upsert_queries_their_own_indexes(
        new_database: Callable[[], str]) -> None:
    url = new_database()
    store = PostgresMemoryStore(PgDatabase.connect(url))
    try:
        writes = [BatchWrite(make_draft(f"fact number {i} about item {i * 7}", scope=Scope("alice"), max_content_chars=500),
                             f"fact-{i}") for i in range(_ROWS)]
        results = store.write_batch(writes, now=1000.0, identity=None)  # one transaction, as remember_many
        assert [r.action for r in results] == ["created"] * _ROWS  # type: ignore[union-attr]
    finally:
        store.close()
    _assert_own_indexes(url)


def test_an_import_into_a_new_database_leaves_the_upsert_queries_their_own_indexes(
        new_database: Callable[[], str]) -> None:
    url = new_database()
    store = PostgresMemoryStore(PgDatabase.connect(url))
    try:
        memories = [Memory(id=f"m{i:05d}", key=f"fact-{i}", content=f"fact number {i} about item {i * 7}",
                           scope=Scope("alice"), created_at=1.0, updated_at=1.0) for i in range(_ROWS)]
        assert store.import_memories(memories).imported == _ROWS
    finally:
        store.close()
    _assert_own_indexes(url)
