"""Shared pieces for lifecycle tests: a controllable clock, a deterministic embedder, engines on
every backend (real SQLite and JSON files in tmp_path)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engram.backends.base import Backend
from engram.backends.simple import InMemoryBackend, StoreBackend
from engram.backends.sqlite import SqliteBackend
from engram.engine import Engram
from engram.events import EventBus
from engram.store.inmemory import InMemoryMemoryStore
from engram.store.jsonfile import JsonFileMemoryStore
from engram.store.sqlite import SqliteMemoryStore

DAY = 86400.0
T0 = 1_800_000_000.0  # a fixed "now" (2027-01-15 UTC)


class Clock:
    def __init__(self, t: float = T0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds


class FakeEmbedder:
    """Hashed bag of words, L2-normalised: equal word sets embed identically."""

    def __init__(self, dims: int = 64) -> None:
        self.dims = dims
        self.identity = f"fake:bow:{dims}"

    def _one(self, text: str) -> np.ndarray:
        v = np.zeros(self.dims, dtype=np.float32)
        for word in re.findall(r"\w+", text.lower()):
            v[int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dims] += 1.0
        n = np.linalg.norm(v)
        return v / n if n else v

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.stack([self._one(t) for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        return self._one(text)


def backend_for(kind: str, store: Any, tmp_path: Path) -> Backend:
    """The backend ``engram.root`` would open around ``store`` (audit trail where it keeps it)."""
    if kind == "sqlite":
        return SqliteBackend(store)
    if kind == "jsonfile":
        return StoreBackend(store, path=store.path, audit_path=store.path.with_name(store.path.name + ".audit.jsonl"))
    return InMemoryBackend(store)


def open_store(kind: str, tmp_path: Path):  # noqa: ANN201
    if kind == "sqlite":
        return SqliteMemoryStore(tmp_path / "memory.db")
    if kind == "jsonfile":
        return JsonFileMemoryStore(tmp_path / "memory.json")
    return InMemoryMemoryStore()


def remember_at(engram: Engram, when: float, content: str, **fields: Any) -> Any:
    """``engram.remember(content, **fields)`` made at ``when``: created then and received by the
    store then, as a memory it has held that long (a ``created_at`` alone is a memory learned
    elsewhere, arriving now, which the lifecycle jobs count from its arrival)."""
    clock, engram.clock = engram.clock, lambda: when
    try:
        return engram.remember(content, created_at=when, **fields)
    finally:
        engram.clock = clock


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture(params=["sqlite", "inmemory", "jsonfile"])
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def make_engram(tmp_path: Path, clock: Clock) -> Callable[..., Engram]:
    opened: list[Engram] = []

    def make(kind: str = "sqlite", **kwargs) -> Engram:  # noqa: ANN003
        store = open_store(kind, tmp_path)
        backend = backend_for(kind, store, tmp_path)
        events = EventBus()
        events.subscribe(backend.audit_log())
        engram = Engram(store, clock=clock, events=events, backend=backend, **kwargs)
        opened.append(engram)
        return engram

    yield make
    for engram in opened:
        engram.close()


@pytest.fixture
def embedder() -> FakeEmbedder:
    return FakeEmbedder()
