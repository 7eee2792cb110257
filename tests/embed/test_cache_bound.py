"""The embedding cache's file keeps at most ``max_entries`` rows (``embeddings.cache_max_entries``):
the oldest written go (or used: test_cache_recency.py), whichever process or model wrote them, on
real SQLite files."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from engram.config import load_settings
from engram.embed import EmbeddingCache
from engram.embed.cache import text_key
from engram.errors import ConfigError, ValidationError


def vectors(n: int, start: int = 0) -> np.ndarray:
    return np.arange(start, start + n, dtype=np.float32)[:, None] * np.ones((1, 8), dtype=np.float32)


def texts(n: int, start: int = 0, prefix: str = "text") -> list[str]:
    return [f"{prefix} {i}" for i in range(start, start + n)]


def test_past_the_bound_the_oldest_written_rows_go_and_the_newest_stay(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    cache = EmbeddingCache(path, max_entries=5)
    for start in range(0, 12, 3):  # 12 texts in batches of 3: the bound is passed within a batch too
        cache.put_many("m:1:8", texts(3, start), vectors(3, start))
    assert len(cache) == 5
    cache.close()
    other = EmbeddingCache(path, max_entries=5)  # as another process reads the file (no LRU in front)
    found = other.get_many("m:1:8", texts(12))
    assert sorted(found) == sorted(texts(5, 7))
    assert all(np.array_equal(found[t], vectors(1, i)[0]) for i, t in zip(range(7, 12), texts(5, 7), strict=True))
    assert other.get_many("m:1:8", ["text 0", "text 6"]) == {} and other.misses == 9
    other.close()


def test_two_caches_on_one_file_keep_it_within_the_bound_together(tmp_path: Path) -> None:
    # Two objects, two connections, each with its own LRU: what two processes sharing a home do.
    path = tmp_path / "cache.db"
    first, second = EmbeddingCache(path, max_entries=6), EmbeddingCache(path, max_entries=6)
    for n in range(10):
        (first if n % 2 == 0 else second).put_many("m:1:8", texts(1, n), vectors(1, n))
        assert len(first) == min(n + 1, 6) and len(second) == len(first)
    reader = EmbeddingCache(path, max_entries=6)
    assert sorted(reader.get_many("m:1:8", texts(10))) == sorted(texts(6, 4))
    for cache in (first, second, reader):
        cache.close()


def test_another_models_rows_count_against_the_bound_and_being_older_go_first(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    cache = EmbeddingCache(path, max_entries=4)
    cache.put_many("old:model:8", texts(3, prefix="old"), vectors(3))
    cache.put_many("new:model:8", texts(2, prefix="new"), vectors(2))
    assert len(cache) == 4  # both models' rows are counted
    cache.put_many("new:model:8", texts(2, 2, prefix="new"), vectors(2, 2))
    cache.close()
    reader = EmbeddingCache(path, max_entries=4)
    assert reader.get_many("old:model:8", texts(3, prefix="old")) == {}
    assert sorted(reader.get_many("new:model:8", texts(4, prefix="new"))) == sorted(texts(4, prefix="new"))
    reader.close()


def test_a_lower_bound_trims_the_file_at_its_next_write(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    roomy = EmbeddingCache(path, max_entries=100)
    roomy.put_many("m:1:8", texts(20), vectors(20))
    roomy.close()
    tight = EmbeddingCache(path, max_entries=3)
    tight.put_many("m:1:8", ["one more"], vectors(1, 99))
    assert len(tight) == 3
    assert sorted(tight.get_many("m:1:8", [*texts(20), "one more"])) == sorted(["one more", "text 18", "text 19"])
    tight.close()


def test_keeping_the_bound_counts_no_rows_and_deletes_by_a_range_of_rowids(tmp_path: Path) -> None:
    """A write at the bound must not read the whole table (a COUNT(*) on every write, or a scan
    ordered by ``created``, which has no index): its statements, caught as SQLite runs them, are
    the insert and a delete SQLite plans as a search of a rowid range."""
    cache = EmbeddingCache(tmp_path / "cache.db", max_entries=50)
    cache.put_many("m:1:8", texts(60), vectors(60))
    seen: list[str] = []
    cache._db().set_trace_callback(seen.append)
    cache.put_many("m:1:8", texts(4, 60), vectors(4, 60))
    cache._db().set_trace_callback(None)
    assert not [sql for sql in seen if "count(" in sql.lower()], seen
    deletes = [sql for sql in seen if sql.lstrip().upper().startswith("DELETE")]
    assert len(deletes) == 1, seen
    plan = [row[-1] for row in cache._db().execute(f"EXPLAIN QUERY PLAN {deletes[0]}")]
    assert plan[0] == "SEARCH embedding_cache USING INTEGER PRIMARY KEY (rowid<?)", plan
    assert not [step for step in plan if step.startswith("SCAN")], plan
    assert len(cache) == 50
    cache.close()


def test_a_file_of_the_earlier_layout_is_moved_into_the_rowid_table_in_written_order(tmp_path: Path) -> None:
    # The earlier WITHOUT ROWID table has no rowid to bound by: opening the file moves its newest
    # rows (by ``created``) into the rowid table, oldest first, and the bound holds from then on.
    path = tmp_path / "cache.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE embedding_cache (identity TEXT NOT NULL, text_hash BLOB NOT NULL, vector BLOB NOT NULL,"
                 " created REAL NOT NULL DEFAULT (unixepoch('subsec')), PRIMARY KEY (identity, text_hash)) WITHOUT ROWID")
    conn.execute("CREATE INDEX embedding_cache_text ON embedding_cache (text_hash)")
    for i, created in enumerate([5.0, 1.0, 4.0, 2.0, 3.0]):  # text i written at ``created``
        conn.execute("INSERT INTO embedding_cache (identity, text_hash, vector, created) VALUES (?, ?, ?, ?)",
                     ("m:1:8", text_key(f"text {i}"), vectors(1, i)[0].tobytes(), created))
    conn.commit()
    conn.close()
    cache = EmbeddingCache(path, max_entries=4)
    assert len(cache) == 4  # text 1, written first, went as the file was moved
    cache.put_many("m:1:8", ["new"], vectors(1, 9))  # text 3, the oldest left, goes
    cache.close()
    conn = sqlite3.connect(path)
    try:
        assert "WITHOUT ROWID" not in conn.execute("SELECT sql FROM sqlite_master WHERE name = 'embedding_cache'"
                                                   ).fetchone()[0].upper()
        in_rowid_order = [bytes(h) for (h,) in conn.execute("SELECT text_hash FROM embedding_cache ORDER BY rowid")]
        assert in_rowid_order == [text_key(t) for t in ("text 4", "text 2", "text 0", "new")]
        plan = " ".join(row[-1] for row in conn.execute("EXPLAIN QUERY PLAN SELECT * FROM embedding_cache"
                                                         " WHERE text_hash = x'00'"))
        assert "embedding_cache_text" in plan  # the index ``drop`` finds a text's rows by was made again
    finally:
        conn.close()
    again = EmbeddingCache(path, max_entries=4)
    found = again.get_many("m:1:8", [*texts(5), "new"])
    assert sorted(found) == ["new", "text 0", "text 2", "text 4"]
    assert np.array_equal(found["text 2"], vectors(1, 2)[0])
    again.close()


@pytest.mark.parametrize("bad", [0, -1, True, 2.5, 2**63])
def test_a_bound_out_of_range_is_refused_naming_it(tmp_path: Path, bad: object) -> None:
    # 2**63, past SQLite's largest integer, was taken and the first write failed with OverflowError.
    # The words are the setting's (``range_words``): its top is no limit a person meets.
    with pytest.raises(ValidationError, match=r"^max_entries: .* \(allowed: (an integer, )?1 or more\)$"):
        EmbeddingCache(tmp_path / "cache.db", max_entries=bad)  # type: ignore[arg-type]
    assert not (tmp_path / "cache.db").exists()


def test_the_largest_bound_sqlite_holds_is_kept_and_written_under(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "cache.db", max_entries=2**63 - 1)
    cache.put_many("m:1:8", texts(3), vectors(3))
    cache.close()
    again = EmbeddingCache(tmp_path / "cache.db", max_entries=2**63 - 1)
    assert sorted(again.get_many("m:1:8", texts(3))) == texts(3)
    again.close()


@pytest.mark.parametrize("bad", ["0", "-5"])
def test_the_setting_refuses_zero_and_below_naming_itself_and_where_it_was_set(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch, bad: str,
) -> None:
    monkeypatch.setenv("ENGRAM_EMBEDDINGS__CACHE_MAX_ENTRIES", bad)
    # Its top (SQLite's largest integer) is no limit a person meets: "1 or more", not "1 to 9223372036854775807".
    with pytest.raises(ConfigError, match=rf"embeddings\.cache_max_entries: {bad} is out of range \(allowed: 1 or more\) "
                                          r"\(from ENGRAM_EMBEDDINGS__CACHE_MAX_ENTRIES\)"):
        load_settings()
    with pytest.raises(ConfigError, match=rf"embeddings\.cache_max_entries: {bad} is out of range "
                                          r"\(allowed: 1 or more\) \(from an argument\)"):
        load_settings(embeddings={"cache_max_entries": int(bad)})
    monkeypatch.setenv("ENGRAM_EMBEDDINGS__CACHE_MAX_ENTRIES", "7")
    assert load_settings().embeddings.cache_max_entries == 7


def test_the_engine_bounds_its_cache_file_by_the_setting(server, tmp_path: Path) -> None:
    # Memories' contents and recall queries both go through the cache: both count.
    from engram.engine import Engram

    home = tmp_path / "home"
    with Engram.from_settings(home=home, embeddings={"provider": "ollama", "model": "nomic-embed-text",
                                                     "base_url": server.url, "cache_max_entries": 3}) as engram:
        for i in range(4):
            engram.remember(f"memory number {i}")
        engram.recall("which memory is the newest")
    cache = EmbeddingCache(home / "embedding-cache.db", max_entries=3)
    assert len(cache) == 3
    kept = cache.get_many("ollama:nomic-embed-text:768", ["memory number 2", "memory number 3",
                                                           "which memory is the newest", "memory number 0"])
    assert sorted(kept) == ["memory number 2", "memory number 3", "which memory is the newest"]
    cache.close()
