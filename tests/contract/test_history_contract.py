"""The shipped HistoryStore contract, run unchanged over every history backend.

A PostgreSQL backend joins by adding one branch to ``history_backend`` below.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from engram.history.inmemory import InMemoryHistoryStore
from engram.history.jsonl import JsonlHistoryStore
from engram.history.sqlite import SqliteHistoryStore
from engram.testing.history_contract import HistoryBackend, HistoryStoreContract


def _sqlite(tmp_path: Path) -> HistoryBackend:
    path = str(tmp_path / "memory.db")
    return HistoryBackend("sqlite", lambda: SqliteHistoryStore.open(path),
                          target="engram.history.sqlite:SqliteHistoryStore.open", kwargs={"path": path})


def _jsonl(tmp_path: Path) -> HistoryBackend:
    # Caps far above what the suite writes: rotation has its own tests (tests/unit/test_history_jsonl.py).
    kwargs = {"path": str(tmp_path / "conversation-history.jsonl"), "max_entries": 100_000, "max_chars_per_entry": 100_000}
    return HistoryBackend("jsonl", lambda: JsonlHistoryStore(**kwargs),
                          target="engram.history.jsonl:JsonlHistoryStore", kwargs=kwargs)


def _inmemory(tmp_path: Path) -> HistoryBackend:
    shared = InMemoryHistoryStore()
    return HistoryBackend("inmemory", lambda: shared, persistent=False)


@pytest.fixture(params=["sqlite", "jsonl", "inmemory"])
def history_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[HistoryBackend]:
    yield {"sqlite": _sqlite, "jsonl": _jsonl, "inmemory": _inmemory}[request.param](tmp_path)


class TestHistoryStoreContract(HistoryStoreContract):
    pass
