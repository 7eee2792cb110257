"""A consolidation merge on PostgreSQL is one transaction: the delete of a copy failing in the
database (a trigger) leaves the survivor, the copies, the audit trail and the listeners as before
(``tests/lifecycle/test_consolidate_atomic.py`` runs the same check on SQLite and in memory)."""

from __future__ import annotations

import contextlib

from engram.backends.postgres import PostgresBackend
from engram.db.postgres import PgDatabase
from engram.engine import Engram
from engram.events import EventBus
from tests.failing_writes import postgres_insert_fails
from tests.lifecycle.conftest import Clock, FakeEmbedder
from tests.lifecycle.test_consolidate_atomic import a_failed_merge_keeps_nothing_and_the_next_merges_once


def test_a_merge_failing_part_way_keeps_nothing_and_the_next_run_merges_once(pg_url: str) -> None:
    backend = PostgresBackend(PgDatabase.connect(pg_url))
    events = EventBus()
    events.subscribe(backend.audit_log())
    clock = Clock()
    engram = Engram(backend.memory, clock=clock, events=events, backend=backend, embedder=FakeEmbedder())

    def fails(content: str) -> contextlib.AbstractContextManager[None]:
        return postgres_insert_fails(pg_url, "memories", content, on="DELETE")

    try:
        a_failed_merge_keeps_nothing_and_the_next_merges_once(engram, clock, fails)
    finally:
        engram.close()
