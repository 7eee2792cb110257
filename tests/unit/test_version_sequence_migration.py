"""Step 0012: memory_versions gets a sequence that only rises (the Tantivy index beside the file
reads it), keeping every existing version, its place in the memory's history and the order."""

from __future__ import annotations

import time

from engram.db import migrate as migrations
from engram.db.sqlite import Database
from engram.model import Scope, make_draft
from engram.store.sqlite import SqliteMemoryStore


def _store_before_0012(path) -> None:
    db = Database(path)
    with db.write() as conn:
        conn.execute(migrations._RECORD_TABLE)
        for step in migrations.available("sqlite"):
            if step.version >= 12:
                continue
            for statement in migrations._statements(step.sql):
                conn.execute(statement)
            conn.execute("INSERT INTO schema_migrations VALUES (?, ?, ?)", (step.version, step.name, time.time()))
        conn.execute(
            "INSERT INTO memories (id, agent, session, metadata, tags, category, type, layer, content_hash, key,"
            " content, created_at, updated_at) VALUES ('m1', '', '', '{}', '[]', 'knowledge', 'learned', 'semantic',"
            " 'h', 'home', 'User lives in Paris', 100.0, 400.0)")
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
