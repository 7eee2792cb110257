"""The HTTP API over a real socket: every endpoint, auth, isolation, limits, problem details."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pydantic
import pytest

from engram.auth import VERIFIED_RECHECK_S, TokenStore
from engram.config import load_settings
from engram.engine import Engram
from engram.errors import ConfigError
from engram.interfaces.http.app import create_app
from engram.interfaces.http.serve import BackgroundServer
from engram.interfaces.settings import ServerSettings
from tests.interfaces.conftest import Served

PROBLEM = "application/problem+json"


def _store(c: httpx.Client, content: str, **fields: object) -> dict:
    r = c.post("/api/v1/memory", json={"content": content, **fields})
    assert r.status_code == 201, r.text
    return r.json()


def test_health_and_openapi_need_no_token(served: Served) -> None:
    with served.client() as c:
        assert c.get("/healthz").json() == {"status": "ok"}
        spec = c.get("/openapi.json").json()
        assert "/api/v1/memory/search" in spec["paths"]
        assert "/api/memory/semantic-recall" in spec["paths"]
        page = c.get("/")
        assert page.status_code == 200 and "engram" in page.text
        assert c.get("/static/app.js").status_code == 200


def test_auth_refusals(served: Served) -> None:
    with served.client() as c:
        r = c.get("/api/v1/memory")
        assert r.status_code == 401
        assert r.headers["content-type"].startswith(PROBLEM)
        assert r.headers["www-authenticate"] == "Bearer"
        assert r.json()["status"] == 401
    with served.client("eg_00000000_not-a-real-token") as c:
        assert c.get("/api/v1/memory").status_code == 401
    with served.client(served.alice) as c:
        assert c.get("/api/v1/memory", headers={"Authorization": "Basic abc"}).status_code == 401
    token, info = served.tokens.create("carol")
    with served.client(token) as c:
        assert c.get("/api/v1/stats").status_code == 200
        served.tokens.revoke(info.id)
        assert c.get("/api/v1/stats").status_code == 401


def test_a_token_revoked_by_another_process_is_refused_once_the_server_checks_it_again(served: Served) -> None:
    # The server takes a token it verified less than VERIFIED_RECHECK_S ago from memory; one
    # revoked elsewhere (`engram token revoke` in another process) is refused from the next check.
    now = [1000.0]
    served.tokens.clock = lambda: now[0]
    token, info = served.tokens.create("dana")
    elsewhere = TokenStore.open(served.db_path)
    try:
        with served.client(token) as c:
            assert c.get("/api/v1/stats").status_code == 200
            reads: list[str] = []
            find = served.tokens._find
            served.tokens._find = lambda digest: reads.append(digest) or find(digest)  # type: ignore[method-assign]
            elsewhere.revoke(info.id)
            now[0] += VERIFIED_RECHECK_S / 2
            assert c.get("/api/v1/stats").status_code == 200 and reads == []  # from memory, as promised
            now[0] += VERIFIED_RECHECK_S / 2
            assert c.get("/api/v1/stats").status_code == 401 and len(reads) == 1
            assert c.get("/api/v1/stats").status_code == 401 and len(reads) == 2  # a refusal is never kept
            assert c.get("/mcp", headers={"Accept": "application/json, text/event-stream"}).status_code == 401
    finally:
        elsewhere.close()


def test_memory_crud_search_links_versions(served: Served) -> None:
    with served.client(served.alice) as c:
        first = _store(c, "The user prefers Python for scripting", tags=["preferences", "python"], type="social",
                       importance=0.8, key="pref-python")
        assert first["action"] == "created" and first["key"] == "pref-python"
        second = _store(c, "The project uses Python 3.12 and pytest", type="experience", links=["pref-python"])
        mid = first["memory_id"]

        assert c.get(f"/api/v1/memory/{mid}").json()["content"].startswith("The user prefers")
        assert c.get("/api/v1/memory/pref-python").json()["id"] == mid

        listed = c.get("/api/v1/memory", params={"type": "social", "limit": 10}).json()
        assert [m["id"] for m in listed["memories"]] == [mid] and listed["total"] == 1
        assert c.get("/api/v1/memory", params={"tag": "python"}).json()["total"] == 1
        assert [m["id"] for m in c.get("/api/v1/memory/experiences").json()["memories"]] == [second["memory_id"]]
        assert c.get("/api/v1/memory/social").json()["memories"][0]["id"] == mid
        for plural in ("learned", "conversations", "decisions", "achievements"):
            assert c.get(f"/api/v1/memory/{plural}").json()["memories"] == []

        found = c.get("/api/v1/memory/search", params={"q": "which language for scripting"}).json()
        assert found["hits"][0]["memory"]["id"] == mid
        assert set(found["hits"][0]["parts"]) == {"text", "vector", "fused", "recency", "importance", "link"}

        patched = c.patch(f"/api/v1/memory/{mid}", json={"content": "The user prefers Rust for scripting", "tags": ["rust"]})
        assert patched.status_code == 200 and patched.json()["action"] == "updated"
        after = c.get(f"/api/v1/memory/{mid}").json()
        assert after["tags"] == ["rust"] and after["type"] == "social"
        assert after["importance"] == pytest.approx(0.8 + 0.05 * after["recall_count"])  # recall strengthens
        versions = c.get(f"/api/v1/memory/{mid}/versions").json()["versions"]
        assert [v["content"] for v in versions] == ["The user prefers Python for scripting"]
        replaced = c.put(f"/api/v1/memory/{mid}", json={"content": "The user prefers Rust", "importance": 0.9})
        assert replaced.json()["memory"]["importance"] == 0.9 and replaced.json()["memory"]["tags"] == []

        links = c.get(f"/api/v1/memory/{mid}/links").json()
        assert [n["id"] for n in links["neighbours"]] == [second["memory_id"]]
        assert c.delete(f"/api/v1/memory/{mid}/links/{second['memory_id']}").json() == {"unlinked": True}
        assert c.get(f"/api/v1/memory/{mid}/links").json()["neighbours"] == []
        made = c.post(f"/api/v1/memory/{mid}/links", json={"to": second["memory_id"]})
        assert made.status_code == 201 and made.json()["changed"] is True
        # The same link again changes nothing, and says so.
        again = c.post(f"/api/v1/memory/{second['memory_id']}/links", json={"to": mid}).json()
        assert again == {"linked": [second["memory_id"], mid], "changed": False}

        gone = c.delete(f"/api/v1/memory/{mid}", params={"reason": "outdated"}).json()
        assert gone == {"forgotten": [mid], "count": 1, "reason": "outdated"}
        assert c.get(f"/api/v1/memory/{mid}").status_code == 404
        assert c.get(f"/api/v1/memory/{second['memory_id']}").json()["links"] == []


def test_bulk_forget_stats_export_import(served: Served) -> None:
    with served.client(served.alice) as c:
        for i in range(3):
            _store(c, f"temporary note number {i}", tags=["tmp"])
        _store(c, "a keeper", tags=["keep"], category="core")
        dry = c.post("/api/v1/memory/forget", json={"tag": "tmp", "dry_run": True}).json()
        assert dry["count"] == 3 and c.get("/api/v1/stats").json()["memories"] == 4
        assert c.post("/api/v1/memory/forget", json={"tag": "tmp", "reason": "cleanup"}).json()["count"] == 3
        stats = c.get("/api/v1/stats").json()
        assert stats["agent"] == "alice" and stats["memories"] == 1 and stats["by_category"]["core"] == 1
        r = c.post("/api/v1/memory/forget", json={})
        assert r.status_code == 422 and r.json()["field"] == "forget"
        snapshot = c.get("/api/v1/export").json()
        # Ids already in the store are skipped on import, so move the memory: forget it here first.
        keeper = c.get("/api/v1/memory").json()["memories"][0]["id"]
        c.delete(f"/api/v1/memory/{keeper}", params={"reason": "moving to bob"})
    with served.client(served.bob) as c:
        assert c.post("/api/v1/import", json=snapshot).json() == {"imported": 1, "skipped": 0, "warnings": []}
        assert c.get("/api/v1/memory").json()["memories"][0]["content"] == "a keeper"
        bad = c.post("/api/v1/import", json={"memories": [{"content": ""}]})
        assert bad.status_code == 422 and bad.headers["content-type"].startswith(PROBLEM)
        assert c.get("/api/v1/stats").json()["memories"] == 1


def test_agents_are_isolated(served: Served) -> None:
    with served.client(served.alice) as a, served.client(served.bob) as b:
        secret = _store(a, "alice's secret plan involves tulips", key="plan")
        shared = _store(a, "the office closes at six", scope="global")
        sid = secret["memory_id"]
        assert b.get(f"/api/v1/memory/{sid}").status_code == 404
        assert b.get("/api/v1/memory/plan").status_code == 404
        assert b.get("/api/v1/memory/search", params={"q": "tulips plan"}).json()["hits"] == []
        assert [m["id"] for m in b.get("/api/v1/memory").json()["memories"]] == [shared["memory_id"]]
        assert b.patch(f"/api/v1/memory/{sid}", json={"content": "hijacked"}).status_code == 404
        assert b.delete(f"/api/v1/memory/{sid}").status_code == 404
        assert b.post(f"/api/v1/memory/{shared['memory_id']}/links", json={"to": sid}).status_code == 404
        assert "tulips" not in b.get("/api/v1/export").text
        assert a.get(f"/api/v1/memory/{sid}").json()["content"] == "alice's secret plan involves tulips"


def test_links_never_name_another_agents_memory(served: Served) -> None:
    # Alice links her secret to a global memory: Bob reads the global memory through every door
    # that shows links, and never learns the secret's id.
    with served.client(served.alice) as a, served.client(served.bob) as b:
        shared = _store(a, "the greenhouse opens at seven", scope="global", key="greenhouse")
        secret = _store(a, "alice hides the greenhouse key under a pot", links=["greenhouse"])
        gid, sid = shared["memory_id"], secret["memory_id"]
        assert a.get(f"/api/v1/memory/{gid}").json()["links"] == [sid]
        assert b.get(f"/api/v1/memory/{gid}").json()["links"] == []
        assert b.get(f"/api/v1/memory/{gid}/links").json()["memory"]["links"] == []
        hits = b.get("/api/v1/memory/search", params={"q": "greenhouse", "depth": 1}).json()["hits"]
        assert [h["memory"]["id"] for h in hits] == [gid] and hits[0]["memory"]["links"] == []
        assert all(m["links"] == [] for m in b.get("/api/v1/memory").json()["memories"])
        assert b.patch(f"/api/v1/memory/{gid}", json={"importance": 0.7}).json()["memory"]["links"] == []
        assert sid not in b.get("/api/v1/export").text
        graph = b.get("/api/v1/graph").json()
        assert sid not in json.dumps(graph)


def test_sessions_narrow_an_agent(served: Served) -> None:
    with served.client(served.alice, **{"X-Engram-Session": "s1"}) as s1, \
            served.client(served.alice, **{"X-Engram-Session": "s2"}) as s2, served.client(served.alice) as agent:
        note = _store(s1, "only for session one", scope="session")
        assert note["memory"]["scope"] == "session:alice/s1"
        assert s1.get(f"/api/v1/memory/{note['memory_id']}").status_code == 200
        # By its id the agent reaches it from any session (or none); by its key only from its own.
        for other in (s2, agent):
            got = other.get(f"/api/v1/memory/{note['memory_id']}")
            assert got.status_code == 200 and got.json()["scope"] == "session:alice/s1"
            missing = other.get("/api/v1/memory/by-key", params={"key": note["memory"]["key"]})
            said = missing.json()["detail"]
            assert missing.status_code == 404 and 'session "s1"' in said and note["memory_id"] in said, said
        with served.client(served.bob, **{"X-Engram-Session": "s1"}) as bob:
            for call in (bob.get, bob.delete):
                refused = call(f"/api/v1/memory/{note['memory_id']}")
                assert refused.status_code == 404 and "s1" not in refused.json()["detail"].replace(note["memory_id"], "")
        assert agent.get(f"/api/v1/memory/{note['memory_id']}").json()["content"] == "only for session one"
        r = agent.post("/api/v1/memory", json={"content": "x", "scope": "session"})
        assert r.status_code == 422 and r.json()["field"] == "scope"
    with served.client(served.alice, **{"X-Engram-Session": "bad session!"}) as c:
        r = c.get("/api/v1/memory")
        assert r.status_code == 422 and r.json()["field"] == "session"


def test_bad_input_is_problem_details_naming_the_field(served: Served) -> None:
    with served.client(served.alice) as c:
        r = c.post("/api/v1/memory", content=b'{"content": "unterminated', headers={"Content-Type": "application/json"})
        assert r.status_code == 400 and r.headers["content-type"].startswith(PROBLEM) and r.json()["field"] == "body"
        r = c.post("/api/v1/memory", json={"content": "x", "importance": 3})
        assert r.status_code == 422 and r.json()["field"] == "importance"
        r = c.post("/api/v1/memory", json={"content": "   "})
        assert r.status_code == 422 and r.json()["field"] == "content" and r.json()["allowed"]
        r = c.post("/api/v1/memory", json={"content": "x", "type": "Not A Word"})
        assert r.status_code == 422 and r.json()["field"] == "type"
        r = c.post("/api/v1/memory", json={"content": "x", "links": ["missing"]})
        assert r.status_code == 404 and r.json()["ref"] == "missing"
        assert c.get("/api/v1/memory", params={"category": "nope"}).json()["field"] == "category"
        assert c.get("/api/v1/memory/search", params={"q": '"AND OR NEAR( *'}).status_code == 200
        assert c.get("/api/v1/memory/search").json()["field"] == "q"
        # A number out of its range: the whole range it may take, as the library and CLI say it.
        for path, params, field, allowed in (("/api/v1/memory", {"limit": 0}, "limit", "1 to 1000"),
                                             ("/api/v1/memory/search", {"q": "x", "limit": 101}, "limit", "1 to 100"),
                                             ("/api/v1/memory/search", {"q": "x", "depth": 9}, "depth", "0 to 3"),
                                             ("/api/v1/audit", {"limit": -1}, "limit", "1 to 500")):
            problem = c.get(path, params=params).json()
            assert (problem["field"], problem["allowed"]) == (field, allowed), problem
            assert problem["detail"] == f"{field}: {params[field]} is out of range (allowed: {allowed})", problem
        assert c.get("/api/v1/stats").json()["memories"] == 0  # nothing half-stored


def test_oversize_bodies_are_refused(served: Served) -> None:
    with served.client(served.alice) as c:
        big = json.dumps({"content": "x" * 100_000}).encode()
        r = c.post("/api/v1/memory", content=big, headers={"Content-Type": "application/json"})
        assert r.status_code == 413 and r.json()["field"] == "body"

        def chunks():  # no Content-Length: the limit must trip while reading
            yield b'{"content": "'
            for _ in range(100):
                yield b"y" * 1000
            yield b'"}'

        r = c.post("/api/v1/memory", content=chunks(), headers={"Content-Type": "application/json"})
        assert r.status_code == 413
        assert c.get("/api/v1/stats").json()["memories"] == 0
        r = c.post("/api/v1/memory", json={"content": "z" * 20_000})  # under the body limit, over content limit
        assert r.status_code == 422 and r.json()["field"] == "content"


def test_history_endpoints(served: Served) -> None:
    conv = "telegram:42:main"
    with served.client(served.alice) as c:
        r = c.post(f"/api/v1/history/{conv}", json={"role": "user", "content": "I moved to Lisbon last spring"})
        assert r.status_code == 201 and r.json()["appended"]["content"] == "I moved to Lisbon last spring"
        c.post(f"/api/v1/history/{conv}", json={"role": "assistant", "content": "Noted: you live in Lisbon."})
        messages = c.get(f"/api/v1/history/{conv}", params={"limit": 10}).json()["messages"]
        assert [m["role"] for m in messages] == ["user", "assistant"]
        assert c.get(f"/api/v1/history/{conv}/summary").json()["summary"] == ""
        # Clearing the summary of a conversation that does not exist changes nothing and says so
        # (it wrote an empty entry, listed as a conversation of 0 messages).
        ghost = c.delete("/api/v1/history/web:never/summary")
        assert ghost.status_code == 200 and ghost.json() == {"conversation": "web:never", "summary": "", "cleared": False}
        assert c.get("/api/v1/history").json()["conversations"] == [{"conversation": conv, "messages": 2}]
        assert c.put(f"/api/v1/history/{conv}/summary", json={"summary": "Lives in Lisbon"}).status_code == 200
        assert c.delete(f"/api/v1/history/{conv}/summary").json() == {"conversation": conv, "summary": "", "cleared": True}
        assert c.delete(f"/api/v1/history/{conv}/summary").json()["cleared"] is False
        bad = c.post(f"/api/v1/history/{conv}", json={"role": "wizard", "content": "x"})
        assert bad.status_code == 422 and bad.json()["field"].endswith("role")
        # The answer says how many messages went (it said "purged": null whatever it removed).
        purged = c.delete(f"/api/v1/history/{conv}")
        assert purged.status_code == 200 and purged.json() == {"conversation": conv, "purged": 2}, purged.json()
        assert c.delete(f"/api/v1/history/{conv}").json()["purged"] == 0
        assert c.get(f"/api/v1/history/{conv}").json()["messages"] == []

        # Several at once, all or none: a run's turn with its tool call and result.
        turn = [{"role": "user", "content": "What's the weather in Lisbon?"},
                {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "weather",
                                                                     "arguments": {"city": "Lisbon"}}]},
                {"role": "tool", "content": "sunny, 24\u00b0C", "tool_call_id": "c1"},
                {"role": "assistant", "content": "Sunny and 24\u00b0C in Lisbon.\r\n"}]
        r = c.post(f"/api/v1/history/{conv}/messages", json={"messages": turn})
        assert r.status_code == 201 and r.json()["stored"] is True
        assert [m["content"] for m in r.json()["appended"]] == [m["content"] for m in turn]
        stored = c.get(f"/api/v1/history/{conv}").json()["messages"]
        assert [(m["role"], m["content"]) for m in stored] == [(m["role"], m["content"]) for m in turn]
        assert stored[1]["tool_calls"][0]["id"] == "c1" and stored[2]["tool_call_id"] == "c1"
        # One refused message (engram's rule: a tool result answers a call) stores none of them.
        orphan = [{"role": "user", "content": "and tomorrow?"}, {"role": "tool", "content": "rain", "tool_call_id": "c9"}]
        bad = c.post(f"/api/v1/history/{conv}/messages", json={"messages": orphan})
        assert bad.status_code == 422 and bad.json()["field"] == "messages[1].tool_call_id", bad.json()
        bad = c.post(f"/api/v1/history/{conv}/messages", json={"messages": [{"role": "user", "content": "x"},
                                                                           {"role": "wizard", "content": "y"}]})
        assert bad.status_code == 422 and bad.json()["field"] == "messages[1].role", bad.json()  # as the engine names it
        empty = c.post(f"/api/v1/history/{conv}/messages", json={"messages": []})  # the history's own refusal
        assert empty.status_code == 422 and empty.json()["field"] == "messages", empty.json()
        assert empty.json()["detail"] == "messages: the list is empty (allowed: a list of at least 1 message)"
        assert len(c.get(f"/api/v1/history/{conv}").json()["messages"]) == len(turn)


def test_semantic_recall_clawless_shape(served: Served) -> None:
    with served.client(served.alice) as c:
        for user, bot in (("My dog is called Biscuit", "Biscuit is a lovely name."),
                          ("The quarterly report is due Friday", "I will remind you on Thursday.")):
            c.post("/api/v1/history/web:42", json={"role": "user", "content": user})
            c.post("/api/v1/history/web:42", json={"role": "assistant", "content": bot})
        r = c.post("/api/memory/semantic-recall", json={"input": "what is my puppy's name", "chatId": "web:42", "topK": 1})
        assert r.status_code == 200, r.text
        body = r.json()
        assert [e["userMessage"] for e in body["entries"]] == ["My dog is called Biscuit"]
        # The conversation as the listing shows it and users write it, not the stored form ("web:42:").
        listed = [row["conversation"] for row in c.get("/api/v1/history").json()["conversations"]]
        assert body["entries"][0]["chatId"] == "42" and [body["entries"][0]["conversation"]] == listed == ["web:42"]
        assert "Biscuit" in body["recap"]
        assert c.post("/api/memory/semantic-recall", json={"chatId": "42"}).json()["field"] == "input"
    with served.client() as c:
        assert c.post("/api/memory/semantic-recall", json={"input": "x"}).status_code == 401


@pytest.mark.parametrize(("body", "field"), [
    ({"input": "dog", "bogus": 1}, "bogus"),
    ({"input": "dog", "chatid": "42"}, "chatid"),  # a misspelt field is not silently ignored
    ({"input": "my d\x00og"}, "input"),
    ({"input": "dog", "chatId": "web:4\x002"}, "chatId"),
    ({"input": "   "}, "input"),
    ({"input": "dog", "topK": True}, "topK"),
    ({"input": "dog", "topK": "3"}, "topK"),
    ({"input": "dog", "topK": 0}, "topK"),
])
def test_semantic_recall_refuses_what_engrams_own_bodies_refuse(served: Served, body: dict, field: str) -> None:
    with served.client(served.alice) as c:
        c.post("/api/v1/history/web:42", json={"role": "user", "content": "My dog is called Biscuit"})
        c.post("/api/v1/history/web:42", json={"role": "assistant", "content": "Noted."})
        r = c.post("/api/memory/semantic-recall", json=body)
        assert r.status_code == 422 and r.headers["content-type"].startswith(PROBLEM), r.text
        assert r.json()["field"] == field and field in r.json()["detail"], r.text
        ok = c.post("/api/memory/semantic-recall", json={"input": "dog", "chatId": "42", "topK": 1})
        assert [e["userMessage"] for e in ok.json()["entries"]] == ["My dog is called Biscuit"]


def test_audit_shows_this_agents_changes(served: Served) -> None:
    with served.client(served.alice) as c:
        stored = _store(c, "Audit me please", key="audited")
        c.request("DELETE", f"/api/v1/memory/{stored['memory_id']}", params={"reason": "test cleanup"})
        entries = c.get("/api/v1/audit", params={"limit": 10}).json()["entries"]
        actions = [(e["action"], e["memory_key"], e["origin"]) for e in entries]
        assert ("stored", "audited", "http") in actions and ("forgotten", "audited", "http") in actions
        assert any(e["reason"] == "test cleanup" for e in entries if e["action"] == "forgotten")
    with served.client(served.bob) as c:
        assert all(e["memory_key"] != "audited" for e in c.get("/api/v1/audit").json()["entries"])


def test_audit_of_a_memory_no_id_or_key_can_name_is_refused_naming_it(served: Served) -> None:
    with served.client(served.alice) as c:
        _store(c, "Audit me please", key="audited")
        assert [e["memory_key"] for e in c.get("/api/v1/audit", params={"memory": " audited "}).json()["entries"]] == [
            "audited"]
        for bad in ("\x00", " "):  # matched nothing and answered 200, as if the memory had no history
            refused = c.get("/api/v1/audit", params={"memory": bad})
            assert refused.status_code == 422, refused.text
            assert "memory" in refused.text


def test_metrics_count_requests(served: Served) -> None:
    scraper, _ = served.tokens.create("metrics", "prometheus")
    with served.client(served.alice) as c:
        c.get("/api/v1/memory")
        c.get("/api/v1/memory")
    with served.client(scraper) as c:  # the scraper's agent (server.metrics_agent) reads the server's figures
        text = c.get("/metrics").text
    assert 'engram_http_requests_total{method="GET",route="/api/v1/memory",status="200"} 2.0' in text
    assert "engram_memories 0.0" in text


def _scraped(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """The exposition parsed by prometheus_client's own parser: each sample's value by name and labels."""
    from prometheus_client.parser import text_string_to_metric_families

    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def test_metrics_show_the_storage_size_and_latency_engram_stats_shows(served: Served) -> None:
    """``engram_storage_bytes`` and the ``engram_embedding_seconds`` / ``engram_recall_seconds``
    summaries are the figures of ``engram stats --all-agents`` (``store_stats_by_database``): the
    database's size, and the p50/p95/p99 of the kept samples; ``_count``/``_sum`` the durations
    timed since the server started. /metrics had neither size nor latency of the store."""
    from engram.root import store_stats_by_database

    scraper, _ = served.tokens.create("metrics", "prometheus")
    with served.client(served.alice) as c:
        for n in range(3):
            assert c.post("/api/v1/memory", json={"content": f"alice's note number {n} about deploys"}).status_code == 201
        assert c.get("/api/v1/memory/search", params={"q": "deploys"}).status_code == 200
    with served.client(scraper) as c:
        found = _scraped(c.get("/metrics").text)
    [(_, stats, latency)] = store_stats_by_database(served.engram)
    assert found[("engram_storage_bytes", ())] == stats.size_bytes > 0
    assert found[("engram_memories", ())] == stats.memories == 3
    shown = {item.name: item for item in latency}
    assert set(shown) == {"embedding", "recall"}
    for name, item in shown.items():
        for quantile, ms in (("0.5", item.p50_ms), ("0.95", item.p95_ms), ("0.99", item.p99_ms)):
            assert found[(f"engram_{name}_seconds", (("quantile", quantile),))] == pytest.approx(ms / 1000.0)
        # Nothing was saved before this server: every kept sample was timed by it.
        assert found[(f"engram_{name}_seconds_count", ())] == item.count > 0
        assert found[(f"engram_{name}_seconds_sum", ())] > 0
    assert found[("engram_recall_seconds_count", ())] == 1

    with served.client(served.alice) as c:  # a write grows the file...
        for n in range(5):
            note = " ".join(f"word{n}x{i}" for i in range(300))
            assert c.post("/api/v1/memory", json={"content": note}).status_code == 201
    with served.client(scraper) as c:
        again = _scraped(c.get("/metrics").text)
    [(_, after, _)] = store_stats_by_database(served.engram)
    assert after.size_bytes > stats.size_bytes and after.memories == 8
    # ...which a scrape within server.metrics_max_age_s (60 s) of the count does not count again: it
    # serves that count, saying how old it is; the latency figures, kept in memory, are current.
    assert (again[("engram_storage_bytes", ())], again[("engram_memories", ())]) == (stats.size_bytes, 3)
    assert 0 < again[("engram_store_figures_age_seconds", ())] < 60 and found[("engram_store_figures_age_seconds", ())] == 0
    assert again[("engram_embedding_seconds_count", ())] > found[("engram_embedding_seconds_count", ())]


@pytest.mark.parametrize("max_age_s", [0.0, 3.0])
def test_metrics_count_again_once_the_count_is_older_than_the_max_age(tmp_path: Path, max_age_s: float) -> None:
    # Counting reads every row (about 0.2 s a scrape at a million memories): /metrics counts at most once
    # every server.metrics_max_age_s and says the age of what it serves; 0 counts at every scrape.
    db_path = tmp_path / "memory.db"
    # (No embedding model: a write between two scrapes takes milliseconds, well within the max age.)
    engram = Engram.from_settings(home=tmp_path, path=db_path, embeddings={"provider": "none"})
    tokens = TokenStore.open(db_path)
    scraper, _ = tokens.create("metrics", "prometheus")
    server = BackgroundServer(create_app(engram, tokens, ServerSettings(metrics_max_age_s=max_age_s), mcp=False)).start()
    try:
        with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {scraper}"}, timeout=30) as http:
            def scrape() -> tuple[float, float]:
                found = _scraped(http.get("/metrics").text)
                return found[("engram_memories", ())], found[("engram_store_figures_age_seconds", ())]

            started = time.monotonic()
            assert scrape() == (0, 0)
            # The server counted somewhere between ``started`` and now: a busy host can answer late, so the
            # wait for the count to expire runs from the answer, not from the question.
            counted_by = time.monotonic()
            engram.remember("the kettle is blue", key="kettle")
            memories, age = scrape()
            if max_age_s == 0:
                assert (memories, age) == (1, 0)
            else:
                assert memories == 0 and 0 < age <= time.monotonic() - started < max_age_s
                time.sleep(max(0.0, counted_by + max_age_s + 0.05 - time.monotonic()))
                assert scrape() == (1, 0)
    finally:
        server.stop()
        tokens.close()
        engram.close()


def test_an_agents_token_never_reads_the_store_wide_metrics(served: Served) -> None:
    # /metrics counts every agent's memories and requests: bob's token would learn how many alice
    # keeps (the total less his own), which /api/v1/stats never shows him. Only the scraper's reads it.
    with served.client(served.alice) as c:
        c.post("/api/v1/memory", json={"content": "alice's private note"}).raise_for_status()
    with served.client(served.bob) as c:
        refused = c.get("/metrics")
        assert refused.status_code == 403 and refused.headers["content-type"] == "application/problem+json"
        assert "engram_memories" not in refused.text and "engram_http_requests_total" not in refused.text
        assert "server.metrics_agent" in refused.json()["detail"] and '"bob"' in refused.json()["detail"]
        assert c.get("/api/v1/stats").json()["memories"] == 0  # his own figures stay his


def test_metrics_need_a_live_token_while_the_server_has_tokens(tmp_path: Path) -> None:
    db_path = tmp_path / "memory.db"
    engram = Engram.from_settings(home=tmp_path, path=db_path)
    tokens = TokenStore.open(db_path)
    # Counted at every scrape (metrics_max_age_s=0): the memory written between two shows at once.
    server = BackgroundServer(create_app(engram, tokens, ServerSettings(metrics_max_age_s=0), mcp=False)).start()
    try:
        with httpx.Client(base_url=server.url, timeout=30) as anonymous:
            # No token at all: nobody can use the API, and /metrics stays open as it was.
            assert anonymous.get("/metrics").status_code == 200
            scraper, info = tokens.create("metrics", "prometheus")
            engram.for_agent("alice").remember("a private note of alice")
            refused = anonymous.get("/metrics")
            assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
            assert "engram_memories" not in refused.text and "token" in refused.json()["detail"]
            assert 'server.metrics_agent names, "metrics";' in refused.json()["detail"]  # JSON-spelled, as every error
            wrong = anonymous.get("/metrics", headers={"Authorization": "Bearer eg_00000000_not-a-token"})
            assert wrong.status_code == 401
            scraped = anonymous.get("/metrics", headers={"Authorization": f"Bearer {scraper}"})
            assert scraped.status_code == 200 and "engram_memories 1.0" in scraped.text
            assert anonymous.get("/healthz").status_code == 200  # liveness stays open
            tokens.revoke(info.id)
            revoked = anonymous.get("/metrics", headers={"Authorization": f"Bearer {scraper}"})
            assert revoked.status_code == 200  # no live token left: open again, as with none
            tokens.create("alice", "app")
            assert anonymous.get("/metrics", headers={"Authorization": f"Bearer {scraper}"}).status_code == 401
    finally:
        server.stop()
        tokens.close()
        engram.close()


def test_metrics_agent_is_a_setting(tmp_path: Path) -> None:
    db_path = tmp_path / "memory.db"
    engram = Engram.from_settings(home=tmp_path, path=db_path)
    tokens = TokenStore.open(db_path)
    prometheus, _ = tokens.create("ops-prometheus", "scraper")
    default_named, _ = tokens.create("metrics", "not the scraper here")
    server = BackgroundServer(create_app(engram, tokens, ServerSettings(metrics_agent="ops-prometheus"), mcp=False)).start()
    try:
        with httpx.Client(base_url=server.url, timeout=30) as c:
            assert c.get("/metrics", headers={"Authorization": f"Bearer {prometheus}"}).status_code == 200
            refused = c.get("/metrics", headers={"Authorization": f"Bearer {default_named}"})
            assert refused.status_code == 403 and '"ops-prometheus"' in refused.json()["detail"]
    finally:
        server.stop()
        tokens.close()
        engram.close()


def test_a_metrics_agent_no_token_can_be_made_for_is_refused_at_every_door(
        isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Accepted, it left /metrics refusing every token, its 403 suggesting a `token create` that fails too.
    with pytest.raises(pydantic.ValidationError, match="metrics_agent"):
        ServerSettings(metrics_agent="ops team")
    isolated_home.mkdir(parents=True)
    (isolated_home / "config.toml").write_text('[server]\nmetrics_agent = "ops team"\n')
    with pytest.raises(ConfigError) as from_file:
        load_settings()
    assert "server.metrics_agent" in str(from_file.value) and "'ops team' is not an agent name" in str(from_file.value)
    assert "letters, digits" in str(from_file.value) and "config.toml" in str(from_file.value)
    (isolated_home / "config.toml").unlink()
    monkeypatch.setenv("ENGRAM_SERVER__METRICS_AGENT", "global/ops")
    served = subprocess.run([sys.executable, "-m", "engram", "serve", "--port", "0"], capture_output=True, text=True,
                            timeout=120, env={**os.environ, "ENGRAM_EMBEDDINGS__PROVIDER": "none"})
    assert served.returncode != 0 and "engram is starting" not in served.stderr  # refused before it listens
    assert "server.metrics_agent" in served.stderr and "ENGRAM_SERVER__METRICS_AGENT" in served.stderr
    monkeypatch.setenv("ENGRAM_SERVER__METRICS_AGENT", "ops-prometheus")
    assert load_settings().server.metrics_agent == "ops-prometheus"


def test_agents_never_see_or_delete_each_others_conversations_over_http(served: Served) -> None:
    conv = "telegram:42"
    with served.client(served.alice) as alice:
        alice.post(f"/api/v1/history/{conv}", json={"role": "user", "content": "My locker code is 4711"})
        alice.post(f"/api/v1/history/{conv}", json={"role": "assistant", "content": "Noted, locker code 4711."})
    with served.client(served.bob) as bob:
        assert bob.get(f"/api/v1/history/{conv}").json()["messages"] == []
        found = bob.post("/api/memory/semantic-recall", json={"input": "locker code", "chatId": conv, "topK": 3}).json()
        assert found["entries"] == [] and "4711" not in found["recap"]
        everywhere = bob.post("/api/memory/semantic-recall", json={"input": "locker code", "topK": 3}).json()
        assert everywhere["entries"] == []
        assert bob.delete(f"/api/v1/history/{conv}").status_code == 200  # deletes bob's (empty) conversation only
        bob.post(f"/api/v1/history/{conv}", json={"role": "user", "content": "bob's own words"})
    with served.client(served.alice) as alice:
        messages = alice.get(f"/api/v1/history/{conv}").json()["messages"]
        assert [m["content"] for m in messages] == ["My locker code is 4711", "Noted, locker code 4711."]
        found = alice.post("/api/memory/semantic-recall", json={"input": "locker code", "chatId": conv}).json()
        assert [e["userMessage"] for e in found["entries"]] == ["My locker code is 4711"]
    # The library sees the same owners: the server's default agent has no conversation at all.
    assert served.engram.history.conversations() == []
    assert served.engram.for_agent("bob").history.count(conv) == 1


def test_tool_calls_and_results_append_over_http(served: Served) -> None:
    with served.client(served.alice) as client:
        # Arguments sent as an object come back as its JSON text, names in the order sent (they were
        # sorted) and text as written (not \u-escaped): compact, as JSON.stringify and OpenAI write them.
        arguments = {"q": "x", "city": "Zürich", "a": [1, {"z": 1, "b": None}]}
        call = client.post("/api/v1/history/web:tools", json={
            "role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "name": "lookup", "arguments": arguments}]})
        assert call.status_code == 201, call.text
        result = client.post("/api/v1/history/web:tools", json={"role": "tool", "content": "42", "tool_call_id": "call_1"})
        assert result.status_code == 201, result.text
        orphan = client.post("/api/v1/history/web:tools", json={"role": "tool", "content": "?", "tool_call_id": "nope"})
        assert 400 <= orphan.status_code < 500 and "tool_call_id" in orphan.text
        messages = client.get("/api/v1/history/web:tools").json()["messages"]
        assert messages[0]["tool_calls"][0]["id"] == "call_1" and messages[1]["tool_call_id"] == "call_1"
        assert messages[0]["tool_calls"][0]["arguments"] == '{"q":"x","city":"Zürich","a":[1,{"z":1,"b":null}]}'


def test_search_without_limit_uses_the_recall_limit_setting(tmp_path, served: Served) -> None:
    from engram.engine import Engram
    from engram.interfaces.http.app import create_app
    from engram.interfaces.http.serve import BackgroundServer
    from engram.interfaces.settings import ServerSettings

    facts = [f"Walnut tree number {n} grows by the north fence" for n in range(12)]
    home = tmp_path / "configured"  # ClawCode's search.max_results is this setting
    engram = Engram.from_settings(home=home, path=home / "memory.db", recall={"limit": 3})
    tokens = TokenStore.open(home / "memory.db")
    token, _ = tokens.create("alice", "test")
    server = BackgroundServer(create_app(engram, tokens, ServerSettings())).start()
    try:
        with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=30) as c:
            for fact in facts:
                _store(c, fact)
            assert len(c.get("/api/v1/memory/search", params={"q": "walnut tree"}).json()["hits"]) == 3
            assert len(c.get("/api/v1/memory/search", params={"q": "walnut tree", "limit": 7}).json()["hits"]) == 7
    finally:
        server.stop()
        tokens.close()
        engram.close()
    with served.client(served.alice) as c:  # unset, the setting's default: 10, as before
        for fact in facts:
            _store(c, fact)
        assert len(c.get("/api/v1/memory/search", params={"q": "walnut tree"}).json()["hits"]) == 10


def test_search_narrows_to_one_scope_as_list_does(served: Served) -> None:
    # `scope` narrowed list and count but not search: a session's memory behind better agent-wide
    # matches was out of reach (the limit cut before any client-side filter could keep it).
    with served.client(served.alice) as c:
        _store(c, "the harbour ferry leaves at nine", key="ferry-global", scope="global")
        _store(c, "the harbour ferry is always late", key="ferry-agent")
        hits = c.get("/api/v1/memory/search", params={"q": "harbour ferry", "scope": "global", "mode": "text"}).json()
        assert [h["memory"]["key"] for h in hits["hits"]] == ["ferry-global"]
        bad = c.get("/api/v1/memory/search", params={"q": "harbour ferry", "scope": "everywhere"})
        assert bad.status_code == 422 and "scope" in bad.text


def test_bulk_forget_keeps_to_one_scope(served: Served) -> None:
    # The library and CLI keep a bulk forget to one scope; HTTP forgot across every scope the caller reads.
    with served.client(served.alice, **{"X-Engram-Session": "s1"}) as c:
        mine = _store(c, "scratch note for this session", tags=["scratch"], scope="session")
        kept = _store(c, "scratch note for the agent", tags=["scratch"])
        dry = c.post("/api/v1/memory/forget", json={"tag": "scratch", "scope": "session", "dry_run": True}).json()
        assert [m["id"] for m in dry["forgotten"]] == [mine["memory_id"]]
        gone = c.post("/api/v1/memory/forget", json={"tag": "scratch", "scope": "session", "reason": "done"}).json()
        assert [m["id"] for m in gone["forgotten"]] == [mine["memory_id"]] and gone["count"] == 1
        assert c.get(f"/api/v1/memory/{mine['memory_id']}").status_code == 404
        assert c.get(f"/api/v1/memory/{kept['memory_id']}").status_code == 200
        bad = c.post("/api/v1/memory/forget", json={"tag": "scratch", "scope": "everywhere"})
        problem = bad.json()
        assert bad.status_code == 422 and problem["field"] == "scope", problem
        assert all(name in problem["detail"] for name in ("session", "agent", "global")), problem
        assert c.get(f"/api/v1/memory/{kept['memory_id']}").status_code == 200


def test_audit_of_a_memory_reached_by_id_reads_its_session(served: Served) -> None:
    # An id reaches the agent's memory in any of its sessions; its audit rows did not follow it.
    with served.client(served.alice, **{"X-Engram-Session": "s1"}) as s1, served.client(served.alice) as agent:
        note = _store(s1, "the session's own plan", scope="session")
        entries = agent.get("/api/v1/audit", params={"memory": note["memory_id"]}).json()["entries"]
        assert [(e["action"], e["memory_id"]) for e in entries] == [("stored", note["memory_id"])]
        with served.client(served.bob) as bob:
            assert bob.get("/api/v1/audit", params={"memory": note["memory_id"]}).json()["entries"] == []
