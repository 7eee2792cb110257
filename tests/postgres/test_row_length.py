"""Schema step 0014: a row's length, as BM25 weighs it, counts its words as SQLite's FTS5 does
(stopwords included), on insert, on update and for stores from before the step, which re-count
only the rows whose length changes."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import psycopg

from engram.db.postgres import PgDatabase
from engram.model import Memory, MemoryFilter, Scope
from engram.store import bm25
from engram.store.postgres import PostgresMemoryStore
from engram.store.sqlite import SqliteMemoryStore

FILT = MemoryFilter(scopes=(Scope(), Scope("a")))


def _memories() -> list[Memory]:
    rows = [
        ("m0", "k0", "Python 3.11 release notes", None),  # no stopword: its tsvector's count is FTS5's
        ("m1", "k1", "The café is where we met José", "it was the first time"),
        ("m2", "what it is", "It is what it is, and that is all", None),
        # More of one word than a tsvector keeps positions for (255): its length is still every word.
        ("m3", "k3", "word " * 300, None),
    ]
    return [Memory(id=i, key=key, content=content, scope=Scope("a"), search_context=context,
                   created_at=1.7e9 + n * 86400, updated_at=1.7e9 + n * 86400)
            for n, (i, key, content, context) in enumerate(rows)]


def _fts5_lengths(path: Path) -> dict[str, int]:
    """Each row's length in tokens as FTS5 keeps it (``memories_fts_docsize``)."""
    with sqlite3.connect(path) as conn:
        return {memory_id: sum(bm25._varints(bytes(size))) for memory_id, size in conn.execute(
            "SELECT m.id, d.sz FROM memories m JOIN memories_fts_docsize d ON d.id = m.rowid")}


def _pg_lengths(url: str) -> dict[str, tuple[int | None, int]]:
    with psycopg.connect(url) as conn:
        return {memory_id: (length, int(counted)) for memory_id, length, counted in conn.execute(
            "SELECT id, search_length, (search_counts ->> '')::int FROM memories")}


def _sqlite(path: Path, memories: list[Memory]) -> SqliteMemoryStore:
    lite = SqliteMemoryStore(path)
    lite.import_memories(memories)
    return lite


def test_lengths_are_fts5s_on_insert_and_update(pg_url: str, tmp_path: Path) -> None:
    memories = _memories()
    store = PostgresMemoryStore(PgDatabase.connect(pg_url))
    _sqlite(tmp_path / "m.db", memories).close()
    try:
        store.import_memories(memories)
        assert {i: n for i, (n, _) in _pg_lengths(pg_url).items()} == _fts5_lengths(tmp_path / "m.db")
        with psycopg.connect(pg_url) as conn:
            conn.execute("UPDATE memories SET content = 'the end of it', search_context = 'and so on' WHERE id = 'm0'")
            conn.execute("UPDATE memories SET key = 'the key' WHERE id = 'm1'")
            conn.execute("UPDATE memories SET recall_count = recall_count + 1 WHERE id = 'm2'")
            changed = [(i, k, c, s) for i, k, c, s in conn.execute(
                "SELECT id, key, content, search_context FROM memories ORDER BY id")]
        edited = [Memory(id=i, key=k, content=c, scope=Scope("a"), search_context=s,
                         created_at=m.created_at, updated_at=m.updated_at)
                  for (i, k, c, s), m in zip(changed, memories, strict=True)]
        _sqlite(tmp_path / "edited.db", edited).close()
        assert {i: n for i, (n, _) in _pg_lengths(pg_url).items()} == _fts5_lengths(tmp_path / "edited.db")
    finally:
        store.close()


def _as_before_the_step(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP TRIGGER memories_search_length ON memories")
        conn.execute("DROP FUNCTION engram_keep_search_length()")
        conn.execute("ALTER TABLE memories DROP COLUMN search_length")
        conn.execute("DROP FUNCTION engram_row_length(text, text, text)")
        conn.execute("DROP FUNCTION engram_word_count(text)")
        conn.execute("DELETE FROM schema_migrations WHERE version = 14")


def test_a_store_from_before_the_step_recounts_only_the_rows_that_change(
        new_database: Callable[[], str], tmp_path: Path) -> None:
    url = new_database()
    memories = _memories()
    PostgresMemoryStore(PgDatabase.connect(url)).import_memories(memories)
    _as_before_the_step(url)
    with psycopg.connect(url) as conn:
        before = dict(conn.execute("SELECT id, ctid::text FROM memories").fetchall())
    lite = _sqlite(tmp_path / "m.db", memories)
    store = PostgresMemoryStore(PgDatabase.connect(url))  # migrates
    try:
        lengths = _pg_lengths(url)
        # The row without a stopword kept its length (NULL: the tsvector's count) and its place.
        assert lengths["m0"][0] is None
        with psycopg.connect(url) as conn:
            after = dict(conn.execute("SELECT id, ctid::text FROM memories").fetchall())
        assert after["m0"] == before["m0"]
        assert all(after[i] != before[i] for i in ("m1", "m2", "m3"))
        fts5 = _fts5_lengths(tmp_path / "m.db")
        assert {i: counted if n is None else n for i, (n, counted) in lengths.items()} == fts5
        # Not "word": its frequency in m3 is the tsvector's, 255 (docs/postgres.md).
        for query in ("python 3.11", "cafe time", "first"):
            on_pg = {m.id: s for m, s in store.search_text(query, FILT, limit=10)}
            on_lite = {m.id: s for m, s in lite.search_text(query, FILT, limit=10)}
            assert on_pg.keys() == on_lite.keys() and on_pg, query
            assert all(abs(on_pg[i] - on_lite[i]) <= 1e-6 * on_lite[i] for i in on_lite), query
    finally:
        store.close()
        lite.close()
