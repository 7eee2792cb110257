"""The record a write answers with is the memory as a later read finds it: a new memory's read-back
skips the links query (a new id has none yet; PostgreSQL reads it back in the insert itself), and a
write with links answers with them. A real SQLite file and a real PostgreSQL server."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest

from engram.db.postgres import PgDatabase
from engram.ids import key_from_content
from engram.model import Scope, make_draft
from engram.store.base import BatchWrite, MemoryStore, WriteResult
from engram.store.postgres import PostgresMemoryStore
from engram.store.sqlite import SqliteMemoryStore

IDENTITY = "test:read-back:4"


def _write(content: str, *, links: tuple[str, ...] = (), key: str | None = None) -> BatchWrite:
    draft = make_draft(content, max_content_chars=500, scope=Scope("alice"), key=key, tags=["t"],
                       metadata={"n": 1})
    return BatchWrite(draft, key_from_content(content), np.ones(4, dtype=np.float32), links=links)


@pytest.fixture(params=["sqlite", "postgres"])
def two_handles(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[MemoryStore, MemoryStore]]:
    """Two stores on the same data: the second is another process's handle, nothing cached in common."""
    if request.param == "sqlite":
        handles: tuple[MemoryStore, MemoryStore] = (SqliteMemoryStore(tmp_path / "memory.db"),
                                                    SqliteMemoryStore(tmp_path / "memory.db"))
    else:
        new_database: Callable[[], str] = request.getfixturevalue("new_database")
        url = new_database()
        handles = (PostgresMemoryStore(PgDatabase.connect(url)), PostgresMemoryStore(PgDatabase.connect(url)))
    yield handles
    for handle in handles:
        handle.close()


def test_a_written_record_is_the_memory_a_later_read_finds(two_handles: tuple[MemoryStore, MemoryStore]) -> None:
    store, other = two_handles
    target = store.write_batch([_write("the link target")], now=1000.0, identity=IDENTITY)[0]
    assert isinstance(target, WriteResult)
    results = store.write_batch([
        _write("alone, no links"),
        _write("linked to the target", links=(target.memory.id,)),
        _write("linked to a memory not stored", links=("0190f000-0000-7000-8000-000000000000",)),
        _write("keyed, linked", key="keyed", links=(target.memory.id,)),
        _write("alone, no links"),  # the same text again: the first one answers
    ], now=1001.0, identity=IDENTITY)
    assert [r.action for r in results] == ["created", "created", "created", "created", "duplicate"]  # type: ignore[union-attr]
    alone, linked, dangling, keyed, again = (r.memory for r in results)  # type: ignore[union-attr]
    assert alone.links == () and dangling.links == () and again == alone
    assert linked.links == (target.memory.id,) and keyed.links == (target.memory.id,)
    written = {m.id: m for m in (alone, linked, dangling, keyed)}
    for handle in (store, other):  # every field, the links included
        assert {m.id: m for m in handle.get_many(list(written))} == written
    # The target gained the links after its own write answered: a read shows them, both ways.
    assert set(store.get_many([target.memory.id])[0].links) == {linked.id, keyed.id}
    # One write at a time (upsert, outside a batch) answers as a read finds it too.
    single = store.upsert(make_draft("upserted alone", max_content_chars=500, scope=Scope("alice")),
                          proposed_key="upserted-alone", now=1002.0)
    assert single.action == "created" and other.get_many([single.memory.id]) == [single.memory]


def test_postgres_reads_a_new_memory_back_in_its_insert(new_database: Callable[[], str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """One round trip fewer per created memory: the INSERT returns the row (RETURNING), nothing is
    sent after it, and it does not ask memory_links (a new id has none). The statements are seen
    as psycopg sends them to the server."""
    store = PostgresMemoryStore(PgDatabase.connect(new_database()))
    sent: list[str] = []
    execute = psycopg.Connection.execute

    def counted(conn: psycopg.Connection[Any], query: Any, *args: Any, **kwargs: Any) -> Any:
        sent.append(query if isinstance(query, str) else str(query))
        return execute(conn, query, *args, **kwargs)

    try:
        store.upsert(make_draft("a first memory", max_content_chars=500, scope=Scope("alice")),
                     proposed_key="first", now=1000.0)
        monkeypatch.setattr(psycopg.Connection, "execute", counted)
        result = store.upsert(make_draft("a second memory", max_content_chars=500, scope=Scope("alice"), tags=["t"]),
                              proposed_key="second", now=1001.0)
        monkeypatch.undo()
        assert result.action == "created" and result.memory.links == () and result.memory.tags == ("t",)
        inserts = [i for i, sql in enumerate(sent) if sql.startswith("INSERT INTO memories")]
        assert inserts == [len(sent) - 1], sent  # the insert is the last statement: no read-back after it
        assert "RETURNING" in sent[-1] and "memory_links" not in sent[-1]
        assert store.get_many([result.memory.id]) == [result.memory]
    finally:
        store.close()
