"""The shipped HistoryStore contract, run unchanged over every history backend.

A PostgreSQL backend joins by adding one branch to ``history_backend`` below.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import pytest

from engram.history import jsonl
from engram.history.inmemory import InMemoryHistoryStore
from engram.history.jsonl import JsonlHistoryStore
from engram.history.sqlite import SqliteHistoryStore
from engram.testing.history_contract import HistoryBackend, HistoryStoreContract
from tests.failing_writes import sqlite_insert_fails


def _sqlite(tmp_path: Path) -> HistoryBackend:
    path = str(tmp_path / "memory.db")

    def failing(text: str) -> contextlib.AbstractContextManager[None]:
        return sqlite_insert_fails(path, "history_messages", text)

    return HistoryBackend("sqlite", lambda: SqliteHistoryStore.open(path),
                          target="engram.history.sqlite:SqliteHistoryStore.open", kwargs={"path": path},
                          failing=failing)


@contextlib.contextmanager
def _disk_fills_up_at(text: str) -> Iterator[None]:
    """The JSONL store's low-level write puts what comes before ``text`` in the file, then fails
    as a full disk does."""
    real = jsonl._write_all
    marker = json.dumps(text, ensure_ascii=False).encode("utf-8")

    def write_all(fd: int, data: bytes) -> None:
        at = data.find(marker)
        if at < 0:
            return real(fd, data)
        os.write(fd, data[:at])
        raise OSError(errno.ENOSPC, "No space left on device")

    with mock.patch.object(jsonl, "_write_all", write_all):
        yield


def _jsonl(tmp_path: Path) -> HistoryBackend:
    # Caps far above what the suite writes: rotation has its own tests (tests/unit/test_history_jsonl.py).
    kwargs = {"path": str(tmp_path / "conversation-history.jsonl"), "max_entries": 100_000, "max_chars_per_entry": 100_000}
    return HistoryBackend("jsonl", lambda: JsonlHistoryStore(**kwargs),
                          target="engram.history.jsonl:JsonlHistoryStore", kwargs=kwargs, failing=_disk_fills_up_at)


def _inmemory(tmp_path: Path) -> HistoryBackend:
    shared = InMemoryHistoryStore()
    return HistoryBackend("inmemory", lambda: shared, persistent=False)


@pytest.fixture(params=["sqlite", "jsonl", "inmemory"])
def history_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[HistoryBackend]:
    yield {"sqlite": _sqlite, "jsonl": _jsonl, "inmemory": _inmemory}[request.param](tmp_path)


class TestHistoryStoreContract(HistoryStoreContract):
    pass
