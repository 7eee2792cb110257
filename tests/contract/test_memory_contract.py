"""The shipped MemoryStore contract, run unchanged against every built-in backend."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from engram.engine import Engram
from engram.store.base import MemoryStore
from engram.store.disabled import DisabledMemoryStore
from engram.store.inmemory import InMemoryMemoryStore
from engram.store.jsonfile import JsonFileMemoryStore
from engram.store.sqlite import SqliteMemoryStore
from engram.testing.contracts import DisabledStoreContract, Failing, MemoryStoreContract
from tests.failing_writes import sqlite_insert_fails

BACKENDS = {
    "sqlite": lambda folder: SqliteMemoryStore(folder / "memory.db"),
    "jsonfile": lambda folder: JsonFileMemoryStore(folder / "memory.json"),
    "inmemory": lambda folder: InMemoryMemoryStore(),
}


def _sqlite_failing(store: MemoryStore, content: str) -> contextlib.AbstractContextManager[None]:
    return sqlite_insert_fails(store.location(), "memories", content)


@contextlib.contextmanager
def _jsonfile_failing(store: MemoryStore, content: str) -> Iterator[None]:
    # The file cannot be replaced (a folder holding a file stands at its path), so the write that
    # would hold ``content`` fails as a full disk does: the store writes a batch in one go.
    path = Path(store.location())
    aside = path.with_name(path.name + ".aside")
    path.rename(aside)
    (path / "occupied").mkdir(parents=True)
    try:
        yield
    finally:
        (path / "occupied").rmdir()
        path.rmdir()
        aside.rename(path)


class TestMemoryStoreContract(MemoryStoreContract):
    @pytest.fixture(params=sorted(BACKENDS))
    def backend(self, request: pytest.FixtureRequest) -> str:
        return request.param

    @pytest.fixture
    def make_store(self, backend, tmp_path):
        opener = BACKENDS[backend]
        return lambda path=None: opener(path or tmp_path)

    @pytest.fixture
    def failing(self, backend: str) -> Failing | None:
        return {"sqlite": _sqlite_failing, "jsonfile": _jsonfile_failing}.get(backend)


class TestDisabledStore(DisabledStoreContract):
    @pytest.fixture
    def mem_disabled(self):
        return Engram(DisabledMemoryStore(), agent="alice")
