from __future__ import annotations

import json
import threading

from engram.agent.response_cache import ResponseCache, cache_key, fnv1a64


def test_fnv1a64_reference_values():
    # Published FNV-1a 64 test vectors.
    assert fnv1a64(b"") == 0xCBF29CE484222325
    assert fnv1a64(b"a") == 0xAF63DC4C8601EC8C
    assert fnv1a64(b"foobar") == 0x85944171F73967E8


def test_key_separates_fields():
    assert cache_key("m", "ab", "c") != cache_key("m", "a", "bc")
    expected = fnv1a64(b"m\x00s\x00u")
    assert cache_key("m", "s", "u") == f"{expected:016x}"


def test_ttl_pass_then_lru_pass(tmp_path, clock):
    cache = ResponseCache(tmp_path / "c.json", ttl_s=100, max_entries=3, clock=clock)
    cache.put("m", "s", "old", "r-old")          # t=0
    clock.advance(60)
    cache.put("m", "s", "a", "r-a")              # t=60
    clock.advance(1)
    cache.put("m", "s", "b", "r-b")              # t=61
    clock.advance(1)
    assert cache.get("m", "s", "a") == "r-a"     # a accessed at t=62: b is now least recent
    clock.advance(40)                            # t=102: "old" is past its TTL
    cache.put("m", "s", "c", "r-c")
    # TTL pass removed "old"; 3 entries left, no LRU eviction needed.
    assert sorted(cache.keys()) == sorted(cache_key("m", "s", x) for x in ("a", "b", "c"))
    cache.put("m", "s", "d", "r-d")              # over max: LRU removes b (last access 61)
    assert cache.get("m", "s", "b") is None
    assert {cache.get("m", "s", x) for x in ("a", "c", "d")} == {"r-a", "r-c", "r-d"}


def test_lru_removes_several_oldest(clock):
    cache = ResponseCache(None, ttl_s=10_000, max_entries=5, clock=clock)
    for i in range(5):
        cache.put("m", "s", str(i), str(i))
        clock.advance(1)
    for i in (0, 2):
        cache.get("m", "s", str(i))
        clock.advance(1)
    cache.max_entries = 2
    cache.put("m", "s", "new", "new")
    assert sorted(cache.keys()) == sorted([cache_key("m", "s", "new"), cache_key("m", "s", "2")])


def test_expired_entry_is_a_miss(clock):
    cache = ResponseCache(None, ttl_s=10, clock=clock)
    cache.put("m", "s", "u", "r")
    clock.advance(11)
    assert cache.get("m", "s", "u") is None


def test_persisted_atomically_and_reloaded(tmp_path, clock):
    path = tmp_path / "sub" / "cache.json"
    cache = ResponseCache(path, clock=clock)
    cache.put("m", "sys", "hello", "hi there")
    data = json.loads(path.read_text())
    assert data[0]["response"] == "hi there" and data[0]["key"] == cache_key("m", "sys", "hello")
    assert [p.name for p in path.parent.iterdir()] == ["cache.json"]  # no temp files left
    reopened = ResponseCache.open(path, clock=clock)
    assert reopened.get("m", "sys", "hello") == "hi there"
    path.write_text("{broken")
    assert len(ResponseCache.open(path, clock=clock)) == 0


def test_thread_safe_puts(tmp_path):
    cache = ResponseCache(tmp_path / "c.json", max_entries=50)

    def worker(n: int) -> None:
        for i in range(40):
            cache.put("m", "s", f"{n}-{i}", "r")
            cache.get("m", "s", f"{n}-{i // 2}")

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(cache) == 50
    assert len(json.loads((tmp_path / "c.json").read_text())) == 50
