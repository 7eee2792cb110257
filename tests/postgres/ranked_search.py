"""The PostgreSQL store's full-text answer with a given ranking budget, recording which row sets
it ranked: shared by the tests of the large-table candidate paths (``store/pg_candidates.py``), with the
ANALYZE that holds their statistics still (``analyze_and_hold``)."""

from __future__ import annotations

from engram.db.postgres import PgDatabase
from engram.model import MemoryFilter
from engram.store.index_settings import FullTextSettings
from engram.store.postgres import PostgresMemoryStore


def search_text(url: str, max_ranked_rows: int, query: str, filt: MemoryFilter, *, limit: int = 10,
                ranked: list[list[list[str]]] | None = None) -> list[tuple[str, float]]:
    """The store's ``(id, score)`` answer; ``ranked`` receives each row set it ranked, as the term
    sets a row held all of one of."""
    store = PostgresMemoryStore(PgDatabase.connect(url), full_text=FullTextSettings(max_ranked_rows=max_ranked_rows))
    if ranked is not None:
        inner = store._ranked_any_of

        def recording(conn, weights, sets, where, params, limit):  # type: ignore[no-untyped-def]
            ranked.append([list(one) for one in sets])
            return inner(conn, weights, sets, where, params, limit)

        store._ranked_any_of = recording  # type: ignore[method-assign]
    try:
        return [(m.id, score) for m, score in store.search_text(query, filt, limit=limit)]
    finally:
        store.close()


def analyze_and_hold(store: PostgresMemoryStore) -> None:
    """ANALYZE ``store``'s table and keep autovacuum off it, so the statistics BM25 reads (the row
    estimate, the common lexemes' shares) stay what this ANALYZE made while a test compares two
    searches: an autovacuum landing between them (the bulk import passes its insert threshold)
    moved ``reltuples`` and with it every IDF, and the two answers differed in the fourth digit."""
    store.db.transact(lambda conn: (conn.execute("ALTER TABLE memories SET (autovacuum_enabled = false)"),
                                    conn.execute("ANALYZE memories")))
