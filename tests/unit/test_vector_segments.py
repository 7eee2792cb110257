"""A large vector index is several HNSW graphs (``vector_index.segment_size`` entries each), saved
beside the database as ``memory.db.usearch``, ``.usearch.1``, ... and searched in turn: answers
match exact search, a fresh handle maps the saved segments, filters and deletions hold."""

from __future__ import annotations

import numpy as np
import pytest

from engram.model import MemoryFilter, Scope, make_draft
from engram.store import ann
from engram.store.index_settings import VectorIndexSettings
from engram.store.sqlite import SqliteMemoryStore

pytest.importorskip("usearch")

DIMS = 16
IDENTITY = f"fake:test:{DIMS}"
SEGMENTED = VectorIndexSettings(threshold=0, merge_after=8, segment_size=100)
EXACT = VectorIndexSettings(enabled=False)


def _vec(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=DIMS).astype(np.float32)
    return v / np.linalg.norm(v)


def _fill(store: SqliteMemoryStore, n: int, scope: Scope = Scope(), start: int = 0) -> list[str]:
    ids = []
    for i in range(start, start + n):
        draft = make_draft(f"memory {i}", key=f"k{i}", scope=scope, max_content_chars=8000)
        ids.append(store.upsert(draft, proposed_key=f"k{i}", now=1.0).memory.id)
    store.set_vectors(IDENTITY, [(memory_id, _vec(start + j)) for j, memory_id in enumerate(ids)])
    return ids


def _top(store: SqliteMemoryStore, query: np.ndarray, filt: MemoryFilter, limit: int = 10) -> list[str]:
    return [m.id for m, _ in store.search_vector(query, filt, limit=limit)]


def test_entries_fill_segments_saved_beside_the_file_and_reopened(tmp_path):
    path = tmp_path / "memory.db"
    store = SqliteMemoryStore(path, vector_index=SEGMENTED)
    _fill(store, 250)
    store.sync_vector_index()
    graph = store._vectors._graph
    assert graph is not None and [len(s) for s in graph.segments] == [100, 100, 50]
    assert all(ann.segment_path(tmp_path / "memory.db.usearch", n).exists() for n in range(3))
    everyone = MemoryFilter(scopes=(Scope(),))
    queries = [_vec(1000 + q) for q in range(20)]
    found = [_top(store, q, everyone) for q in queries]
    store.close()

    exact = SqliteMemoryStore(path, vector_index=EXACT)
    assert found == [_top(exact, q, everyone) for q in queries]
    exact.close()

    again = SqliteMemoryStore(path, vector_index=SEGMENTED)
    assert [_top(again, q, everyone) for q in queries] == found
    reopened = again._vectors._graph
    assert reopened is not None and reopened.view and reopened.meta.segments == 3  # mapped, not rebuilt
    again.close()


def test_segments_keep_agents_apart_and_drop_deleted_rows(tmp_path):
    path = tmp_path / "memory.db"
    store = SqliteMemoryStore(path, vector_index=SEGMENTED)
    mine = _fill(store, 150, Scope("a"))
    theirs = _fill(store, 150, Scope("b"), start=150)
    only_a = MemoryFilter(scopes=(Scope("a"),))
    for q in range(10):
        assert set(_top(store, _vec(150 + q * 7), only_a, limit=20)) <= set(mine)
    # Deleting most of the first segment removes its entries (and rebuilds once they are a quarter).
    store.delete(mine[:120])
    for q in range(10):
        top = _top(store, _vec(q), only_a, limit=20)
        assert top and set(top) <= set(mine[120:])
    graph = store._vectors._graph
    assert graph is not None and len(graph) == 180 and graph.meta.segments == 2
    assert not ann.segment_path(tmp_path / "memory.db.usearch", 2).exists()  # a leftover of the larger graph
    assert set(theirs) >= set(_top(store, _vec(200), MemoryFilter(scopes=(Scope("b"),)), limit=20))
    store.close()


def test_a_graph_larger_than_a_segment_is_used_as_it_is_and_split_when_rebuilt(tmp_path):
    path = tmp_path / "memory.db"
    store = SqliteMemoryStore(path, vector_index=SEGMENTED.model_copy(update={"segment_size": 1000}))
    _fill(store, 250)
    store.sync_vector_index()
    assert store._vectors._graph is not None and store._vectors._graph.meta.segments == 1
    store.close()
    # Opening it with smaller segments maps the old graph (a rebuild inside a recall would take
    # minutes at 1M) and answers as exact search does; new entries open new segments.
    again = SqliteMemoryStore(path, vector_index=SEGMENTED)
    again.sync_vector_index()
    graph = again._vectors._graph
    assert graph is not None and [len(s) for s in graph.segments] == [250] and graph.view
    everyone = MemoryFilter(scopes=(Scope(),))
    exact = SqliteMemoryStore(path, vector_index=EXACT)
    assert _top(again, _vec(7), everyone) == _top(exact, _vec(7), everyone)
    _fill(again, 120, start=250)
    again.sync_vector_index()
    assert [len(s) for s in again._vectors._graph.segments] == [250, 100, 20]
    again.close()
    exact.close()
    for leftover in tmp_path.glob("memory.db.usearch*"):  # deleted: the next search rebuilds in segments
        leftover.unlink()
    rebuilt = SqliteMemoryStore(path, vector_index=SEGMENTED)
    rebuilt.sync_vector_index()
    assert [len(s) for s in rebuilt._vectors._graph.segments] == [100, 100, 100, 70]
    rebuilt.close()
