"""Schema step 0012: full text folds diacritics as SQLite's FTS5 does (``cafe`` finds "café" and
``José`` finds "Jose"), with no extension, in the indexed text and in queries alike."""

from __future__ import annotations

from collections.abc import Callable

import psycopg

from engram import text
from engram.db.postgres import PgDatabase
from engram.engine import Engram
from engram.store.postgres import PostgresMemoryStore
from engram.testing.fakes import FakeClock

# engram_words as step 0011 defined it, before step 0012 folded diacritics in it.
_WORDS_0011 = """CREATE OR REPLACE FUNCTION engram_words(t TEXT) RETURNS TEXT LANGUAGE SQL IMMUTABLE PARALLEL SAFE
AS $$ SELECT translate(t, E'!"#$%&\\'()*+,-./:;<=>?@[\\\\]^_`{|}~', repeat(' ', 32)) $$"""


def test_engram_fold_is_engram_text_fold_on_every_code_point(pg_url: str) -> None:
    # engram.text.fold is pinned to SQLite's tokenizer (tests/unit/test_text_fold.py).
    chars = [chr(cp) for cp in range(0x80, 0x10000) if not 0xD800 <= cp < 0xE000]
    with psycopg.connect(pg_url) as conn:
        folded = conn.execute("SELECT array_agg(engram_fold(c) ORDER BY n) FROM unnest(%s::text[])"
                              " WITH ORDINALITY u(c, n)", [chars]).fetchone()[0]
    assert {c: f for c, f in zip(chars, folded, strict=True) if f != c} == {
        c: text.fold(c) for c in chars if text.fold(c) != c}
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT engram_fold('Café à José, naïve Ærø ok')").fetchone()[0] == "Cafe a Jose, naive Ærø ok"


def _as_before_the_step(url: str) -> None:
    """Turns the database into one from before step 0012: the old engram_words, the rows' full-text
    columns computed by it (an UPDATE recomputes them), the step's function and record gone."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(_WORDS_0011)
        conn.execute("UPDATE memories SET content = content")
        conn.execute("DROP FUNCTION engram_fold(text)")
        conn.execute("DELETE FROM schema_migrations WHERE version = 12")


def _row_versions(url: str) -> dict[str, str]:
    with psycopg.connect(url) as conn:
        return dict(conn.execute("SELECT content, ctid::text FROM memories").fetchall())


def test_a_store_from_before_the_step_folds_diacritics(new_database: Callable[[], str]) -> None:
    url = new_database()
    mem = Engram(PostgresMemoryStore(PgDatabase.connect(url)), agent="alice", clock=FakeClock())
    # Keys given: a key made from the content is folded already (met-jose-cafe), and the key is
    # searched too, so it would find "cafe" before the step; the content is what the step folds.
    mem.remember("Met José at the café", key="first")
    mem.remember("Tea with Jose at noon", key="second")
    mem.close()
    _as_before_the_step(url)
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT count(*) FROM memories WHERE search_all @@ to_tsquery('english', 'cafe')"
                            ).fetchone()[0] == 0
    before = _row_versions(url)
    mem = Engram(PostgresMemoryStore(PgDatabase.connect(url)), agent="alice", clock=FakeClock())
    try:
        assert [h.memory.content for h in mem.recall("cafe")] == ["Met José at the café"]
        assert sorted(m.content for m in mem.forget(query="josé", dry_run=True)) == [
            "Met José at the café", "Tea with Jose at noon"]
    finally:
        mem.close()
    after = _row_versions(url)
    # Only the row with a letter to fold was rewritten; the other kept its place in the table.
    assert after["Tea with Jose at noon"] == before["Tea with Jose at noon"]
    assert after["Met José at the café"] != before["Met José at the café"]


def test_the_step_reads_its_letters_as_utf8_whatever_the_clients_encoding(new_database: Callable[[], str]) -> None:
    url = new_database()
    _as_before_the_step(url)
    PgDatabase.connect(url + "?client_encoding=LATIN1").close()  # migrates
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT engram_fold('Café Łódź')").fetchone()[0] == "Cafe Łodz"
