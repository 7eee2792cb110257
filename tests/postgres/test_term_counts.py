"""BM25 on PostgreSQL reads term frequencies and row lengths from ``search_counts`` (migration
0010), not by unnesting each row's tsvector (store/pg_text.py). The column must say exactly what
the tsvector says, on insert, update and for stores migrated from before it, and the scores must
be those the tsvector's frequencies give (with the row length FTS5 counts, step 0014), to the bit."""

from __future__ import annotations

from collections.abc import Callable

import psycopg
import pytest

from engram.db.postgres import PgDatabase
from engram.model import Memory, MemoryFilter, Scope
from engram.store import bm25
from engram.store.postgres import PostgresMemoryStore

FILT = MemoryFilter(scopes=(Scope(), Scope("a")))

# Each lexeme's weighted frequency and the row's length, computed from the tsvector itself
# (the form bm25_sql used before the column), with bm25.COLUMN_WEIGHTS' values.
_KEY, _CONTENT, _CONTEXT, _TIME = bm25.COLUMN_WEIGHTS
_FROM_TSVECTOR = (
    "SELECT m.id, u.lexeme, cardinality(u.positions),"
    f" ({_KEY} * cardinality(array_positions(u.weights, 'A')) + {_CONTENT} * cardinality(array_positions(u.weights, 'B'))"
    f" + {_CONTEXT} * cardinality(array_positions(u.weights, 'C')))::float8"
    " FROM memories m, unnest(m.search_all) u"
)


def _memories() -> list[Memory]:
    rows = [
        ("m0", "apples", "apples and pears, apples again", None),
        ("m1", "k1", "a kiwi's peel isn't \\ food", "fruit talk about kiwis"),
        ("m2", "pears", "pears", "pears pears"),
        ("m3", "k3", "the", None),  # a stopword only: no content lexeme at all
    ]
    return [Memory(id=i, key=key, content=content, scope=Scope("a"), search_context=context,
                   created_at=1.7e9 + n * 86400, updated_at=1.7e9 + n * 86400)
            for n, (i, key, content, context) in enumerate(rows)]


def _check_counts(conn: psycopg.Connection) -> None:
    expected: dict[str, dict[str, float]] = {}
    for memory_id, lexeme, positions, frequency in conn.execute(_FROM_TSVECTOR).fetchall():
        row = expected.setdefault(memory_id, {"": 0.0})
        row[""] += positions
        if frequency != 1.0:
            row[lexeme] = frequency
    stored = {memory_id: {k: float(v) for k, v in counts.items()}
              for memory_id, counts in conn.execute("SELECT id, search_counts FROM memories").fetchall()}
    assert stored == expected


def test_the_counts_are_the_tsvectors_on_insert_and_update(pg_url: str) -> None:
    store = PostgresMemoryStore(PgDatabase.connect(pg_url))
    try:
        store.import_memories(_memories())
        with psycopg.connect(pg_url) as conn:
            _check_counts(conn)
            # A key repeated in the content, a context word: frequencies other than 1 are kept.
            counts = dict(conn.execute("SELECT id, search_counts FROM memories").fetchall())
            assert float(counts["m0"]["appl"]) == _KEY + 2 * _CONTENT
            assert float(counts["m2"]["pear"]) == pytest.approx(_KEY + _CONTENT + 2 * _CONTEXT)
            conn.execute("UPDATE memories SET content = 'kiwis kiwis', search_context = NULL WHERE id = 'm1'")
            _check_counts(conn)
    finally:
        store.close()


def test_scores_are_the_ones_the_tsvector_gives(pg_url: str) -> None:
    store = PostgresMemoryStore(PgDatabase.connect(pg_url))
    try:
        store.import_memories(_memories())
        hits = [(m.id, score) for m, score in store.search_text("apples kiwis pears peel food", FILT, limit=10)]
        assert {i for i, _ in hits} == {"m0", "m1", "m2"}
        # The same BM25 computed from the tsvector, as before the column, with the store's weights.
        from engram import text
        from engram.store import pg_text

        terms = text.query_terms("apples kiwis pears peel food")
        with store.db.read() as conn:
            lexemes, freqs = store._queries.get(conn, terms, store._term_stats.get(conn))
            lexeme_list, idfs, avgdl = store._weights(conn, terms, lexemes, freqs)
            rows = conn.execute(
                "SELECT m.id, sum(w.idf * u.f * %s / (u.f + %s * (%s + %s * d.dl / %s)))"
                " FROM memories m,"
                # The row's length is FTS5's count, stopwords included (step 0014): not the tsvector's.
                " LATERAL (SELECT engram_row_length(m.key, m.content, m.search_context) AS dl) d,"
                " LATERAL (" + _FROM_TSVECTOR.replace("FROM memories m, unnest(m.search_all) u",
                                                      "FROM unnest(m.search_all) u")
                .replace("SELECT m.id, u.lexeme, cardinality(u.positions),", "SELECT u.lexeme,") + ") u(lexeme, f),"
                " unnest(%s::text[], %s::float8[]) WITH ORDINALITY w(lexeme, idf, nth)"
                " WHERE u.lexeme = w.lexeme GROUP BY m.id",
                [bm25.K1 + 1, bm25.K1, 1 - bm25.B, bm25.B, avgdl, lexeme_list, idfs],
            ).fetchall()
        assert pg_text.bm25_params(lexeme_list, idfs, avgdl)[0] == lexeme_list
        reference = dict(rows)
        for memory_id, score in hits:
            assert abs(score - reference[memory_id]) <= 1e-12 * reference[memory_id]
    finally:
        store.close()


def test_a_store_from_before_the_column_is_migrated(new_database: Callable[[], str]) -> None:
    url = new_database()
    store = PostgresMemoryStore(PgDatabase.connect(url))
    store.import_memories(_memories())
    store.close()
    with psycopg.connect(url, autocommit=True) as conn:  # back to the schema before step 0010
        conn.execute("ALTER TABLE memories DROP COLUMN search_counts")
        conn.execute("DROP FUNCTION engram_term_counts(tsvector)")
        conn.execute("DELETE FROM schema_migrations WHERE version = 10")
    store = PostgresMemoryStore(PgDatabase.connect(url))
    try:
        with psycopg.connect(url) as conn:
            _check_counts(conn)
        assert [m.id for m, _ in store.search_text("pears", FILT, limit=5)] == ["m2", "m0"]
    finally:
        store.close()


def test_a_probe_matches_its_lexeme_alone_whatever_it_holds(pg_url: str) -> None:
    from engram.store.pg_text import bm25_params

    lexemes = ["it's", "back\\slash", "a:b", "x & y", "plain"]
    probes = bm25_params(lexemes, [1.0] * len(lexemes), 1.0)[3]
    with psycopg.connect(pg_url) as conn:
        for lexeme, probe in zip(lexemes, probes, strict=True):
            held, other = conn.execute(
                "SELECT array_to_tsvector(ARRAY[%s]) @@ %s::tsquery, array_to_tsvector(ARRAY['plainer']) @@ %s::tsquery",
                [lexeme, probe, probe]).fetchone()
            assert held and not other, lexeme
