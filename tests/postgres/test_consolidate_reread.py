"""On PostgreSQL a merge reads its group inside its transaction with the rows locked: another
process changing a member after the comparison is merged as stored (the same check as on SQLite,
``tests/lifecycle/test_consolidate_reread.py``), and one writing a member while the merge runs
waits for its commit instead of changing a row the merge then deletes or overwrites."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from engram.backends.postgres import PostgresBackend
from engram.db.postgres import PgDatabase
from engram.engine import Engram
from engram.lifecycle import consolidate
from tests.lifecycle.conftest import Clock, FakeEmbedder
from tests.lifecycle.test_consolidate_reread import a_merge_takes_its_group_as_stored_at_its_write


@contextlib.contextmanager
def _engine(pg_url: str, clock: Clock) -> Iterator[Engram]:
    backend = PostgresBackend(PgDatabase.connect(pg_url))
    engram = Engram(backend.memory, clock=clock, backend=backend, embedder=FakeEmbedder())
    try:
        yield engram
    finally:
        engram.close()


def test_a_merge_takes_its_group_as_stored_when_it_writes(pg_url: str) -> None:
    clock = Clock()
    with _engine(pg_url, clock) as engram, _engine(pg_url, clock) as other:
        a_merge_takes_its_group_as_stored_at_its_write(engram, other, clock)


def test_a_member_is_locked_from_the_merges_read_to_its_commit(pg_url: str) -> None:
    clock = Clock()
    with _engine(pg_url, clock) as engram:
        survivor = engram.remember("the user prefers DARK MODE in the editor!", key="dark-mode").memory
        copy = engram.remember("The user prefers dark mode in the editor").memory
        group = engram.store.get_many([survivor.id, copy.id])
        store: Any = engram.store
        upsert, tried = store.upsert, []

        def upsert_while_another_writes(*args: Any, **kwargs: Any) -> Any:
            # Inside the merge's transaction, after it read the group: another connection's write
            # of the copy (which the merge deletes) must wait for it, not slip in between.
            with psycopg.connect(pg_url, autocommit=True) as conn:
                conn.execute("SET lock_timeout = '300ms'")
                with pytest.raises(psycopg.errors.LockNotAvailable):
                    conn.execute("UPDATE memories SET importance = 0.9 WHERE id = %s", (copy.id,))
                tried.append(True)
            return upsert(*args, **kwargs)

        store.upsert = upsert_while_another_writes
        try:
            done = consolidate.merge(engram, group, now=clock.t)
        finally:
            del store.upsert
        assert tried == [True] and done is not None and [m.id for m in done[1]] == [copy.id]
