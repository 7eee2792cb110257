"""A PostgreSQL vector search begun on another pooled connection (``start_vector_search``, which
hybrid recall uses so the server searches vectors while it searches full text) answers what
``search_vector`` answers: with more searches begun than threads, inside a transaction (where
it must see that transaction's writes), and when it fails."""

from __future__ import annotations

import pytest

from engram.config import RecallSettings
from engram.db.pg_settings import PostgresSettings
from engram.db.postgres import PgDatabase
from engram.engine import Engram
from engram.errors import StorageError
from engram.model import Memory, MemoryFilter, Scope
from engram.store.postgres import PostgresMemoryStore
from engram.testing.fakes import HashingEmbedder

FILT = MemoryFilter(scopes=(Scope(), Scope("a")))
TOPICS = ("apples", "kiwis", "plums", "pears", "figs", "limes", "dates", "grapes")


def _store(url: str, **settings: int) -> tuple[PostgresMemoryStore, HashingEmbedder]:
    embedder = HashingEmbedder()
    store = PostgresMemoryStore(PgDatabase.connect(url, PostgresSettings(**settings)))
    texts = [f"{TOPICS[i % 8]} note {i} about {TOPICS[(i * 3) % 8]}" for i in range(120)]
    memories = [Memory(id=f"m{i:03d}", key=f"k{i}", content=t, scope=Scope("a"), created_at=1.7e9 + i,
                       updated_at=1.7e9 + i) for i, t in enumerate(texts)]
    store.import_memories(memories)
    store.set_vectors(str(embedder.identity), list(zip([m.id for m in memories], embedder.embed(texts), strict=True)))
    return store, embedder


def _ids(hits: list[tuple[Memory, float]]) -> list[tuple[str, float]]:
    return [(m.id, round(score, 6)) for m, score in hits]


def _alike(a: list[tuple[str, float]], b: list[tuple[str, float]]) -> bool:
    """The same scores, and the same memories above the last score (hashed bag-of-words vectors
    tie, and HNSW may return equal neighbours in any order)."""
    last = a[-1][1] if a else 0.0
    return [s for _, s in a] == [s for _, s in b] and {i for i, s in a if s > last} == {i for i, s in b if s > last}


def test_begun_searches_answer_as_search_vector_even_with_every_thread_busy(pg_url: str) -> None:
    store, embedder = _store(pg_url, pool_max_size=3)
    try:
        vectors = [embedder.embed_query(f"{topic} note") for topic in TOPICS * 2]
        expected = [_ids(store.search_vector(v, FILT, limit=10)) for v in vectors]
        # More searches begun than the store has threads (and the pool connections): the ones not
        # begun when asked for run on the caller's thread.
        finishes = [store.start_vector_search(v, FILT, limit=10) for v in vectors]
        answers = [_ids(finish()) for finish in reversed(finishes)][::-1]
        assert all(_alike(a, e) and len(a) == 10 for a, e in zip(answers, expected, strict=True))
    finally:
        store.close()


def test_a_search_begun_inside_a_transaction_sees_its_writes(pg_url: str) -> None:
    store, embedder = _store(pg_url)
    try:
        query = embedder.embed_query("quinces quinces")

        def work(conn: object) -> list[tuple[str, float]]:
            store.import_memories([Memory(id="new", key="new", content="quinces quinces", scope=Scope("a"),
                                          created_at=1.8e9, updated_at=1.8e9)])
            store.set_vectors(str(embedder.identity), [("new", query)])
            return _ids(store.start_vector_search(query, FILT, limit=3)())

        assert store.db.transact(work)[0] == ("new", 1.0)
    finally:
        store.close()


def test_a_failed_begun_search_raises_when_its_hits_are_asked_for(pg_url: str) -> None:
    store, embedder = _store(pg_url)
    try:
        store.db.transact(lambda conn: conn.execute("ALTER TABLE memory_vectors RENAME TO vectors_gone"))
        finish = store.start_vector_search(embedder.embed_query("apples"), FILT, limit=5)
        with pytest.raises(StorageError):
            finish()
    finally:
        store.close()


def test_hybrid_recall_with_the_sides_side_by_side_ranks_as_one_after_the_other(pg_url: str) -> None:
    store, embedder = _store(pg_url)
    mem = Engram(store, agent="a", embedder=embedder, recall_settings=RecallSettings(cache_ttl_s=0))
    try:
        for query in ("apples note", "kiwis about plums", "note 7"):
            side_by_side = mem.recall(query, limit=8, touch=False)
            # The same recall with the vector side searched first, on the caller's thread.
            start = store.start_vector_search
            store.start_vector_search = lambda v, f, *, limit: (lambda hits: lambda: hits)(  # type: ignore[method-assign]
                store.search_vector(v, f, limit=limit))
            try:
                in_turn = mem.recall(query, limit=8, touch=False)
            finally:
                store.start_vector_search = start  # type: ignore[method-assign]
            assert side_by_side.mode == in_turn.mode == "hybrid"
            assert [(h.memory.id, h.score) for h in side_by_side.hits] == [(h.memory.id, h.score) for h in in_turn.hits]
    finally:
        mem.close()
