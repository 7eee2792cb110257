"""What the web page reads, over a real socket: the graph, the dashboard, the filtered audit, the
conversation list, read-only search (touch=false) and API docs served with no outside assets."""

from __future__ import annotations

import re

from tests.interfaces.conftest import Served


def test_graph_of_the_store_and_of_a_query(served: Served) -> None:
    with served.client(served.alice) as c:
        ids = {}
        for key, content in [("tea", "Green tea in the morning"), ("cup", "The blue cup is for tea"),
                             ("desk", "The desk faces the window"), ("lonely", "An unlinked note about bikes")]:
            ids[key] = c.post("/api/v1/memory", json={"content": content, "key": key}).json()["memory_id"]
        c.post("/api/v1/memory/tea/links", json={"to": "cup"})
        c.post("/api/v1/memory/cup/links", json={"to": "desk"})
        with served.client(served.bob) as b:  # another agent's memories never appear
            b.post("/api/v1/memory", json={"content": "Bob's tea notes", "key": "bob-tea"})

        whole = c.get("/api/v1/graph").json()
        assert {n["key"] for n in whole["nodes"]} == {"tea", "cup", "desk", "lonely"}
        assert {(e["source"], e["target"]) for e in whole["edges"]} == {
            tuple(sorted((ids["tea"], ids["cup"]))), tuple(sorted((ids["cup"], ids["desk"])))}
        assert {n["key"]: n["degree"] for n in whole["nodes"]} == {"tea": 1, "cup": 2, "desk": 1, "lonely": 0}
        assert whole["truncated"] is False and whole["total"] == 4
        assert c.get("/api/v1/graph", params={"limit": 2}).json()["truncated"] is True

        before = {m["key"]: m["recall_count"] for m in c.get("/api/v1/memory").json()["memories"]}
        around = c.get("/api/v1/graph", params={"q": "green tea morning"}).json()
        keys = {n["key"] for n in around["nodes"]}
        assert {"tea", "cup"} <= keys and "lonely" not in keys and "bob-tea" not in keys
        assert [n["key"] for n in around["nodes"] if "score" in n][0] == "tea"
        after = {m["key"]: m["recall_count"] for m in c.get("/api/v1/memory").json()["memories"]}
        assert after == before  # drawing a neighbourhood is not a use of the memories
        assert c.get("/api/v1/graph", params={"limit": 0}).status_code == 422


def test_search_with_touch_false_changes_nothing(served: Served) -> None:
    with served.client(served.alice) as c:
        c.post("/api/v1/memory", json={"content": "The office plant needs water", "key": "plant"})
        hits = c.get("/api/v1/memory/search", params={"q": "plant water", "touch": "false"}).json()["hits"]
        assert [h["memory"]["key"] for h in hits] == ["plant"]
        assert c.get("/api/v1/memory/plant").json()["recall_count"] == 0
        c.get("/api/v1/memory/search", params={"q": "plant water"})
        assert c.get("/api/v1/memory/plant").json()["recall_count"] == 1  # a default search is a use


def test_dashboard_counts_latency_and_coverage(served: Served) -> None:
    with served.client(served.alice) as c:
        c.post("/api/v1/memory", json={"content": "We chose PostgreSQL", "type": "decision", "category": "core"})
        c.post("/api/v1/memory", json={"content": "Met Ana at the meetup", "type": "social"})
        c.post("/api/v1/memory", json={"content": "A global rule", "scope": "global"})
        c.get("/api/v1/memory/search", params={"q": "postgres", "touch": "false"})
        d = c.get("/api/v1/dashboard").json()
    assert d["view"] == "agent" and d["agent"] == "alice" and d["memories"] == 3
    assert d["by_category"] == {"core": 1, "knowledge": 2, "conversation": 0}
    assert d["by_type"] == {"decision": 1, "social": 1, "learned": 1}
    assert d["by_scope"] == {"agent:alice": 2, "global": 1}
    assert d["embedding_coverage"] == 1.0 and d["vectors"] == 3 and d["embedding"]
    assert d["latency_of"] == "server" and d["latency"]["recall"]["p95_ms"] > 0


def test_dashboard_latency_tells_an_agent_nothing_of_anothers_activity(served: Served) -> None:
    """The latency samples are the server's, every agent's calls: the percentiles may move when bob
    recalls, but no figure counts his calls for alice to read."""
    with served.client(served.alice) as a, served.client(served.bob) as b:
        a.post("/api/v1/memory", json={"content": "Alice's tea note", "key": "tea"})
        a.get("/api/v1/memory/search", params={"q": "tea", "touch": "false"})
        before = a.get("/api/v1/dashboard").json()
        assert set(before["latency"]) == {"recall", "embedding"}
        for n in range(5):
            b.post("/api/v1/memory", json={"content": f"Bob's private note {n}", "key": f"bob-{n}"})
            assert b.get("/api/v1/memory/search", params={"q": "note", "touch": "false"}).status_code == 200
        after = a.get("/api/v1/dashboard").json()
    for d in (before, after):
        for figures in d["latency"].values():  # the only figures allowed to move: the server's speed
            for percentile in ("p50_ms", "p95_ms", "p99_ms", "max_ms"):
                assert figures.pop(percentile) >= 0
    assert after == before
    assert after["latency_of"] == "server"


def test_stats_and_dashboard_show_each_agent_only_what_it_sees(served: Served) -> None:
    """Counts are data too: alice's figures never move when bob stores, links or embeds."""
    with served.client(served.alice) as a, served.client(served.bob) as b:
        a.post("/api/v1/memory", json={"content": "Alice's tea note", "key": "tea"})
        a.post("/api/v1/memory", json={"content": "Alice's cup note", "key": "cup", "links": ["tea"]})
        a.post("/api/v1/memory", json={"content": "Everyone's rule", "key": "rule", "scope": "global"})
        before = {path: a.get(path).json() for path in ("/api/v1/stats", "/api/v1/dashboard")}
        for n in range(5):
            b.post("/api/v1/memory", json={"content": f"Bob's private note {n}", "key": f"bob-{n}",
                                           "links": [f"bob-{n - 1}"] if n else [], "category": "core"})
        b.post("/api/v1/memory/bob-0/links", json={"to": "rule"})  # a link from bob's memory to a global one
        for path in ("/api/v1/stats", "/api/v1/dashboard"):
            seen = a.get(path).json()
            seen.pop("latency", None), before[path].pop("latency", None)
            assert seen == before[path], path
            assert seen["memories"] == 3 and seen["links"] == 1 and seen["vectors"] == 3
            assert seen["by_scope"] == {"agent:alice": 2, "global": 1} and "bob" not in str(seen)
            assert "size_bytes" not in str(seen) and "store" not in seen
        bobs = b.get("/api/v1/stats").json()
        assert (bobs["agent"], bobs["memories"], bobs["links"]) == ("bob", 6, 5)  # 4 chain links + the global one
        assert bobs["by_category"]["core"] == 5 and bobs["by_scope"] == {"agent:bob": 5, "global": 1}


def test_audit_filters_and_conversation_list(served: Served) -> None:
    with served.client(served.alice) as c:
        c.post("/api/v1/memory", json={"content": "first", "key": "one"})
        c.post("/api/v1/memory", json={"content": "second", "key": "two"})
        c.delete("/api/v1/memory/one", params={"reason": "tidy"})
        forgotten = c.get("/api/v1/audit", params={"action": "forgotten"}).json()["entries"]
        assert [(e["action"], e["memory_key"], e["reason"]) for e in forgotten] == [("forgotten", "one", "tidy")]
        assert [e["action"] for e in c.get("/api/v1/audit", params={"memory": "two"}).json()["entries"]] == ["stored"]
        assert c.get("/api/v1/audit", params={"since": 4_000_000_000}).json()["entries"] == []
        bad = c.get("/api/v1/audit", params={"action": "exploded"})
        assert bad.status_code == 422 and "action" in bad.text

        c.post("/api/v1/history/web:chat-1", json={"role": "user", "content": "hello"})
        c.post("/api/v1/history/web:chat-1", json={"role": "assistant", "content": "hi"})
        assert c.get("/api/v1/history").json() == {"conversations": [{"conversation": "web:chat-1", "messages": 2}]}
    with served.client(served.bob) as b:  # another agent's conversations are not listed
        assert b.get("/api/v1/history").json() == {"conversations": []}


def test_audit_window_takes_dates_and_phrases_and_names_a_bad_bound(served: Served) -> None:
    import datetime as dt

    with served.client(served.alice) as c, served.client(served.bob) as b:
        c.post("/api/v1/memory", json={"content": "noted today", "key": "today"})
        b.post("/api/v1/memory", json={"content": "bob's, also today", "key": "bobs"})
        today = dt.datetime.now().astimezone().date().isoformat()  # the server reads dates in its zone

        def keys(**window: str) -> list[str]:
            answer = c.get("/api/v1/audit", params=window)
            assert answer.status_code == 200, answer.text
            return [e["memory_key"] for e in answer.json()["entries"]]

        assert keys(since="today") == keys(since=today) == keys(until="today") == ["today"]
        assert keys(since="last week", until="today") == ["today"]
        assert keys(until="yesterday") == keys(until="2 days ago") == keys(since="4000000000") == []
        for window, field in (({"since": "whenever"}, "since"), ({"until": "2026-02-30"}, "until"),
                              ({"since": "today", "until": "yesterday"}, "until")):
            bad = c.get("/api/v1/audit", params=window)
            assert bad.status_code == 422 and bad.json()["field"] == field, bad.text
            assert "yesterday" in bad.text or "since" in bad.text


def test_conversations_are_listed_as_written_and_each_listed_key_reads_and_deletes_it(served: Served) -> None:
    written = {"web:chat-1": "web:chat-1", "web:chat-2:": "web:chat-2", "slack:C1:T7": "slack:C1:T7"}  # as given: listed
    with served.client(served.alice) as c, served.client(served.bob) as b:
        for given in written:  # the second is written with its empty thread
            c.post(f"/api/v1/history/{given}", json={"role": "user", "content": f"said in {given}"})
        b.post("/api/v1/history/web:bobs-chat", json={"role": "user", "content": "bob's"})
        listed = c.get("/api/v1/history").json()["conversations"]
        assert listed == [{"conversation": key, "messages": 1} for key in sorted(written.values())]
        for given, shown in written.items():  # a listed key reads its conversation back
            assert [m["content"] for m in c.get(f"/api/v1/history/{shown}").json()["messages"]] == [f"said in {given}"]
        assert c.delete("/api/v1/history/web:chat-2").status_code == 200
        assert [x["conversation"] for x in c.get("/api/v1/history").json()["conversations"]] == ["slack:C1:T7",
                                                                                                 "web:chat-1"]
        assert c.get("/api/v1/history/web:chat-2:").json()["messages"] == []
        assert [x["conversation"] for x in b.get("/api/v1/history").json()["conversations"]] == ["web:bobs-chat"]


def test_api_docs_use_only_local_assets(served: Served) -> None:
    with served.client() as c:
        docs = c.get("/docs")
        assert docs.status_code == 200
        urls = re.findall(r"""(?:src|href)=["']([^"']+)["']|url: ?["']([^"']+)["']""", docs.text)
        urls = [u for pair in urls for u in pair if u]
        assert urls and all(u.startswith("/") for u in urls), urls
        for url in urls:
            assert c.get(url).status_code == 200, url
        page = c.get("/").text
        for asset in re.findall(r"""(?:src|href)=["']([^"']+)["']""", page):
            assert asset.startswith("/"), asset  # no CDN: the page works with no network
            assert c.get(asset).status_code == 200, asset
