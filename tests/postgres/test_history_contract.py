"""The shipped HistoryStore contract, unchanged, on a real PostgreSQL server (a fresh database
per test), including appends from four processes at once."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import psycopg
import pytest
from psycopg import sql

from engram.history.postgres import PostgresHistoryStore
from engram.testing.history_contract import HistoryBackend, HistoryStoreContract


@pytest.fixture(params=["postgres"])
def history_backend(request: pytest.FixtureRequest, new_database: Callable[[], str]) -> Iterator[HistoryBackend]:
    url = new_database()

    @contextlib.contextmanager
    def failing(text: str) -> Iterator[None]:
        # A row trigger in the database: the rows before the failing one are already inserted in
        # the transaction when PostgreSQL aborts it.
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE FUNCTION contract_failing() RETURNS trigger LANGUAGE plpgsql AS "
                         "$$ BEGIN RAISE EXCEPTION 'injected failure'; END $$")
            conn.execute("CREATE TRIGGER contract_failing BEFORE INSERT ON history_messages FOR EACH ROW WHEN "
                         f"(NEW.content = {sql.quote(text)}) EXECUTE FUNCTION contract_failing()")
            try:
                yield
            finally:
                conn.execute("DROP TRIGGER contract_failing ON history_messages")
                conn.execute("DROP FUNCTION contract_failing()")

    yield HistoryBackend("postgres", lambda: PostgresHistoryStore.open(url),
                         target="engram.history.postgres:PostgresHistoryStore.open", kwargs={"dsn": url},
                         failing=failing)


class TestPostgresHistoryContract(HistoryStoreContract):
    pass
