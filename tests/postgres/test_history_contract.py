"""The shipped HistoryStore contract, unchanged, on a real PostgreSQL server (a fresh database
per test), including appends from four processes at once."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import pytest

from engram.history.postgres import PostgresHistoryStore
from engram.testing.history_contract import HistoryBackend, HistoryStoreContract
from tests.failing_writes import postgres_insert_fails


@pytest.fixture(params=["postgres"])
def history_backend(request: pytest.FixtureRequest, new_database: Callable[[], str]) -> Iterator[HistoryBackend]:
    url = new_database()

    def failing(text: str) -> contextlib.AbstractContextManager[None]:
        return postgres_insert_fails(url, "history_messages", text)

    yield HistoryBackend("postgres", lambda: PostgresHistoryStore.open(url),
                         target="engram.history.postgres:PostgresHistoryStore.open", kwargs={"dsn": url},
                         failing=failing)


class TestPostgresHistoryContract(HistoryStoreContract):
    pass
