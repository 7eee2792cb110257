"""Every write of a closed engine is refused with the same clear error ``remember`` gives through
the write queue ("this engram is closed"), before anything is read, embedded or stored, on every
built-in store (a real SQLite file, a real JSON file, in memory).

Review: ``remember_many``, ``forget``, ``link``, ``supersede``... write to the store directly, not
through the queue: after ``close`` a SQLite engine said "Cannot operate on a closed database", and
an in-memory or JSON-file engine stored, linked and forgot as if open (a JSON file's writes after
``close`` were acknowledged, then lost)."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from engram.embed import Embedder
from engram.engine import Engram
from engram.errors import StorageError
from engram.lifecycle.common import DAY
from engram.lifecycle.scheduler import Maintenance
from engram.lifecycle.settings import LifecycleSettings
from engram.model import Memory
from engram.store.base import MemoryStore
from engram.store.inmemory import InMemoryMemoryStore
from engram.store.jsonfile import JsonFileMemoryStore
from engram.store.sqlite import SqliteMemoryStore
from tests.unit.test_write_queue import BagOfWords

STORES: dict[str, Callable[[Path], MemoryStore]] = {
    "sqlite": lambda tmp: SqliteMemoryStore(tmp / "memory.db"),
    "jsonfile": lambda tmp: JsonFileMemoryStore(tmp / "memory.json"),
    "inmemory": lambda tmp: InMemoryMemoryStore(),
}

# Each writer of the engine, called as a user would call it on the two memories stored before close.
WRITES: dict[str, Callable[[Engram, Any, Any], object]] = {
    "remember": lambda mem, a, b: mem.remember("a new fact after close"),
    "remember_soon": lambda mem, a, b: mem.remember_soon("a new fact after close"),
    "remember with links": lambda mem, a, b: mem.remember("a new fact after close", links=[a.key]),
    "remember_many": lambda mem, a, b: mem.remember_many([{"content": "a new fact after close"}]),
    "update": lambda mem, a, b: mem.update(a.key, content="alpha changed after close"),
    "replace": lambda mem, a, b: mem.replace(a.key, "alpha replaced after close"),
    "supersede": lambda mem, a, b: mem.supersede(a, b),
    "forget": lambda mem, a, b: mem.forget(a.id),
    "forget by query": lambda mem, a, b: mem.forget(query="alpha"),
    "forget_own": lambda mem, a, b: mem.forget_own(),
    "link": lambda mem, a, b: mem.link(a, b),
    "unlink": lambda mem, a, b: mem.unlink(a, b),
    "mark_used": lambda mem, a, b: mem.mark_used([a]),
    "annotate": lambda mem, a, b: mem.annotate(a, {"seen": 1}),
    "embed_missing": lambda mem, a, b: mem.embed_missing(),
    "reindex": lambda mem, a, b: mem.reindex(),
    "import_snapshot": lambda mem, a, b: mem.import_snapshot(
        '{"memories": [{"key": "imported", "content": "an imported fact"}]}'),
    "import_from": lambda mem, a, b: mem.import_from('{"memories": [{"key": "imported", "content": "an imported fact"}]}',
                                                     "snapshot"),
}


@pytest.mark.parametrize("backend", sorted(STORES))
@pytest.mark.parametrize("write", sorted(WRITES))
def test_a_closed_engram_refuses_every_write_clearly_before_the_model_runs(tmp_path: Path, backend: str,
                                                                           write: str) -> None:
    store, provider, mem, alpha, beta = closed_engram(tmp_path, backend)
    calls = provider.calls

    with pytest.raises(StorageError, match="this engram is closed"):
        WRITES[write](mem, alpha, beta)

    assert provider.calls == calls  # refused before any model work
    kept = kept_after_close(tmp_path, backend, store)
    assert sorted(kept) == ["alpha", "beta"]
    assert kept["alpha"].content == "alpha fact" and kept["alpha"].links == (beta.id,)
    assert kept["alpha"].superseded_by is None


def closed_engram(tmp_path: Path, backend: str) -> tuple[MemoryStore, BagOfWords, Engram, Memory, Memory]:
    """An engine on the ``backend`` store with two linked memories, alpha and beta, then closed;
    with its store and its model (whose ``calls`` say whether anything was embedded after)."""
    store = STORES[backend](tmp_path)
    provider = BagOfWords()
    mem = Engram(store, embedder=Embedder(provider, batch_size=64))
    alpha = mem.remember("alpha fact", key="alpha").memory
    beta = mem.remember("beta fact", key="beta").memory
    mem.link(alpha, beta)
    mem.close()
    return store, provider, mem, alpha, beta


def kept_after_close(tmp_path: Path, backend: str, store: MemoryStore) -> dict[str, Memory]:
    """What the store holds after the refusal, by key: a file store opened again from its file;
    an in-memory store as it is (nothing outlives it)."""
    reopened = {"sqlite": lambda: SqliteMemoryStore(tmp_path / "memory.db"),
                "jsonfile": lambda: JsonFileMemoryStore(tmp_path / "memory.json")}.get(backend)
    if reopened is None:
        return {m.key: m for m in store.iter_all()}
    again = reopened()
    try:
        return {m.key: m for m in again.iter_all()}
    finally:
        again.close()


@pytest.mark.parametrize("backend", sorted(STORES))
def test_a_closed_engram_refuses_a_maintenance_pass_before_any_job_runs(tmp_path: Path, backend: str) -> None:
    # Review: the jobs (hygiene, decay, retention, consolidation, summaries) write to the store
    # directly; a pass on a closed in-memory or JSON-file engine still deleted and merged.
    store = STORES[backend](tmp_path)
    mem = Engram(store, embedder=Embedder(BagOfWords(), batch_size=64), clock=lambda: 1000.0)
    mem.remember("an old chat line", key="chat", category="conversation")
    mem.remember("an idle fact nobody used", key="idle", importance=0.1)
    mem.remember("the same fact twice", key="twin-a")
    mem.remember("the same fact twice!", key="twin-b")
    mem.close()
    maintenance = Maintenance(mem, LifecycleSettings(), rng=random.Random(1))

    with pytest.raises(StorageError, match="this engram is closed"):
        maintenance.run(now=1000.0 + 400 * DAY, force=True)

    kept = kept_after_close(tmp_path, backend, store)
    assert sorted(kept) == ["chat", "idle", "twin-a", "twin-b"]
