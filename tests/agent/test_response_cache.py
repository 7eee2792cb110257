from __future__ import annotations

import json
import threading

from engram.agent.response_cache import ResponseCache, cache_key, fnv1a64
from engram.llm.base import assistant_message, system_message, user_message


def msgs(text: str) -> list:
    return [system_message("system"), user_message(text)]


def test_fnv1a64_reference_values():
    # Published FNV-1a 64 test vectors.
    assert fnv1a64(b"") == 0xCBF29CE484222325
    assert fnv1a64(b"a") == 0xAF63DC4C8601EC8C
    assert fnv1a64(b"foobar") == 0x85944171F73967E8


def test_key_separates_fields():
    assert cache_key("m", "ab", msgs("c")) != cache_key("ab", "", msgs("c"))
    assert cache_key("m", "s", [user_message("ab"), user_message("c")]) != cache_key(
        "m", "s", [user_message("a"), user_message("bc")])
    user = '{"content": "u", "role": "user", "tool_call_id": null, "tool_calls": []}'
    expected = fnv1a64(b"m\x00s\x00" + user.encode())
    assert cache_key("m", "s", [user_message("u")]) == f"{expected:016x}"


def test_key_covers_scope_and_the_whole_history():
    # QA: one agent's answer came back to another, and the history was not part of the key.
    cache = ResponseCache(None)
    asked = [system_message("system"), user_message("My PIN is 4242"), assistant_message("Noted."),
             user_message("What is my PIN?")]
    cache.put("m", "p1", asked, "Your PIN is 4242.")
    assert cache.get("m", "p1", asked) == "Your PIN is 4242."
    assert cache.get("m", "p2", asked) is None                    # another agent
    assert cache.get("m", "p1", msgs("What is my PIN?")) is None  # another history
    assert cache.get("m", "p1", [*asked[:2], assistant_message("Ok."), asked[3]]) is None
    assert cache.get("other", "p1", asked) is None


def test_a_colliding_key_from_another_scope_is_a_miss(monkeypatch):
    import engram.agent.response_cache as module

    monkeypatch.setattr(module, "cache_key", lambda model, scope, messages: "same")
    cache = ResponseCache(None)
    cache.put("m", "p1", msgs("q"), "secret")
    assert cache.get("m", "p2", msgs("q")) is None and cache.get("m", "p1", msgs("q")) == "secret"


def test_ttl_pass_then_lru_pass(tmp_path, clock):
    cache = ResponseCache(tmp_path / "c.json", ttl_s=100, max_entries=3, clock=clock)
    cache.put("m", "s", msgs("old"), "r-old")          # t=0
    clock.advance(60)
    cache.put("m", "s", msgs("a"), "r-a")              # t=60
    clock.advance(1)
    cache.put("m", "s", msgs("b"), "r-b")              # t=61
    clock.advance(1)
    assert cache.get("m", "s", msgs("a")) == "r-a"     # a accessed at t=62: b is now least recent
    clock.advance(40)                            # t=102: "old" is past its TTL
    cache.put("m", "s", msgs("c"), "r-c")
    # TTL pass removed "old"; 3 entries left, no LRU eviction needed.
    assert sorted(cache.keys()) == sorted(cache_key("m", "s", msgs(x)) for x in ("a", "b", "c"))
    cache.put("m", "s", msgs("d"), "r-d")              # over max: LRU removes b (last access 61)
    assert cache.get("m", "s", msgs("b")) is None
    assert {cache.get("m", "s", msgs(x)) for x in ("a", "c", "d")} == {"r-a", "r-c", "r-d"}


def test_lru_removes_several_oldest(clock):
    cache = ResponseCache(None, ttl_s=10_000, max_entries=5, clock=clock)
    for i in range(5):
        cache.put("m", "s", msgs(str(i)), str(i))
        clock.advance(1)
    for i in (0, 2):
        cache.get("m", "s", msgs(str(i)))
        clock.advance(1)
    cache.max_entries = 2
    cache.put("m", "s", msgs("new"), "new")
    assert sorted(cache.keys()) == sorted([cache_key("m", "s", msgs("new")), cache_key("m", "s", msgs("2"))])


def test_expired_entry_is_a_miss(clock):
    cache = ResponseCache(None, ttl_s=10, clock=clock)
    cache.put("m", "s", msgs("u"), "r")
    clock.advance(11)
    assert cache.get("m", "s", msgs("u")) is None


def test_persisted_atomically_and_reloaded(tmp_path, clock):
    path = tmp_path / "sub" / "cache.json"
    cache = ResponseCache(path, clock=clock)
    cache.put("m", "sys", msgs("hello"), "hi there")
    data = json.loads(path.read_text())
    assert data[0]["response"] == "hi there" and data[0]["key"] == cache_key("m", "sys", msgs("hello"))
    assert [p.name for p in path.parent.iterdir()] == ["cache.json"]  # no temp files left
    reopened = ResponseCache.open(path, clock=clock)
    assert reopened.get("m", "sys", msgs("hello")) == "hi there"
    path.write_text("{broken")
    assert len(ResponseCache.open(path, clock=clock)) == 0


def test_thread_safe_puts(tmp_path):
    cache = ResponseCache(tmp_path / "c.json", max_entries=50)

    def worker(n: int) -> None:
        for i in range(40):
            cache.put("m", "s", msgs(f"{n}-{i}"), "r")
            cache.get("m", "s", msgs(f"{n}-{i // 2}"))

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(cache) == 50
    assert len(json.loads((tmp_path / "c.json").read_text())) == 50
