"""Trims, compactions and appends racing on one conversation lose nothing (tests/history_races.py):
two processes on one SQLite file or one JSON-lines file, and two threads on each backend."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from engram.history.base import HistoryStore
from engram.history.inmemory import InMemoryHistoryStore
from engram.history.jsonl import JsonlHistoryStore
from engram.history.sqlite import SqliteHistoryStore
from tests.history_races import SCENARIOS


def _opener(backend: str, tmp_path: Path) -> Callable[[], HistoryStore]:
    if backend == "sqlite":
        return lambda: SqliteHistoryStore.open(tmp_path / "memory.db")
    if backend == "jsonl":
        return lambda: JsonlHistoryStore(tmp_path / "history.jsonl", max_entries=10_000)
    shared = InMemoryHistoryStore()
    return lambda: shared


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.__name__)
@pytest.mark.parametrize(("backend", "mode"), [("sqlite", "process"), ("sqlite", "thread"), ("jsonl", "process"),
                                               ("jsonl", "thread"), ("inmemory", "thread")])
def test_removals_racing_on_one_conversation_lose_nothing(scenario: Callable[..., None], backend: str, mode: str,
                                                           tmp_path: Path) -> None:
    scenario(_opener(backend, tmp_path), mode)
