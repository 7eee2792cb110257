"""The shipped MemoryStore contract, unchanged, on a real PostgreSQL + pgvector server."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path

import pytest

from engram.store.base import MemoryStore
from engram.testing.contracts import Failing, MemoryStoreContract
from tests.failing_writes import postgres_insert_fails


class TestPostgresMemoryContract(MemoryStoreContract):
    @pytest.fixture
    def make_store(self, database_for_path):
        from engram.db.postgres import PgDatabase
        from engram.store.postgres import PostgresMemoryStore

        return lambda path=None: PostgresMemoryStore(PgDatabase.connect(database_for_path(path)))

    @pytest.fixture
    def failing(self, database_for_path: Callable[[Path | None], str]) -> Failing:
        url = database_for_path(None)  # the database ``store`` opened

        def fail(store: MemoryStore, content: str) -> contextlib.AbstractContextManager[None]:
            return postgres_insert_fails(url, "memories", content)

        return fail
