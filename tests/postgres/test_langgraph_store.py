"""LangGraph's ``EngramStore`` on PostgreSQL: a search without a query reads the last puts by
bands of put time that the store selects (``where`` on ``lg_updated_at``), a namespace listing
and a TTL sweep read only the items they may return, and a TTL refresh moves only the expiry, as
on SQLite."""

from __future__ import annotations

import pytest

pytest.importorskip("langgraph", reason="the langgraph extra is not installed: pip install 'engram-recall[langgraph]'")

from engram.backends.postgres import PostgresBackend  # noqa: E402
from engram.db.postgres import PgDatabase  # noqa: E402
from engram.store.postgres import PostgresMemoryStore  # noqa: E402
from engram.testing.fakes import FakeClock  # noqa: E402
from tests.integrations.test_langgraph_store import (  # noqa: E402
    _Counting,
    a_refresh_moves_only_the_expiry,
    namespaces_and_sweeps_read_little,
    searches_read_the_last_puts,
)


class _CountingPostgres(_Counting, PostgresMemoryStore):
    pass


def test_a_search_without_a_query_reads_the_last_puts_not_every_item(pg_url: str) -> None:
    searches_read_the_last_puts(_CountingPostgres(PgDatabase.connect(pg_url)), FakeClock())


def test_list_namespaces_and_sweep_ttl_read_only_what_they_may_return(pg_url: str) -> None:
    namespaces_and_sweeps_read_little(_CountingPostgres(PgDatabase.connect(pg_url)), FakeClock())


def test_a_refresh_moves_only_the_expiry_as_in_langgraphs_stores(pg_url: str) -> None:
    backend = PostgresBackend(PgDatabase.connect(pg_url))
    a_refresh_moves_only_the_expiry(backend.memory, backend, FakeClock())
