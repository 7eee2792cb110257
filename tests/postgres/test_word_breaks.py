"""Schema step 0015: full text breaks words at every character SQLite's FTS5 breaks them at
(``engram_breaks``), and counts a word's every occurrence in a memory whose ``tsvector`` reached
its limits (``search_counts_full``); a store from before the step is brought up to both."""

from __future__ import annotations

from collections.abc import Callable

import psycopg

from engram.db.postgres import PgDatabase
from engram.db.sqlite import driver
from engram.engine import Engram
from engram.model import MemoryFilter, Scope
from engram.store.postgres import PostgresMemoryStore
from engram.testing.fakes import FakeClock

_SURROGATES = range(0xD800, 0xE000)


def fts5_breaks() -> set[int]:
    """The non-ASCII code points FTS5's unicode61 tokenizer reads as a break between words:
    ``q<c>q`` is two tokens."""
    conn = driver.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'unicode61')")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    conn.executemany("INSERT INTO t (rowid, x) VALUES (?, ?)",
                     ((cp, f"q{chr(cp)}q") for cp in range(0x80, 0x110000) if cp not in _SURROGATES))
    return {doc for doc, tokens in conn.execute("SELECT doc, count(*) FROM v GROUP BY doc") if tokens != 1}


def test_engram_breaks_breaks_where_fts5_does_on_every_code_point(pg_url: str) -> None:
    with psycopg.connect(pg_url) as conn:
        broken = {cp for (cp,) in conn.execute(
            "SELECT c FROM generate_series(128, 1114111) c"
            " WHERE (c < 55296 OR c > 57343) AND engram_breaks('q' || chr(c) || 'q') = 'q q'")}
        # What PostgreSQL's parser keeps in a word on its own (this server's LC_CTYPE), now broken.
        assert conn.execute("SELECT tsvector_to_array(to_tsvector('english', engram_words(%s)))",
                            ["co\u00adoperation hello\u200dworld side\u0332line"]).fetchone()[0] == [
            "co", "hello", "line", "oper", "side", "world"]
        # ASCII punctuation breaks words too (step 0011), exactly as before the step.
        ascii_chars = "".join(chr(cp) for cp in range(1, 128))
        assert conn.execute("SELECT engram_words(%s)", [ascii_chars]).fetchone()[0] == conn.execute(
            "SELECT translate(%s, E'!\"#$%%&\\'()*+,-./:;<=>?@[\\\\]^_`{|}~', repeat(' ', 32))", [ascii_chars]).fetchone()[0]
    assert broken == fts5_breaks()


# engram_words and the length trigger as steps 0012 and 0014 left them, before step 0015.
_BEFORE = [
    """CREATE OR REPLACE FUNCTION engram_words(t TEXT) RETURNS TEXT LANGUAGE SQL IMMUTABLE PARALLEL SAFE AS $$
    SELECT translate(engram_fold(t), E'!"#$%&\\'()*+,-./:;<=>?@[\\\\]^_`{|}~', repeat(' ', 32)) $$""",
    """CREATE OR REPLACE FUNCTION engram_keep_search_length() RETURNS TRIGGER LANGUAGE plpgsql AS $$
    BEGIN NEW.search_length := engram_row_length(NEW.key, NEW.content, NEW.search_context); RETURN NEW; END $$""",
    "UPDATE memories SET content = content",
    "ALTER TABLE memories DROP COLUMN search_counts_full",
    "DROP FUNCTION engram_breaks(text)",
    "DROP FUNCTION engram_spaced(text)",
    "DROP FUNCTION engram_full_term_counts(text, text, text, double precision)",
    "DROP FUNCTION engram_positions_capped(tsvector)",
    "DELETE FROM schema_migrations WHERE version = 15",
]


def _row_versions(url: str) -> dict[str, str]:
    with psycopg.connect(url) as conn:
        return dict(conn.execute("SELECT key, ctid::text FROM memories").fetchall())


def test_a_store_from_before_the_step_breaks_words_and_counts_in_full(new_database: Callable[[], str]) -> None:
    url = new_database()
    clock = FakeClock()
    mem = Engram(PostgresMemoryStore(PgDatabase.connect(url)), agent="alice", clock=clock, max_content_chars=10_000)
    for n in range(6):
        mem.remember(f"unrelated note {n}", key=f"note-{n}")
    fewer = " ".join(["zebra"] * 300 + [f"w{n}" for n in range(100)])
    more = " ".join(["zebra"] * 400)
    for key, content in (("fewer", fewer), ("more", more), ("soft", "More co\u00adoperation between teams")):
        clock.advance(1)
        mem.remember(content, key=key)
    mem.close()
    with psycopg.connect(url, autocommit=True) as conn:
        for statement in _BEFORE:
            conn.execute(statement)
    before = _row_versions(url)
    store = PostgresMemoryStore(PgDatabase.connect(url))
    mem = Engram(store, agent="alice", clock=clock)
    try:
        assert [m.content for m in mem.forget(query="operation", dry_run=True)] == ["More co\u00adoperation between teams"]
        filt = MemoryFilter(scopes=(Scope(), Scope("alice")))
        assert [m.key for m, _ in store.search_text("zebra", filt, limit=5)] == ["more", "fewer"]
    finally:
        mem.close()
    after = _row_versions(url)
    # Only the row whose words change was rewritten; the long rows' counts were written beside
    # them (a new row version, without deriving the full-text columns again), the others kept.
    assert after["soft"] != before["soft"]
    assert all(after[f"note-{n}"] == before[f"note-{n}"] for n in range(6))
    with psycopg.connect(url) as conn:
        assert dict(conn.execute("SELECT key, search_counts_full IS NOT NULL FROM memories"
                                 " WHERE key IN ('fewer', 'more', 'soft')").fetchall()) == {
            "fewer": True, "more": True, "soft": False}


def test_counts_follow_writes(pg_url: str) -> None:
    # The trigger keeps search_counts_full on insert and on a change of the words; NULL when the
    # tsvector holds every occurrence.
    store = PostgresMemoryStore(PgDatabase.connect(pg_url))
    mem = Engram(store, agent="alice", clock=FakeClock(), max_content_chars=10_000)
    mem.remember(" ".join(["zebra"] * 300), key="long")
    with psycopg.connect(pg_url) as conn:
        counts = conn.execute("SELECT search_counts_full FROM memories WHERE key = 'long'").fetchone()[0]
        assert counts["zebra"] == 300 and counts["long"] == 2.0
        mem.remember("zebra " * 3, key="long")
        assert conn.execute("SELECT search_counts_full FROM memories WHERE key = 'long'").fetchone()[0] is None
    mem.close()
