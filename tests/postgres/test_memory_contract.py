"""The shipped MemoryStore contract, unchanged, on a real PostgreSQL + pgvector server."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from engram.store.base import MemoryStore
from engram.testing.contracts import Failing, MemoryStoreContract


class TestPostgresMemoryContract(MemoryStoreContract):
    @pytest.fixture
    def make_store(self, database_for_path):
        from engram.db.postgres import PgDatabase
        from engram.store.postgres import PostgresMemoryStore

        return lambda path=None: PostgresMemoryStore(PgDatabase.connect(database_for_path(path)))

    @pytest.fixture
    def failing(self, database_for_path: Callable[[Path | None], str]) -> Failing:
        url = database_for_path(None)  # the database ``store`` opened

        @contextlib.contextmanager
        def fail(store: MemoryStore, content: str) -> Iterator[None]:
            # A row trigger in the database: the rows before the failing one are already written
            # in the transaction when PostgreSQL aborts it.
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute("CREATE FUNCTION contract_failing() RETURNS trigger LANGUAGE plpgsql AS "
                             "$$ BEGIN RAISE EXCEPTION 'injected failure'; END $$")
                conn.execute("CREATE TRIGGER contract_failing BEFORE INSERT ON memories FOR EACH ROW WHEN "
                             f"(NEW.content = {sql.quote(content)}) EXECUTE FUNCTION contract_failing()")
                try:
                    yield
                finally:
                    conn.execute("DROP TRIGGER contract_failing ON memories")
                    conn.execute("DROP FUNCTION contract_failing()")

        return fail
