"""Schema step 0011: full text splits words at punctuation, as SQLite's FTS5 does, so a query's
word tokens ("python 3.12" is python, 3 and 12) find the memories holding them."""

from __future__ import annotations

from collections.abc import Callable

import psycopg

from engram.db.postgres import PgDatabase
from engram.engine import Engram
from engram.store.postgres import PostgresMemoryStore
from engram.testing.fakes import FakeClock


def test_punctuation_splits_words_as_fts5_does(pg_url: str) -> None:
    with psycopg.connect(pg_url) as conn:
        words = conn.execute(
            "SELECT tsvector_to_array(to_tsvector('english', engram_words(t)))"
            " FROM unnest(%s::text[]) WITH ORDINALITY u(t, n) ORDER BY n",
            [["python 3.12", "bob@example.com", "/usr/bin/env", "-12", "v1.2.3", "e-mail", "it's"]],
        ).fetchall()
    assert [sorted(w) for (w,) in words] == [
        ["12", "3", "python"], ["bob", "com", "exampl"], ["bin", "env", "usr"], ["12"], ["2", "3", "v1"],
        ["e", "mail"], []]


def test_a_store_from_before_the_step_is_searchable_by_dotted_words(new_database: Callable[[], str]) -> None:
    url = new_database()
    mem = Engram(PostgresMemoryStore(PgDatabase.connect(url)), agent="alice", clock=FakeClock())
    mem.remember("Upgraded the build to python 3.12 today")
    mem.close()
    with psycopg.connect(url, autocommit=True) as conn:  # the step's columns gone, its record too
        conn.execute("DROP FUNCTION engram_search_all(text, text, text, double precision) CASCADE")
        conn.execute("DROP FUNCTION engram_words(text) CASCADE")
        conn.execute("DELETE FROM schema_migrations WHERE version = 11")
    mem = Engram(PostgresMemoryStore(PgDatabase.connect(url)), agent="alice", clock=FakeClock())
    try:
        assert [m.content for m in mem.forget(query="python 3.12", dry_run=True)] == [
            "Upgraded the build to python 3.12 today"]
        assert mem.recall("3.12").hits[0].memory.content == "Upgraded the build to python 3.12 today"
    finally:
        mem.close()
