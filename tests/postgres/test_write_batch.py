"""``write_batch`` on the stores with transactions: one transaction per batch, a savepoint per
write. A write the store refuses halfway (its row inserted, then its vector refused) must leave
nothing behind, while the writes around it are kept whole. On PostgreSQL each write used to
commit on its own, so the refused write's row stayed, without its vector."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from engram.db.postgres import PgDatabase
from engram.errors import DimensionError
from engram.model import MemoryFilter, Scope, make_draft
from engram.store.base import BatchWrite, MemoryStore
from engram.store.postgres import PostgresMemoryStore
from engram.store.sqlite import SqliteMemoryStore


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MemoryStore]:
    if request.param == "sqlite":
        made: MemoryStore = SqliteMemoryStore(tmp_path / "memory.db")
    else:
        new_database: Callable[[], str] = request.getfixturevalue("new_database")
        made = PostgresMemoryStore(PgDatabase.connect(new_database()))
    yield made
    made.close()


def _write(text: str, vector: np.ndarray, scope: Scope = Scope("alice")) -> BatchWrite:
    return BatchWrite(make_draft(text, max_content_chars=500, scope=scope), text.replace(" ", "-"), vector)


def test_a_write_refused_halfway_leaves_nothing_and_the_rest_is_kept(store: MemoryStore) -> None:
    good, bad = np.ones(4, dtype=np.float32), np.ones(5, dtype=np.float32)
    writes = [_write("first kept", good), _write("refused by its vector", bad),
              _write("kept in another scope", good, Scope("bob")), _write("last kept", good)]
    results = store.write_batch(writes, now=1000.0, identity="test:batch:4")
    assert isinstance(results[1], DimensionError)
    kept = [r.memory for i, r in enumerate(results) if i != 1]  # type: ignore[union-attr]
    assert [m.content for m in kept] == ["first kept", "kept in another scope", "last kept"]
    everyone = MemoryFilter(scopes=(Scope("alice"), Scope("bob")))
    assert sorted(m.content for m in store.list(everyone)) == sorted(m.content for m in kept)
    assert set(store.vectors_for([m.id for m in kept])) == {m.id for m in kept}


def test_writes_in_one_batch_see_each_other(store: MemoryStore) -> None:
    vector = np.ones(4, dtype=np.float32)
    results = store.write_batch([_write("said twice", vector), _write("said twice", vector)],
                                now=1000.0, identity="test:batch:4")
    assert [r.action for r in results] == ["created", "duplicate"]  # type: ignore[union-attr]
    assert results[0].memory.id == results[1].memory.id  # type: ignore[union-attr]
