"""A merge is one write: one that fails part-way (after the survivor was rewritten, before the
others were deleted) keeps nothing and tells no listener. It used to keep the survivor claiming
memories still stored, and the next run merged them into it again: each listed twice in
``merged_from``, its recalls counted twice."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from engram.audit import AuditQuery
from engram.engine import Engram
from engram.errors import StorageError
from engram.events import MemoryEvent
from engram.lifecycle import consolidate
from engram.lifecycle.settings import ConsolidationSettings
from engram.model import Memory
from engram.store.sqlite import SqliteMemoryStore
from tests.failing_writes import sqlite_insert_fails
from tests.lifecycle.conftest import DAY, Clock, remember_at

# ``fails(content)``: a context in which deleting the memory holding ``content`` fails in the store.
DeleteFails = Callable[[str], contextlib.AbstractContextManager[None]]


def a_failed_merge_keeps_nothing_and_the_next_merges_once(engram: Engram, clock: Clock, fails: DeleteFails,
                                                         reopen: Callable[[], Any] | None = None) -> None:
    """The check, on any engine whose store and audit trail are real (PostgreSQL's suite runs it too)."""
    store = engram.store
    # The survivor (its writer's key) arrived ten days ago; its copies now, so the merge raises its
    # arrival, moves a copy's link to it and sums their recalls before it deletes them.
    survivor = remember_at(engram, clock.t - 10 * DAY, "the user prefers DARK MODE in the editor!", key="dark-mode",
                           tags="prefs", importance=0.8).memory
    first = engram.remember("The user prefers dark mode in the editor", tags="ui", importance=0.4).memory
    second = engram.remember("Dark mode in the editor: the user prefers it", importance=0.2).memory
    other = engram.remember("The build uses Python 3.11", key="other").memory
    engram.link(second.key, "other")
    store.touch([survivor.id, first.id], clock.t)
    store.touch([first.id], clock.t)
    clock.advance(60)
    ids = [survivor.id, first.id, second.id, other.id]
    before = store.get_many(ids)
    assert "merged_from" not in before[0].metadata and before[0].received_at == clock.t - 60 - 10 * DAY
    trail = engram.backend.audit_log()
    rows = trail.query(AuditQuery(limit=10_000))
    told: list[MemoryEvent] = []
    engram.events.subscribe(told.append)
    settings = ConsolidationSettings(threshold=0.95)

    with fails(second.content), pytest.raises(StorageError, match="injected failure"):
        consolidate.run(engram, settings, now=clock.t)
    # Nothing of the merge is kept: the survivor's tags, metadata, arrival, last use and links, the
    # others and the link moved to it; no audit row, no event.
    assert store.get_many(ids) == before
    assert trail.query(AuditQuery(limit=10_000)) == rows
    assert told == []
    if reopen is not None:  # what is kept (the file) is as it was too
        reopened = reopen()
        try:
            assert reopened.get_many(ids) == before
        finally:
            reopened.close()

    report = consolidate.run(engram, settings, now=clock.t)
    assert sorted(m.id for m in report.removed) == sorted([first.id, second.id])
    (merged,) = store.get_many([survivor.id])
    assert sorted(h["id"] for h in merged.metadata["merged_from"]) == sorted([first.id, second.id])  # each once
    assert merged.metadata["merged_recall_count"] == 3  # 1 + 2 + 0, once
    assert set(merged.tags) == {"prefs", "ui"} and other.id in merged.links
    assert merged.received_at == max(first.received_at, second.received_at)
    assert [(e.kind, sorted(m.id for m in e.memories)) for e in told] == [
        ("forgotten", sorted([first.id, second.id])), ("updated", [survivor.id])]
    assert {i for i, _ in trail.forgotten([first.id, second.id])} == {first.id, second.id}
    assert consolidate.run(engram, settings, now=clock.t).removed == ()


@contextlib.contextmanager
def _delete_fails_in_memory(store: Any, content: str) -> Iterator[None]:
    # A store in memory cannot fail for real: its delete of that memory raises, as a full disk would.
    real = store.delete

    def delete(ids: Sequence[str]) -> list[Memory]:
        if any(m.content == content for m in store.get_many(ids)):
            raise StorageError("injected failure")
        return real(ids)

    store.delete = delete
    try:
        yield
    finally:
        del store.delete


def test_a_merge_failing_part_way_keeps_nothing_and_the_next_run_merges_once(backend, make_engram, clock, embedder,
                                                                               tmp_path: Path):
    engram = make_engram(backend, embedder=embedder)
    store = engram.store
    if backend == "sqlite":  # a trigger in the file aborts the delete, after the merge's other writes
        def fails(content: str) -> contextlib.AbstractContextManager[None]:
            return sqlite_insert_fails(store.location(), "memories", content, on="DELETE")
    else:
        def fails(content: str) -> contextlib.AbstractContextManager[None]:
            return _delete_fails_in_memory(store, content)
    reopen = {"sqlite": lambda: type(store)(store.path), "jsonfile": lambda: type(store)(store.path)}.get(backend)
    a_failed_merge_keeps_nothing_and_the_next_merges_once(engram, clock, fails, reopen)


def test_a_merges_events_are_told_once_it_is_committed(make_engram, clock, embedder):
    # Listeners (the audit trail, the memory folder, the recall cache) are told of a merge once it
    # is stored: told inside its transaction, one reading the file would not find what it was told
    # of, and one told of a merge then undone would keep what was never stored.
    engram = make_engram("sqlite", embedder=embedder)
    survivor = engram.remember("the user prefers DARK MODE in the editor!", key="dark-mode").memory
    copy = engram.remember("The user prefers dark mode in the editor").memory
    seen: list[tuple[str, list[str], bool]] = []

    def look(event: MemoryEvent) -> None:
        with contextlib.closing(sqlite3.connect(engram.store.location())) as other:  # sees only what is committed
            rows = dict(other.execute("SELECT id, metadata FROM memories WHERE id IN (?, ?)", (survivor.id, copy.id)))
        seen.append((event.kind, sorted(rows), "merged_from" in json.loads(rows[survivor.id])))

    engram.events.subscribe(look)
    consolidate.merge(engram, [survivor, copy], now=clock.t)  # no ``announce``: told by the engine's events
    assert seen == [("forgotten", [survivor.id], True), ("updated", [survivor.id], True)]


class _BeforeAtomic(SqliteMemoryStore):
    """A real SQLite store that, like a plug-in written before it, has no ``atomic``."""

    def __getattribute__(self, name: str) -> Any:
        if name == "atomic":
            raise AttributeError(name)
        return super().__getattribute__(name)


def test_a_store_without_atomic_merges_call_by_call_as_before(tmp_path: Path, clock, embedder):
    store = _BeforeAtomic(tmp_path / "memory.db")
    assert not hasattr(store, "atomic")
    engram = Engram(store, clock=clock, embedder=embedder)
    survivor = engram.remember("the user prefers DARK MODE in the editor!", key="dark-mode").memory
    copy = engram.remember("The user prefers dark mode in the editor").memory
    told: list[MemoryEvent] = []
    engram.events.subscribe(told.append)
    assert [m.id for m in consolidate.run(engram, ConsolidationSettings(threshold=0.95), now=clock.t).removed] == [copy.id]
    assert [h["id"] for h in store.get_many([survivor.id])[0].metadata["merged_from"]] == [copy.id]
    assert [e.kind for e in told] == ["forgotten", "updated"]
    engram.close()
