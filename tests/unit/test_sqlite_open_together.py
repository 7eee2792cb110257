"""Threads opening a new SQLite file at once: the switch to WAL is tried again while another
connection holds the file, where SQLite answered "database is locked" without waiting (it skips
the busy handler where waiting could deadlock). Real files; before, ~1 round in 20 failed."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from engram.db.sqlite import Database
from engram.embed.cache import EmbeddingCache


def _open_cache(path: Path) -> Any:
    return EmbeddingCache(path)._db()


def _open_database(path: Path) -> Any:
    return Database(path).conn


@pytest.mark.parametrize("open_file", [_open_cache, _open_database], ids=["embedding cache", "store database"])
def test_threads_opening_a_new_file_at_once_all_get_it_in_wal_mode(
        tmp_path: Path, open_file: Callable[[Path], Any]) -> None:
    errors: list[BaseException] = []
    for round_ in range(60):
        path = tmp_path / f"round-{round_}.db"
        start = threading.Barrier(8)
        conns: list[Any] = []

        def open_it(path: Path = path, start: threading.Barrier = start, conns: list[Any] = conns) -> None:
            try:
                start.wait(20)
                conns.append(open_file(path))
            except BaseException as exc:  # reported below: a thread's failure must fail the test
                errors.append(exc)

        threads = [threading.Thread(target=open_it) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert errors == [], errors[:3]
        assert len(conns) == 8
        assert {conn.execute("PRAGMA journal_mode").fetchone()[0] for conn in conns} == {"wal"}
        for conn in conns:
            conn.close()
