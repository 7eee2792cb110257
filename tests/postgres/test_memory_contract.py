"""The shipped MemoryStore contract, unchanged, on a real PostgreSQL + pgvector server."""

from __future__ import annotations

import pytest

from engram.testing.contracts import MemoryStoreContract


class TestPostgresMemoryContract(MemoryStoreContract):
    @pytest.fixture
    def make_store(self, database_for_path):
        from engram.db.postgres import PgDatabase
        from engram.store.postgres import PostgresMemoryStore

        return lambda path=None: PostgresMemoryStore(PgDatabase.connect(database_for_path(path)))
