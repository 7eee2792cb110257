"""The HNSW graph's candidates are re-scored with the exact float32 vectors (``vector_index.rerank``).

The graph holds f16 copies: on near-duplicates whose cosines differ in the fifth decimal its own
order is wrong, and so are its scores. A small threshold forces the graph on a few dozen vectors
in a real SQLite file."""

from __future__ import annotations

import numpy as np
import pytest

from engram.model import MemoryFilter, Scope, make_draft
from engram.store.index_settings import VectorIndexSettings
from engram.store.sqlite import SqliteMemoryStore

pytest.importorskip("usearch")

DIMS = 64
IDENTITY = f"fake:test:{DIMS}"
FORCED = VectorIndexSettings(threshold=0, merge_after=8)
ALL = MemoryFilter(scopes=(Scope(),))


def _near_duplicates(n: int) -> tuple[np.ndarray, list[np.ndarray]]:
    """A query and ``n`` unit vectors at cosines 0.99, 0.99 - 1e-5, ... from it."""
    rng = np.random.default_rng(5)
    query = rng.normal(size=DIMS)
    query /= np.linalg.norm(query)
    vectors = []
    for i in range(n):
        side = rng.normal(size=DIMS)
        side -= (side @ query) * query
        side /= np.linalg.norm(side)
        cos = 0.99 - i * 1e-5
        vectors.append((cos * query + np.sqrt(1 - cos * cos) * side).astype(np.float32))
    return query.astype(np.float32), vectors


def _fill(store: SqliteMemoryStore, vectors: list[np.ndarray]) -> list[str]:
    order = np.random.default_rng(9).permutation(len(vectors))  # insertion order is not rank order
    ids: dict[int, str] = {}
    for i in order:
        draft = make_draft(f"memory {i}", key=f"k{i}", scope=Scope(), max_content_chars=8000)
        ids[int(i)] = store.upsert(draft, proposed_key=f"k{i}", now=1.0).memory.id
    store.set_vectors(IDENTITY, [(ids[i], vectors[i]) for i in range(len(vectors))])
    return [ids[i] for i in range(len(vectors))]


def test_graph_candidates_come_back_in_exact_order_with_exact_cosines(tmp_path):
    query, vectors = _near_duplicates(60)
    store = SqliteMemoryStore(tmp_path / "memory.db", vector_index=FORCED)
    ids = _fill(store, vectors)
    hits = store.search_vector(query, ALL, limit=10)
    assert store._vectors.approximate
    assert [m.id for m, _ in hits] == ids[:10]
    exact = [float(v @ query) for v in vectors[:10]]
    assert [score for _, score in hits] == pytest.approx(exact, abs=1e-6)
    store.close()

    # What the re-scoring fixes: the graph's own f16 order and scores on the same file.
    plain = SqliteMemoryStore(tmp_path / "memory.db", vector_index=FORCED.model_copy(update={"rerank": 0}))
    graph_only = plain.search_vector(query, ALL, limit=10)
    assert plain._vectors.approximate
    assert [m.id for m, _ in graph_only] != ids[:10]
    plain.close()


def test_rescoring_drops_rows_deleted_after_the_graph_was_saved(tmp_path):
    query, vectors = _near_duplicates(40)
    store = SqliteMemoryStore(tmp_path / "memory.db", vector_index=FORCED)
    ids = _fill(store, vectors)
    store.sync_vector_index()
    store.delete(ids[:3])  # the graph still holds their keys (fewer than its stale slack)
    hits = store.search_vector(query, ALL, limit=5)
    assert [m.id for m, _ in hits] == ids[3:8]
    store.close()
