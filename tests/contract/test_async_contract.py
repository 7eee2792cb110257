"""The MemoryStore contract suite, unchanged, through ``AsyncEngram`` (driven by ``SyncDriver``),
on every built-in backend: asyncio users get the same behaviour as synchronous ones."""

from __future__ import annotations

import pytest

from engram.aio import AsyncEngram
from engram.engine import Engram
from engram.testing.async_driver import SyncDriver
from tests.contract import test_memory_contract as sync_suite


class TestAsyncMemoryContract(sync_suite.TestMemoryStoreContract):
    @pytest.fixture
    def mem(self, store, clock):
        driver = SyncDriver(AsyncEngram(Engram(store, agent="alice", clock=clock, max_content_chars=500)))
        yield driver
        driver.close()
