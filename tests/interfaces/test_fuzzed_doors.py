"""What fuzzing the HTTP API (schemathesis over /openapi.json) and the MCP tools (every argument
with wrong types and odd values, through the SDK's client) found, pinned with plain examples:
an error names the field the caller sent, never ``body`` for a field named ``query`` nor
pydantic's union member (``valid_from.float``); a page start past any store is refused naming
``offset`` instead of overflowing SQLite; a query of one very long word is searched, not a
storage failure; a 405 says which methods the path takes; each error response is what the
published OpenAPI document says it is. Real server, real socket, real ``engram mcp`` process."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest
from mcp import Client

from engram.engine import Engram
from engram.errors import ValidationError
from tests.interfaces.conftest import Served
from tests.interfaces.test_mcp import _data, _error_text, _stdio


def test_http_names_a_body_field_called_query_and_a_union_field(served: Served) -> None:
    with served.client(served.alice) as client:
        refused = client.post("/api/v1/memory/forget", json={"query": 5})
        assert refused.status_code == 422 and refused.json()["field"] == "query", refused.text
        refused = client.post("/api/v1/memory", json={"content": "a fact", "valid_from": []})
        assert refused.status_code == 422, refused.text
        assert refused.json()["field"] == "valid_from", refused.text
        assert {e["field"] for e in refused.json()["errors"]} == {"valid_from"}, refused.text
        refused = client.post("/api/v1/history/cli:a/messages", json={"messages": [
            {"role": "assistant", "tool_calls": [{"id": "1", "name": "n", "arguments": 5}]}]})
        assert refused.json()["field"] == "messages[0].tool_calls[0].arguments", refused.text
        # A query parameter is still named without FastAPI's "query" in front of it.
        refused = client.get("/api/v1/memory/search", params={"q": "x", "limit": 0})
        assert refused.json()["field"] == "limit", refused.text
        assert client.get("/api/v1/memory").json()["total"] == 0


def test_a_page_start_past_any_store_is_refused_naming_offset(tmp_path: Path) -> None:
    with Engram.from_settings(home=tmp_path, embeddings={"provider": "none"}, files={"enabled": False}) as engram:
        engram.remember("already stored", key="kept")
        with pytest.raises(ValidationError) as raised:
            engram.list(offset=10**30)  # was SQLite's OverflowError
        assert raised.value.field == "offset" and raised.value.allowed == "0 to 1000000000"
        assert [m.key for m in engram.list(offset=1_000_000_000)] == []
        assert [m.key for m in engram.list()] == ["kept"]


def test_recall_of_one_very_long_word_searches_instead_of_failing(tmp_path: Path) -> None:
    # Past SQLite's 50,000-byte LIKE pattern: the substring fallback said "LIKE or GLOB pattern
    # too complex", a storage failure. A word inside a longer one is found by substring.
    word = "ü" * 26_000
    with Engram.from_settings(home=tmp_path, embeddings={"provider": "none"}, files={"enabled": False},
                              max_content_chars=60_000) as engram:
        stored = engram.remember("prefix" + word + " and more", key="long").memory
        engram.remember("something else entirely", key="other")
        found = engram.recall(word.upper(), mode="text")
        assert [h.memory.id for h in found.hits] == [stored.id]
        assert engram.recall("x" * 100_000, mode="text").hits == ()


def test_mcp_names_query_and_refuses_a_huge_offset_and_searches_a_huge_query(tmp_path: Path) -> None:
    async def run() -> None:
        async with Client(_stdio(tmp_path, "alice")) as client:
            _data(await client.call_tool("remember", {"content": "The user drinks green tea", "key": "tea"}))
            for tool in ("recall", "memory_recall"):
                text = _error_text(await client.call_tool(tool, {}))
                assert "invalid query: Field required" in text, text
                text = _error_text(await client.call_tool(tool, {"query": 5}))
                assert "invalid query:" in text, text
            text = _error_text(await client.call_tool("forget", {"query": ["tea"], "dry_run": True}))
            assert "invalid query:" in text, text
            text = _error_text(await client.call_tool("list", {"offset": 10**30}))
            assert "invalid offset" in text and "1000000000" in text, text
            for tool in ("recall", "memory_recall"):
                assert not (await client.call_tool(tool, {"query": "x" * 100_000})).is_error
            assert [m["key"] for m in _data(await client.call_tool("list", {}))["memories"]] == ["tea"]

    asyncio.run(run())


@pytest.mark.parametrize(("method", "path", "allowed"), [
    ("TRACE", "/healthz", {"GET"}), ("DELETE", "/api/v1/stats", {"GET"}),
    ("PUT", "/api/v1/memory", {"GET", "POST"}),
])
def test_a_405_says_which_methods_the_path_takes(served: Served, method: str, path: str, allowed: set[str]) -> None:
    answer = httpx.request(method, served.url + path, headers={"Authorization": f"Bearer {served.alice}"})
    assert answer.status_code == 405, answer.text
    assert answer.headers["content-type"] == "application/problem+json"
    assert {m.strip() for m in answer.headers["allow"].split(",")} >= allowed, answer.headers
