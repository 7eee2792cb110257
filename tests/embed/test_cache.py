"""The persistent cache, proven by counting the requests a real server received."""

from __future__ import annotations

import sqlite3
import threading

import numpy as np
import pytest

pytest.importorskip("httpx")  # the remote providers' client (extra llm)

from engram.embed import Embedder, EmbeddingCache
from engram.embed.cache import text_key
from engram.embed.ollama import OllamaProvider
from engram.embed.openai import OpenAIProvider

from .conftest import API_KEY


def ollama(server, cache, **kw):
    return Embedder(OllamaProvider(base_url=server.url), cache=cache, **kw)


def test_second_call_is_served_from_cache(server, tmp_path):
    emb = ollama(server, EmbeddingCache(tmp_path / "cache.db"))
    first = emb.embed(["alpha beta", "gamma delta"])
    assert len(server.requests) == 1
    again = emb.embed(["gamma delta", "alpha beta"])
    assert len(server.requests) == 1
    assert np.array_equal(again, first[::-1])
    q = emb.embed_query("alpha beta")
    assert len(server.requests) == 1 and np.array_equal(q, first[0])


def test_only_missing_texts_are_requested(server, tmp_path):
    emb = ollama(server, EmbeddingCache(tmp_path / "cache.db"))
    emb.embed(["one", "two"])
    emb.embed(["one", "two", "three", "three"])
    assert [r.body["input"] for r in server.requests] == [["one", "two"], ["three"]]


def test_persists_across_embedder_instances(server, tmp_path):
    path = tmp_path / "cache.db"
    first = ollama(server, EmbeddingCache(path)).embed(["remember me"])
    second_cache = EmbeddingCache(path)  # a new process would open the file the same way
    again = ollama(server, second_cache).embed(["remember me"])
    assert len(server.requests) == 1 and np.array_equal(first, again)
    assert second_cache.hits == 1 and len(second_cache) == 1


def test_identity_is_part_of_the_key(server, tmp_path):
    cache = EmbeddingCache(tmp_path / "cache.db")
    ollama(server, cache).embed(["shared text"])
    oai = Embedder(OpenAIProvider(base_url=server.url + "/v1", api_key=API_KEY), cache=cache)
    assert oai.embed(["shared text"]).shape == (1, 1536)
    assert len(server.requests) == 2 and len(cache) == 2


def test_file_holds_no_text_and_clear_forgets(server, tmp_path):
    path = tmp_path / "cache.db"
    cache = EmbeddingCache(path)
    emb = ollama(server, cache)
    emb.embed(["a secret phrase"])
    cache.close()
    on_disk = b"".join(f.read_bytes() for f in tmp_path.glob("cache.db*"))
    assert len(on_disk) > 0 and b"secret" not in on_disk
    cache.clear("ollama:nomic-embed-text:768")
    assert len(cache) == 0
    emb.embed(["a secret phrase"])
    assert len(server.requests) == 2


def test_memory_only_cache_and_lru_bound(server):
    cache = EmbeddingCache(None, lru_size=2)
    emb = ollama(server, cache)
    emb.embed(["a", "b", "c"])
    assert len(cache) == 2
    emb.embed(["c"])
    assert len(server.requests) == 1
    emb.embed(["a"])
    assert len(server.requests) == 2


def test_concurrent_writers_share_one_file(server, tmp_path):
    path = tmp_path / "cache.db"
    errors = []

    def work(n: int) -> None:
        try:
            emb = ollama(server, EmbeddingCache(path))
            emb.embed([f"thread {n} text {i}" for i in range(20)])
        except Exception as exc:  # noqa: BLE001 - surfaced by the assert below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(EmbeddingCache(path)) == 80


def test_with_a_key_the_cache_file_is_encrypted(tmp_path):
    pytest.importorskip("sqlcipher3")
    path = tmp_path / "embedding-cache.db"
    path.write_bytes(b"")  # a plaintext cache left from before the key was set is replaced
    import sqlite3

    with sqlite3.connect(path) as plain:
        plain.execute("CREATE TABLE leftover (x)")
    cache = EmbeddingCache(path, key="correct horse battery")
    vector = np.arange(4, dtype=np.float32)
    cache.put_many("p:m:4", ["the launch code is tangerine"], np.stack([vector]))
    cache.close()
    raw = path.read_bytes()
    assert not raw.startswith(b"SQLite format 3")
    with pytest.raises(sqlite3.DatabaseError):
        sqlite3.connect(path).execute("SELECT * FROM embedding_cache").fetchall()
    again = EmbeddingCache(path, key="correct horse battery")
    assert np.array_equal(again.get_many("p:m:4", ["the launch code is tangerine"])["the launch code is tangerine"], vector)
    again.close()


def test_an_encrypted_store_keeps_its_embedding_cache_encrypted(tmp_path):
    """What the README lists as protected is what is on disk: no plaintext SQLite file beside an
    encrypted store (the embedding cache holds a vector per content and hashes that confirm guesses)."""
    pytest.importorskip("sqlcipher3")
    from engram.engine import Engram

    home = tmp_path / "home"
    with Engram.from_settings(home=home, privacy={"encryption_key": "correct horse battery"}) as engram:
        engram.remember("the launch code is tangerine")
        engram.recall("launch code")
    databases = [p for p in home.rglob("*.db")]
    assert home / "embedding-cache.db" in databases
    for path in databases:
        assert not path.read_bytes()[:16].startswith(b"SQLite format 3"), path


def test_a_new_cache_file_keeps_vectors_in_a_rowid_table(tmp_path):
    # Rows of a whole vector each: in a WITHOUT ROWID table every insert split full pages of the
    # key's b-tree (more than twice the writes per stored memory, see ``cache._SCHEMA``).
    cache = EmbeddingCache(tmp_path / "cache.db")
    cache.put_many("m:1", ["alpha", "beta"], np.ones((2, 384), dtype=np.float32))
    cache.close()
    conn = sqlite3.connect(tmp_path / "cache.db")
    try:
        assert conn.execute("SELECT count(rowid) FROM embedding_cache").fetchone() == (2,)
    finally:
        conn.close()


def test_a_cache_file_of_the_earlier_layout_is_read_and_written(tmp_path):
    # Opening it moves it into the rowid table (test_cache_bound.py): its vectors are all kept.
    path = tmp_path / "cache.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE embedding_cache (identity TEXT NOT NULL, text_hash BLOB NOT NULL, vector BLOB NOT NULL,"
                 " created REAL NOT NULL DEFAULT (unixepoch('subsec')), PRIMARY KEY (identity, text_hash)) WITHOUT ROWID")
    conn.execute("INSERT INTO embedding_cache (identity, text_hash, vector, created) VALUES (?, ?, ?, 1.0)",
                 ("m:1", text_key("alpha"), np.full(4, 2, dtype=np.float32).tobytes()))
    conn.commit()
    conn.close()
    cache = EmbeddingCache(path)
    assert np.array_equal(cache.get_many("m:1", ["alpha"])["alpha"], np.full(4, 2, dtype=np.float32))
    cache.put_many("m:1", ["alpha", "beta"], np.array([[3, 3, 3, 3], [4, 4, 4, 4]], dtype=np.float32))
    cache.close()
    again = EmbeddingCache(path)
    found = again.get_many("m:1", ["alpha", "beta"])
    assert np.array_equal(found["alpha"], np.full(4, 3, dtype=np.float32))
    assert np.array_equal(found["beta"], np.full(4, 4, dtype=np.float32))
    assert len(again) == 2
    again.close()


def test_drop_leaves_no_byte_of_the_dropped_rows_in_a_file_of_many(tmp_path):
    """An erase drops a text's hash and vector: in a file of thousands of rows, written in batches
    (page splits copied cells into other pages as it grew), none of their bytes is left in the file
    or its WAL, and every other row is still served. A first drop vacuums the file (one written
    before the cache zeroed what writes free holds such copies); later drops:
    ``test_a_later_drop_zeroes_what_it_deletes_without_rebuilding_the_file``."""
    path = tmp_path / "cache.db"
    cache = EmbeddingCache(path)
    texts = [f"text number {i}" for i in range(3000)]
    vectors = np.random.default_rng(3).random((len(texts), 64), dtype=np.float32)
    for start in range(0, len(texts), 250):
        cache.put_many("test:model:64", texts[start:start + 250], vectors[start:start + 250])
    gone = texts[::150]
    assert cache.drop(gone) == len(gone)
    raw = b"".join(f.read_bytes() for f in tmp_path.glob("cache.db*"))
    left = [t for i, t in enumerate(texts) if t in gone and (text_key(t) in raw or vectors[i].tobytes() in raw)]
    assert left == []
    cache.close()
    again = EmbeddingCache(path)
    kept = again.get_many("test:model:64", texts)
    assert sorted(kept) == sorted(set(texts) - set(gone))
    assert all(np.array_equal(kept[t], vectors[i]) for i, t in enumerate(texts) if t in kept)
    again.close()


def test_closing_the_engine_closes_its_embedding_cache_file(server, tmp_path):
    # The engine's close closed its store but left the cache's connection to a finaliser, so its
    # WAL stayed beside the file while the engine object lived, and for good in a process that
    # exits without collecting it (engram mcp freezes its heap at exit: interfaces/heap.py).
    from engram.engine import Engram

    home = tmp_path / "home"
    engram = Engram.from_settings(home=home, embeddings={"provider": "ollama", "model": "nomic-embed-text",
                                                          "base_url": server.url})
    engram.remember("the cache keeps this vector")
    assert (home / "embedding-cache.db-wal").exists()  # open: the WAL holds the new vector
    engram.close()
    assert not (home / "embedding-cache.db-wal").exists()
    assert len(EmbeddingCache(home / "embedding-cache.db")) == 1  # merged into the file, not lost
    # Used again (a view still held somewhere), the cache opens the file again: served from it.
    assert len(engram.embedder.embed(["the cache keeps this vector"])) == 1 and len(server.requests) == 1
    engram.embedder.close()


def test_a_later_drop_zeroes_what_it_deletes_without_rebuilding_the_file(tmp_path):
    """The first drop vacuums the file once (rows written before it may have left bytes in free
    space); after it every write zeroes what it frees, so a later drop only empties the WAL: no byte
    of the dropped rows is left, and the pages it freed stay in the file (no VACUUM rebuilt it)."""
    path = tmp_path / "cache.db"
    cache = EmbeddingCache(path)
    texts = [f"text number {i}" for i in range(3000)]
    vectors = np.random.default_rng(5).random((len(texts), 64), dtype=np.float32)
    cache.put_many("test:model:64", texts[:250], vectors[:250])
    assert cache.drop(texts[:1]) == 1
    for start in range(250, len(texts), 250):
        cache.put_many("test:model:64", texts[start:start + 250], vectors[start:start + 250])
    gone = texts[1000:2000] + texts[1::150]
    assert cache.drop(gone) == len(set(gone))
    raw = b"".join(f.read_bytes() for f in tmp_path.glob("cache.db*"))
    left = [t for i, t in enumerate(texts) if t in gone and (text_key(t) in raw or vectors[i].tobytes() in raw)]
    assert left == []
    assert cache._db().execute("PRAGMA freelist_count").fetchone()[0] > 0, "no VACUUM rebuilt the file"
    kept = cache.get_many("test:model:64", texts)
    assert sorted(kept) == sorted(set(texts[1:]) - set(gone))
    cache.close()


def test_drop_finds_a_texts_rows_under_every_identity_through_an_index(tmp_path):
    """``drop`` deletes by text hash whatever the identity, which the primary key (identity first)
    cannot find: without an index of the hash it read the whole file, so an erase cost more the
    more vectors were cached. Its DELETE, caught as SQLite runs it, is explained."""
    cache = EmbeddingCache(tmp_path / "cache.db")
    cache.put_many("a:model:4", ["alpha", "beta"], np.ones((2, 4), dtype=np.float32))
    cache.put_many("b:model:4", ["alpha"], np.ones((1, 4), dtype=np.float32))
    seen: list[str] = []
    cache._db().set_trace_callback(seen.append)
    assert cache.drop(["alpha"]) == 2
    cache._db().set_trace_callback(None)
    deletes = [sql for sql in seen if sql.lstrip().upper().startswith("DELETE")]
    assert deletes, seen
    plans = [" | ".join(row[-1] for row in cache._db().execute(f"EXPLAIN QUERY PLAN {sql}")) for sql in deletes]
    assert all("embedding_cache_text" in plan for plan in plans), plans
    assert sorted(cache.get_many("a:model:4", ["alpha", "beta"])) == ["beta"]
    cache.close()
