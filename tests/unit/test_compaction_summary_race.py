"""A summary set by hand while a compaction runs is built on, not overwritten, on every local
history backend (PostgreSQL: the contract suite's summary_read test, tests/postgres). The hand
write comes from another handle on the same storage, as another process's would."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from engram.history.base import HistoryStore
from engram.history.inmemory import InMemoryHistoryStore
from engram.history.jsonl import JsonlHistoryStore
from engram.history.service import History
from engram.history.sqlite import SqliteHistoryStore
from engram.model import Message, make_message

KEY = "telegram:42"
HAND = "The user is planning a trip to Lisbon in April."


def _stores(backend: str, tmp_path: Path) -> tuple[HistoryStore, HistoryStore]:
    if backend == "sqlite":
        return SqliteHistoryStore.open(tmp_path / "history.db"), SqliteHistoryStore.open(tmp_path / "history.db")
    if backend == "jsonl":
        return JsonlHistoryStore(tmp_path / "h.jsonl"), JsonlHistoryStore(tmp_path / "h.jsonl")
    store = InMemoryHistoryStore()
    return store, store


@pytest.mark.parametrize("backend", ["sqlite", "jsonl", "inmemory"])
def test_a_hand_written_summary_survives_a_compaction_running_meanwhile(tmp_path: Path, backend: str) -> None:
    mine, theirs = _stores(backend, tmp_path)
    history = History(mine)
    for n in range(8):
        history.append(KEY, "user", f"question {n}", created_at=1_790_000_000.0 + n)
        history.append(KEY, "assistant", f"answer {n}", created_at=1_790_000_000.5 + n)
    extracted: list[list[str]] = []

    def extract(discarded: Sequence[Message]) -> None:
        if not extracted:  # the compaction has read the conversation and its (empty) summary
            theirs.set_summary(KEY, HAND)
        extracted.append([m.content for m in discarded])

    result = history.compact(KEY, extract=extract, force=True)
    assert result.compacted and history.count(KEY) == 10
    # Kept, with the counts of what the compaction discarded after it (the count summary builds on it).
    assert history.summary(KEY) == result.summary == (
        f"{HAND}\n[Conversation history compacted. Previous discussion covered: 3 user messages, "
        "3 assistant responses, 0 tool calls]")
    assert len(extracted) == 1  # the retry discards the same messages: not extracted again
    history.close()
    if theirs is not mine:
        theirs.close()


class _OlderStore:
    """A plug-in store whose discard_if_unchanged predates ``summary_read``."""

    def __init__(self) -> None:
        self._inner = InMemoryHistoryStore()

    def __getattr__(self, name: str) -> object:
        return getattr(self._inner, name)

    def discard_if_unchanged(self, key: str, read: Sequence[Message], start: int, stop: int, *,
                             summary: str | None = None) -> bool:
        return self._inner.discard_if_unchanged(key, read, start, stop, summary=summary)


def test_a_store_without_summary_read_still_has_the_summary_compared(caplog: pytest.LogCaptureFixture) -> None:
    from engram.history.base import discard_if_unchanged

    store = _OlderStore()
    store.append_many(KEY, [make_message("user", f"m{i}", created_at=float(i)) for i in range(3)])
    read = store.get_all(KEY)
    store.set_summary(KEY, HAND)
    assert discard_if_unchanged(store, KEY, read, 0, 1, summary="new", summary_read="") is False  # type: ignore[arg-type]
    assert store.get_summary(KEY) == HAND and "takes no summary_read" in caplog.text
    assert discard_if_unchanged(store, KEY, read, 0, 1, summary="new", summary_read=HAND)  # type: ignore[arg-type]
    assert store.get_summary(KEY) == "new" and store.count(KEY) == 2
