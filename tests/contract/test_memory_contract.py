"""The shipped MemoryStore contract, run unchanged against every built-in backend."""

from __future__ import annotations

import pytest

from engram.engine import Engram
from engram.store.disabled import DisabledMemoryStore
from engram.store.inmemory import InMemoryMemoryStore
from engram.store.jsonfile import JsonFileMemoryStore
from engram.store.sqlite import SqliteMemoryStore
from engram.testing.contracts import DisabledStoreContract, MemoryStoreContract

BACKENDS = {
    "sqlite": lambda folder: SqliteMemoryStore(folder / "memory.db"),
    "jsonfile": lambda folder: JsonFileMemoryStore(folder / "memory.json"),
    "inmemory": lambda folder: InMemoryMemoryStore(),
}


class TestMemoryStoreContract(MemoryStoreContract):
    @pytest.fixture(params=sorted(BACKENDS))
    def make_store(self, request, tmp_path):
        opener = BACKENDS[request.param]
        return lambda path=None: opener(path or tmp_path)


class TestDisabledStore(DisabledStoreContract):
    @pytest.fixture
    def mem_disabled(self):
        return Engram(DisabledMemoryStore(), agent="alice")
