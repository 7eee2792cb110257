"""The embedding cache's bound evicts the least recently used rows, nearly (``embed/cache.py``'s
``_EVICT``): a vector read recently survives writes that evict older unread ones, a hit itself
writes nothing, and uses are recorded in batches, on real SQLite files shared by several cache
objects (as several processes share a home)."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import numpy as np
import pytest

from engram.embed import EmbeddingCache
from engram.embed import cache as cache_module

ID = "m:1:8"


def vectors(n: int, start: int = 0) -> np.ndarray:
    return np.arange(start, start + n, dtype=np.float32)[:, None] * np.ones((1, 8), dtype=np.float32)


def texts(n: int, start: int = 0) -> list[str]:
    return [f"text {i}" for i in range(start, start + n)]


def kept(path: Path, candidates: list[str], max_entries: int) -> list[str]:
    reader = EmbeddingCache(path, max_entries=max_entries)  # a fresh object: the file's rows, no LRU
    try:
        return sorted(reader.get_many(ID, candidates))
    finally:
        reader._used.clear()  # this look is no use of them
        reader.close()


def test_a_vector_read_by_one_process_survives_another_process_writes(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    writer = EmbeddingCache(path, max_entries=4)
    writer.put_many(ID, texts(4), vectors(4))
    reader = EmbeddingCache(path, max_entries=4)
    assert np.array_equal(reader.get_many(ID, ["text 0"])["text 0"], vectors(1)[0])
    reader.close()  # records the use
    writer.put_many(ID, texts(2, 4), vectors(2, 4))  # two new rows: two go
    # Oldest written would have kept text 2..5; the read text 0 stays and the unread 1 and 2 go.
    assert kept(path, texts(6), 4) == ["text 0", "text 3", "text 4", "text 5"]
    writer.close()


def test_a_hit_in_the_process_lru_counts_as_a_use_recorded_at_the_next_write(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    cache = EmbeddingCache(path, max_entries=3)
    cache.put_many(ID, texts(3), vectors(3))
    seen: list[str] = []
    cache._db().set_trace_callback(seen.append)
    assert set(cache.get_many(ID, ["text 0"])) == {"text 0"}  # served by the LRU in front
    assert seen == []  # no statement at all, let alone a write
    cache.put_many(ID, ["text 3"], vectors(1, 3))
    cache._db().set_trace_callback(None)
    assert kept(path, texts(4), 3) == ["text 0", "text 2", "text 3"]
    cache.close()


def test_a_hit_from_the_file_writes_nothing_until_enough_uses_wait(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "cache.db"
    EmbeddingCache(path, max_entries=8).put_many(ID, texts(8), vectors(8))
    monkeypatch.setattr(cache_module, "_FLUSH_USES", 3)
    reader = EmbeddingCache(path, max_entries=8)
    seen: list[str] = []
    reader._db().set_trace_callback(seen.append)
    reader.get_many(ID, ["text 0", "text 1"])
    assert not [sql for sql in seen if not sql.lstrip().upper().startswith(("SELECT", "PRAGMA"))], seen
    reader.get_many(ID, ["text 0", "text 1", "text 2"])  # three distinct uses: recorded in one transaction
    writes = [sql for sql in seen if sql.lstrip().upper().startswith(("BEGIN", "UPDATE", "COMMIT"))]
    assert writes[0] == "BEGIN IMMEDIATE" and writes[-1] == "COMMIT" and len(writes) == 5, writes
    assert reader._used == {}
    reader._db().set_trace_callback(None)
    reader.close()
    with sqlite3.connect(path) as conn:  # the two oldest-quarter rows (text 0, 1) moved to the top, in use order
        order = [bytes(h) for (h,) in conn.execute("SELECT text_hash FROM embedding_cache ORDER BY rowid")]
    assert order[-2:] == [cache_module.text_key("text 0"), cache_module.text_key("text 1")]
    assert order[:6] == [cache_module.text_key(t) for t in texts(6, 2)]


def test_a_hit_on_a_busy_file_does_not_wait_and_its_use_is_kept_for_later(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "cache.db"
    EmbeddingCache(path, max_entries=4).put_many(ID, texts(4), vectors(4))
    monkeypatch.setattr(cache_module, "_FLUSH_USES", 1)
    reader = EmbeddingCache(path, max_entries=4, busy_timeout_ms=5000)
    # Another writer mid-write, through the cache's own SQLite library: POSIX locks do not conflict
    # within a process, and only one library's bookkeeping sees both connections.
    holder = cache_module.sqlite3.connect(str(path), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        started = time.monotonic()
        assert set(reader.get_many(ID, ["text 0"])) == {"text 0"}
        assert time.monotonic() - started < 1.0  # not the 5 s busy timeout
        assert list(reader._used) == [(ID, cache_module.text_key("text 0"))]
        assert reader._db().execute("PRAGMA busy_timeout").fetchone()[0] == 5000  # restored
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    reader.put_many(ID, ["text 4"], vectors(1, 4))  # the waiting use goes in with this write
    assert kept(path, texts(5), 4) == ["text 0", "text 2", "text 3", "text 4"]
    reader.close()


def test_hot_vectors_used_between_every_write_leave_the_file_near_its_bound(tmp_path: Path) -> None:
    # Moving a row at every use would leave a hole each time in the range the bound keeps: five
    # queries used between writes would leave a 100-row file holding ~17 rows. Only rows in the
    # range's oldest quarter move, so at least three quarters of the bound stay, hot ones included.
    path = tmp_path / "cache.db"
    cache = EmbeddingCache(path, max_entries=100, lru_size=0)  # every hit read from the file
    cache.put_many(ID, texts(100), vectors(100))
    hot = texts(5)
    for n in range(300):
        assert set(cache.get_many(ID, hot)) == set(hot)
        cache.put_many(ID, texts(1, 100 + n), vectors(1, 100 + n))
        assert len(cache) >= 75
    assert len(cache) <= 100
    assert set(kept(path, hot, 100)) == set(hot)
    newest = texts(70, 330)
    assert kept(path, newest, 100) == sorted(newest)  # the newest written are all there too
    cache.close()


def test_a_dropped_texts_pending_use_is_forgotten_with_it(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    cache = EmbeddingCache(path, max_entries=4)
    cache.put_many(ID, texts(2), vectors(2))
    cache.get_many(ID, texts(2))
    assert cache.drop(["text 0"]) == 1
    assert list(cache._used) == [(ID, cache_module.text_key("text 1"))]
    cache.clear(ID)
    assert not cache._used
    cache.close()


@pytest.mark.parametrize("max_entries", [1, 2, 3, 5])
def test_small_bounds_still_keep_the_one_just_read(tmp_path: Path, max_entries: int) -> None:
    path = tmp_path / "cache.db"
    cache = EmbeddingCache(path, max_entries=max_entries)
    cache.put_many(ID, texts(max_entries), vectors(max_entries))
    cache.get_many(ID, ["text 0"])
    cache.put_many(ID, ["new"], vectors(1, 99))
    survivors = kept(path, [*texts(max_entries), "new"], max_entries)
    assert "new" in survivors and len(survivors) == max_entries
    assert ("text 0" in survivors) == (max_entries > 1)  # a bound of 1 keeps the newest write alone
    cache.close()
