"""Steps 0012 and 0013, for the Tantivy index beside the file (store/sqlite_text.py): memory_versions
gets a sequence that only rises, keeping every version and their order; memory_reindex keeps its
marks and its sequence and no longer loses a mark with its memory (forgotten rows are marked)."""

from __future__ import annotations

from engram.db import migrate as migrations
from engram.db.sqlite import Database
from engram.model import Scope, make_draft
from engram.store.sqlite import SqliteMemoryStore
from tests.migration_steps import sqlite_steps_before


def _store_before(path, version: int) -> Database:
    """A store as engram left it before step ``version``, with one memory (``m1``, key ``home``)."""
    db = Database(path)
    with db.write() as conn:
        sqlite_steps_before(conn, version)
        for memory_id, key in (("m1", "home"), ("m2", "work")):
            conn.execute(
                "INSERT INTO memories (id, agent, session, metadata, tags, category, type, layer, content_hash, key,"
                " content, created_at, updated_at) VALUES (?, '', '', '{}', '[]', 'knowledge', 'learned', 'semantic',"
                " 'h', ?, 'User lives in Paris', 100.0, 400.0)", (memory_id, key))
    return db


def _store_before_0012(path) -> None:
    db = _store_before(path, 12)
    with db.write() as conn:
        # Two versions replaced at the same moment: the order as stored breaks the tie.
        conn.executemany("INSERT INTO memory_versions (rowid, memory_id, content, replaced_at) VALUES (?, 'm1', ?, ?)",
                         [(4, "User lives in Rome", 300.0), (2, "User lives in Berlin", 200.0),
                          (3, "User lives in Oslo", 200.0), (9, "gone", 350.0)])
        conn.execute("DELETE FROM memory_versions WHERE rowid = 9")  # the newest row, forgotten before the step
    db.close()


def test_versions_keep_their_order_and_the_sequence_rises_from_the_highest(tmp_path) -> None:
    path = tmp_path / "memory.db"
    _store_before_0012(path)
    store = SqliteMemoryStore(path)
    try:
        assert 12 in migrations.applied(store.db)
        assert [v.content for v in store.versions("m1")] == [
            "User lives in Berlin", "User lives in Oslo", "User lives in Rome"]
        store.upsert(make_draft("User lives in Lyon", key="home", scope=Scope(), max_content_chars=2000), proposed_key="home",
                     now=500.0)
        with store.db.read() as conn:
            rows = conn.execute("SELECT seq, content FROM memory_versions ORDER BY seq").fetchall()
            sequence = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'memory_versions'").fetchone()[0]
        assert rows == [(2, "User lives in Berlin"), (3, "User lives in Oslo"), (4, "User lives in Rome"),
                        (5, "User lives in Paris")]
        assert sequence == 5
    finally:
        store.close()


def test_reindex_marks_and_their_sequence_are_kept_and_outlive_their_memory(tmp_path) -> None:
    path = tmp_path / "memory.db"
    db = _store_before(path, 13)
    with db.write() as conn:
        conn.executemany("INSERT INTO memory_reindex (memory_rowid) VALUES (?)", [(1,), (2,)])
        conn.execute("DELETE FROM memories WHERE id = 'm2'")  # its mark went with it (ON DELETE CASCADE)
    db.close()
    store = SqliteMemoryStore(path)
    try:
        assert 13 in migrations.applied(store.db)
        with store.db.write() as conn:
            assert conn.execute("SELECT seq, memory_rowid FROM memory_reindex").fetchall() == [(1, 1)]
            assert conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'memory_reindex'").fetchone() == (2,)
            conn.execute("DELETE FROM memories WHERE id = 'm1'")
            conn.execute("INSERT INTO memory_reindex (memory_rowid) VALUES (7)")  # a forgotten row's mark
            assert conn.execute("SELECT seq, memory_rowid FROM memory_reindex").fetchall() == [(1, 1), (3, 7)]
    finally:
        store.close()
