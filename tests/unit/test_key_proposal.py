"""A taken key gets the next free ``-N`` suffix in its scope (``SqliteMemoryStore._free_key``,
``store/free_key.py``), found by seeking the (agent, session, key) index, not by reading every key
of the scope nor every ``-N`` key taken: either cost every store without a key time in proportion to
the memories of its scope (quadratic over an import of templated content)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engram.engine import Engram
from engram.store.sqlite import SqliteMemoryStore


def test_a_taken_key_gets_the_next_suffix_free_in_its_own_scope(tmp_path: Path) -> None:
    with Engram(SqliteMemoryStore(tmp_path / "memory.db")) as engram:
        for key in ("apple", "apple-2", "apple,pie", "apple pie", "apple-4"):  # the last two sort in the range
            engram.remember(f"memory keyed {key}", key=key)
        engram.for_agent("someone-else").remember("another agent's apple-3", key="apple-3")
        store = engram.store
        assert isinstance(store, SqliteMemoryStore)
        with store.db.read() as conn:
            assert store._free_key(conn, "default", "", "apple") == "apple-3"
            assert store._free_key(conn, "default", "", "pear") == "pear"
            assert store._free_key(conn, "someone-else", "", "apple") == "apple"
        assert engram.remember("a new memory", key=None).memory.key  # the write path still proposes one


def test_the_free_key_is_found_by_a_seek_not_a_scan_of_the_scope(tmp_path: Path) -> None:
    key, steps = _free_key_after(tmp_path, [{"content": f"memory number {i}", "key": f"other-{i}"} for i in range(3000)])
    assert key == "apple"
    # A seek reads a handful of index entries; reading the scope's 3,000 keys takes ~10x each.
    assert steps < 300, steps


def test_a_long_run_of_suffixes_is_not_read_to_find_the_next_one(tmp_path: Path) -> None:
    keys = ["apple", *(f"apple-{n}" for n in range(2, 3001))]
    key, steps = _free_key_after(tmp_path, [{"content": f"memory keyed {key}", "key": key} for key in keys])
    assert key == "apple-3001"
    # A few batches of seeks take ~900; reading the 3,000 apple-N keys took ~12,000.
    assert steps < 2000, steps


def _free_key_after(tmp_path: Path, stored: list[dict[str, Any]]) -> tuple[str, int]:
    """The key SQLite's store gives "apple" once ``stored`` is, with the virtual-machine
    instructions the search took (called for each one: a count, not a time)."""
    with Engram(SqliteMemoryStore(tmp_path / "memory.db")) as engram:
        engram.remember_many(stored)
        store = engram.store
        assert isinstance(store, SqliteMemoryStore)
        with store.db.read() as conn:
            steps = [0]

            def count() -> int:
                steps[0] += 1
                return 0  # go on

            conn.set_progress_handler(count, 1)
            try:
                return store._free_key(conn, "default", "", "apple"), steps[0]
            finally:
                conn.set_progress_handler(None, 1)

