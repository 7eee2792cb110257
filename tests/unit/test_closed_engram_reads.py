"""Every read of a closed engine is refused with one clear error on every built-in store (a real
SQLite file, a real JSON file, in memory), before the store is asked, and a refused recall
strengthens nothing.

Review: after ``close`` a SQLite engine's ``get`` said the database's own "Cannot operate on a
closed database", while an in-memory or JSON-file engine answered as if open, and its ``recall``
(``touch_on_recall``) still raised the recalled memories' recall count and importance."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from engram.engine import Engram
from engram.errors import StorageError
from tests.unit.test_closed_engram_writes import STORES, WRITES, closed_engram, kept_after_close

# Each reader of the engine, called as a user would call it on the two memories stored before close.
READS: dict[str, Callable[[Engram, Any, Any], object]] = {
    "find": lambda mem, a, b: mem.find(a.key),
    "get": lambda mem, a, b: mem.get(a.id),
    "get_by_key": lambda mem, a, b: mem.get_by_key(a.key),
    "named": lambda mem, a, b: mem.named(key=a.key),
    "named a Memory": lambda mem, a, b: mem.named(a),
    "list": lambda mem, a, b: mem.list(),
    "most_important": lambda mem, a, b: mem.most_important(),
    "most_recent": lambda mem, a, b: mem.most_recent(),
    "count": lambda mem, a, b: mem.count(),
    "versions": lambda mem, a, b: mem.versions(a.key),
    "recall": lambda mem, a, b: mem.recall("alpha"),
    "recall without touching": lambda mem, a, b: mem.recall("alpha", touch=False),
    "neighbours": lambda mem, a, b: mem.neighbours(a),
    "supersedes": lambda mem, a, b: mem.supersedes(a),
    "link_keys": lambda mem, a, b: mem.link_keys([a]),
    "visible_memories": lambda mem, a, b: mem.visible_memories(),
    "export_snapshot": lambda mem, a, b: mem.export_snapshot(),
    "stats": lambda mem, a, b: mem.stats(),
    "visible_stats": lambda mem, a, b: mem.visible_stats(),
    "audit_trail": lambda mem, a, b: mem.audit_trail(),
    "audit_of": lambda mem, a, b: mem.audit_of(a.id),
    "forgotten": lambda mem, a, b: mem.forgotten([(a.id, a.scope.agent)]),
}

# Public names of Engram that neither read nor write its memories: opening, views, the closed flag,
# listeners, argument checks, and the conversation history (closed with the engine, on its own).
NOT_MEMORY_ACCESS = {"embedder", "from_settings", "history", "for_agent", "for_session", "subscribe", "closed",
                     "close", "check_remember"}


def test_every_public_method_of_engram_is_checked_after_close() -> None:
    # A method added later lands in READS or WRITES (and so is checked here), or is said to touch no memory.
    named = {name.split(" ")[0] for name in (*READS, *WRITES)}
    # dir, not vars: Engram is assembled from mixins (engine.py), whose methods vars(Engram) does not list.
    public = {name for name in dir(Engram) if not name.startswith("_")}
    assert public - named - NOT_MEMORY_ACCESS == set()


@pytest.mark.parametrize("backend", sorted(STORES))
@pytest.mark.parametrize("read", sorted(READS))
def test_a_closed_engram_refuses_every_read_clearly(tmp_path: Path, backend: str, read: str) -> None:
    store, provider, mem, alpha, beta = closed_engram(tmp_path, backend)
    calls = provider.calls

    with pytest.raises(StorageError, match="this engram is closed: open a new one to read"):
        READS[read](mem, alpha, beta)

    assert provider.calls == calls  # the query was not embedded either
    kept = kept_after_close(tmp_path, backend, store)
    assert sorted(kept) == ["alpha", "beta"]
    # A recall touches what it finds (touch_on_recall is on): the refused one touched nothing.
    assert (kept["alpha"].recall_count, kept["alpha"].importance) == (alpha.recall_count, alpha.importance)


@pytest.mark.parametrize("backend", sorted(STORES))
def test_a_view_of_a_closed_engram_refuses_reads_too(tmp_path: Path, backend: str) -> None:
    mem = Engram(STORES[backend](tmp_path), agent="alice")
    mem.remember("alpha fact", key="alpha")
    view = mem.for_agent("alice", "s1")
    mem.close()

    with pytest.raises(StorageError, match="this engram is closed"):
        view.get("alpha")


@pytest.mark.parametrize("backend", sorted(STORES))
def test_a_recall_whose_engine_is_closed_before_its_touch_answers_and_counts_nothing(tmp_path: Path,
                                                                                      backend: str) -> None:
    # Review: a recall that had read its hits when another thread closed the engine failed in its
    # touch (the recall count): "SQLite error on <path>: Cannot operate on a closed database." on a
    # SQLite file, while an in-memory or JSON-file store counted the recall after close. The read
    # succeeded: it is answered; the count, which needs the shut store, is not kept.
    store = STORES[backend](tmp_path)
    mem = Engram(store, agent="alice")
    alpha = mem.remember("alpha fact", key="alpha").memory

    def close_from_another_thread(_: object) -> None:  # the hits are read; the touch comes next
        closer = threading.Thread(target=mem.close)
        closer.start()
        closer.join()

    mem.events.subscribe_reads(close_from_another_thread)
    result = mem.recall("alpha")

    assert mem.closed and [hit.memory.key for hit in result.hits] == ["alpha"]
    kept = kept_after_close(tmp_path, backend, store)["alpha"]
    assert (kept.recall_count, kept.importance) == (alpha.recall_count, alpha.importance)
