"""The record a SQLite write answers with is the memory as a later read finds it: a new memory's
read-back skips the links query (a new id has none yet), and a write with links answers with them.
Real SQLite files."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from engram.ids import key_from_content
from engram.model import Scope, make_draft
from engram.store.base import BatchWrite, WriteResult
from engram.store.sqlite import SqliteMemoryStore

IDENTITY = "test:read-back:4"


def _write(content: str, *, links: tuple[str, ...] = (), key: str | None = None) -> BatchWrite:
    draft = make_draft(content, max_content_chars=500, scope=Scope("alice"), key=key, tags=["t"],
                       metadata={"n": 1})
    return BatchWrite(draft, key_from_content(content), np.ones(4, dtype=np.float32), links=links)


def test_a_written_record_is_the_memory_a_later_read_finds(tmp_path: Path) -> None:
    store = SqliteMemoryStore(tmp_path / "memory.db")
    other = SqliteMemoryStore(tmp_path / "memory.db")  # another process's handle: nothing cached in common
    try:
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
    finally:
        other.close()
        store.close()
