"""The MemoryStore contract, unchanged, through ``AsyncEngram`` on a real PostgreSQL server: the
writer thread and reader pool share the store's connection pool."""

from __future__ import annotations

import pytest

from engram.aio import AsyncEngram
from engram.engine import Engram
from engram.testing.async_driver import SyncDriver
from tests.postgres import test_memory_contract as sync_suite


class TestPostgresAsyncMemoryContract(sync_suite.TestPostgresMemoryContract):
    @pytest.fixture
    def mem(self, store, clock):
        driver = SyncDriver(AsyncEngram(Engram(store, agent="alice", clock=clock, max_content_chars=500)))
        yield driver
        driver.close()
