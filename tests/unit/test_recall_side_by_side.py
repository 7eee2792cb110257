"""Hybrid recall on SQLite searches vectors on a worker while it searches full text (engram.search,
``concurrent_search``): the same answer as one after the other, agents kept apart, and no wait
forever when the caller already holds the store's connection. A real SQLite file, a real embedder
stand-in (hashing vectors) and real threads."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from engram import search
from engram.engine import Engram
from engram.store.sqlite import SqliteMemoryStore
from engram.testing.fakes import HashingEmbedder

QUERIES = ["hiking trip in the mountains", "adopting a rescued greyhound", "garden tomatoes", "the weekend plans"]


def _fill(store: SqliteMemoryStore) -> tuple[Engram, Engram]:
    alice = Engram(store, agent="alice", embedder=HashingEmbedder())
    bob = Engram(store, agent="bob", embedder=HashingEmbedder())
    topics = ["hiking trip", "rescued greyhound", "garden tomatoes", "weekend plans", "piano lessons"]
    alice.remember_many([{"content": f"alice note {i}: {topics[i % 5]} and more {i}"} for i in range(60)])
    bob.remember_many([{"content": f"bob secret {i}: {topics[i % 5]} too"} for i in range(60)])
    return alice, bob


def _answers(engram: Engram) -> list[list[tuple[str, float]]]:
    return [[(h.memory.id, round(h.score, 9)) for h in engram.recall(q, mode="hybrid", touch=False, limit=8)]
            for q in QUERIES]


def test_side_by_side_gives_the_answer_of_one_after_the_other(tmp_path: Path, monkeypatch) -> None:
    store = SqliteMemoryStore(tmp_path / "memory.db")
    alice, bob = _fill(store)
    started = []
    submit = search._side_by_side().submit
    monkeypatch.setattr(search._side_by_side(), "submit", lambda *a, **k: started.append(1) or submit(*a, **k))
    try:
        assert store.concurrent_search
        together = _answers(alice)
        assert len(started) == len(QUERIES)  # each vector side ran on a worker
        monkeypatch.setattr(SqliteMemoryStore, "concurrent_search", False)
        assert _answers(alice) == together
        assert len(started) == len(QUERIES)
        assert all(hits for hits in together)
        bobs = {m.id for m in bob.store.list(bob._filter(None), limit=200) if m.scope.agent == "bob"}
        assert bobs and not {memory_id for hits in together for memory_id, _ in hits} & bobs
    finally:
        alice.close()


def test_a_caller_holding_the_connection_searches_in_turn(tmp_path: Path) -> None:
    # Inside the store's own transaction the worker could never get the connection: recall then
    # searches one side after the other on the caller's thread.
    store = SqliteMemoryStore(tmp_path / "memory.db")
    alice, _ = _fill(store)
    answers: list[int] = []

    def inside_a_transaction() -> None:
        with store.db.write():
            assert not store.concurrent_search
            answers.append(len(alice.recall("rescued greyhound", mode="hybrid", touch=False)))

    try:
        worker = threading.Thread(target=inside_a_transaction, daemon=True)
        worker.start()
        worker.join(timeout=60)
        assert not worker.is_alive(), "recall waited on a worker for a connection its caller held"
        assert answers and answers[0] > 0
        assert store.concurrent_search
    finally:
        alice.close()


@pytest.mark.parametrize("mode", ["text", "vector"])
def test_one_side_alone_runs_on_the_callers_thread(tmp_path: Path, monkeypatch, mode: str) -> None:
    store = SqliteMemoryStore(tmp_path / "memory.db")
    alice, _ = _fill(store)
    monkeypatch.setattr(search, "_side_by_side", lambda: pytest.fail("a worker for a one-sided recall"))
    try:
        assert alice.recall("garden tomatoes", mode=mode, touch=False).hits
    finally:
        alice.close()
