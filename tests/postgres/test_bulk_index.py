"""A bulk load with the HNSW index deferred: vectors go in without it, recall is exact meanwhile,
and ``build_vector_index`` creates the same index the live path would, after which recall uses it."""

from __future__ import annotations

import psycopg

from engram.db.postgres import PgDatabase
from engram.engine import Engram
from engram.model import Memory
from engram.store.postgres import PostgresMemoryStore
from engram.testing.fakes import HashingEmbedder


def _indexes(url: str) -> list[str]:
    with psycopg.connect(url) as conn:
        return [r[0] for r in conn.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'memory_vectors' AND indexname LIKE '%hnsw%'")]


def test_deferred_index_is_built_after_the_load(pg_url: str) -> None:
    embedder = HashingEmbedder()
    store = PostgresMemoryStore(PgDatabase.connect(pg_url), defer_vector_index=True)
    mem = Engram(store, agent="a", embedder=embedder)
    try:
        assert store.build_vector_index() is False  # nothing loaded: no identity, no index
        texts = [f"note {i} about {'kiwis' if i == 42 else 'apples'} and topic {i % 13}" for i in range(300)]
        memories = [Memory(id=f"m{i:03d}", key=f"k{i}", content=t, created_at=1.7e9 + i, updated_at=1.7e9 + i)
                    for i, t in enumerate(texts)]
        store.import_memories(memories)
        store.set_vectors(str(embedder.identity), list(zip([m.id for m in memories], embedder.embed(texts), strict=True)))
        assert _indexes(pg_url) == []
        before = [h.memory.id for h in mem.recall("kiwis", limit=3, mode="vector", touch=False).hits]
        assert store.build_vector_index() is True
        assert _indexes(pg_url) == ["memory_vectors_hnsw_64"]
        after = [h.memory.id for h in mem.recall("kiwis", limit=3, mode="vector", touch=False).hits]
        assert before[0] == after[0] == "m042"
        assert store.build_vector_index() is True  # idempotent
    finally:
        mem.close()
