"""Hybrid recall on SQLite begins the vector search (its graph segments walked on worker threads)
and searches full text while the walks run (engram.search, ``start_vector_search``): the same
answer as one after the other, agents kept apart, the index released after an error, and no
wait forever when the caller holds the store's connection. A real SQLite file, hashing vectors,
several real HNSW segments and real threads."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from engram import search
from engram.engine import Engram
from engram.errors import StorageError
from engram.store.index_settings import VectorIndexSettings
from engram.store.sqlite import SqliteMemoryStore
from engram.testing.fakes import HashingEmbedder

pytest.importorskip("usearch")

QUERIES = ["hiking trip in the mountains", "adopting a rescued greyhound", "garden tomatoes", "the weekend plans"]
SEGMENTED = VectorIndexSettings(threshold=0, merge_after=1, segment_size=100)


def _fill(path: Path) -> tuple[SqliteMemoryStore, Engram]:
    store = SqliteMemoryStore(path, vector_index=SEGMENTED)
    alice = Engram(store, agent="alice", embedder=HashingEmbedder())
    bob = Engram(store, agent="bob", embedder=HashingEmbedder())
    topics = ["hiking trip", "rescued greyhound", "garden tomatoes", "weekend plans", "piano lessons"]
    alice.remember_many([{"content": f"alice note {i}: {topics[i % 5]} and more {i}"} for i in range(160)])
    bob.remember_many([{"content": f"bob secret {i}: {topics[i % 5]} too"} for i in range(160)])
    return store, alice


def _answers(engram: Engram) -> list[list[tuple[str, float]]]:
    return [[(h.memory.id, round(h.score, 9)) for h in engram.recall(q, mode="hybrid", touch=False, limit=8)]
            for q in QUERIES]


def test_begun_vector_search_gives_the_answer_of_one_after_the_other(tmp_path: Path, monkeypatch) -> None:
    store, alice = _fill(tmp_path / "memory.db")
    begun = []
    start = SqliteMemoryStore.start_vector_search
    monkeypatch.setattr(SqliteMemoryStore, "start_vector_search",
                        lambda self, *a, **k: begun.append(1) or start(self, *a, **k))
    try:
        together = _answers(alice)
        assert store._vectors.approximate and len(store._vectors._graph.segments) > 2
        assert len(begun) == len(QUERIES)
        one_by_one = search._start_vector_search
        monkeypatch.setattr(search, "_start_vector_search",
                            lambda *a, **k: one_by_one(*a, **{**k, "side_by_side": False}))
        assert _answers(alice) == together
        assert all(hits for hits in together)
        assert all(store.get(memory_id, alice._filter(None)).scope.agent == "alice"
                   for hits in together for memory_id, _ in hits)
    finally:
        alice.close()


def _answered_in_time(call: Callable[[], int], stuck: str) -> int:
    """``call()``'s answer, run on another thread that must finish within a minute (``stuck`` says
    what hung if it does not)."""
    answered: list[int] = []
    worker = threading.Thread(target=lambda: answered.append(call()), daemon=True)
    worker.start()
    worker.join(timeout=60)
    assert not worker.is_alive(), stuck
    assert answered, "the call raised"
    return answered[0]


def test_an_error_on_the_text_side_releases_the_vector_index(tmp_path: Path, monkeypatch) -> None:
    store, alice = _fill(tmp_path / "memory.db")

    def broken(*args, **kwargs):
        raise StorageError("full text unreadable")

    try:
        with monkeypatch.context() as patched:
            patched.setattr(store, "search_text", broken)
            with pytest.raises(StorageError):
                alice.recall("garden tomatoes", mode="hybrid", touch=False)
        assert _answered_in_time(lambda: len(alice.recall("garden tomatoes", touch=False)),
                                 "the vector index stayed held after the error") > 0
    finally:
        alice.close()


def test_a_caller_holding_the_connection_is_answered(tmp_path: Path) -> None:
    # Database work stays on the caller's thread, so recall inside the store's own transaction
    # (which holds the connection's lock) still completes.
    store, alice = _fill(tmp_path / "memory.db")

    def inside_a_transaction() -> int:
        with store.db.write():
            return len(alice.recall("rescued greyhound", mode="hybrid", touch=False))

    try:
        assert _answered_in_time(inside_a_transaction, "recall waited for a connection its caller held") > 0
    finally:
        alice.close()


class _Loading(HashingEmbedder):
    """A hashing embedder that says its model is still loading, and logs when it is asked."""

    def __init__(self, log: list[str], warming: bool) -> None:
        super().__init__()
        self.log, self.warming = log, warming

    def embed_query(self, text: str):
        self.log.append("embed")
        return super().embed_query(text)


@pytest.mark.parametrize("warming", [True, False])
def test_while_the_model_loads_full_text_is_searched_first(tmp_path: Path, monkeypatch, warming: bool) -> None:
    store, alice = _fill(tmp_path / "memory.db")
    order: list[str] = []
    search_text = SqliteMemoryStore.search_text
    monkeypatch.setattr(SqliteMemoryStore, "search_text",
                        lambda self, *a, **k: order.append("text") or search_text(self, *a, **k))
    try:
        want = _answers(alice)
        loading = Engram(store, agent="alice", embedder=_Loading(order, warming))
        order.clear()
        assert _answers(loading) == want
        assert order[:2] == (["text", "embed"] if warming else ["embed", "text"])
    finally:
        alice.close()


def test_the_vector_index_opens_in_the_background(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    store, alice = _fill(path)
    alice.close()
    fresh = SqliteMemoryStore(path, vector_index=SEGMENTED)
    try:
        assert not fresh._vectors.approximate
        fresh.warm_up_in_background().join(timeout=60)
        assert fresh._vectors.approximate and len(fresh._vectors._graph.segments) > 2
    finally:
        fresh.close()
