"""What fuzzing the HTTP API (schemathesis over /openapi.json) and the MCP tools (every argument
with wrong types and odd values, through the SDK's client) found, pinned with plain examples:
an error names the field the caller sent, never ``body`` for a field named ``query`` nor
pydantic's union member (``valid_from.float``); a page start past any store is refused naming
``offset`` instead of overflowing SQLite; a query of one very long word is searched, not a
storage failure; a 405 says which methods the path takes; each error response is what the
published OpenAPI document says it is. Real server, real socket, real ``engram mcp`` process."""

from __future__ import annotations

import asyncio
import json
import select
import subprocess
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



def test_an_unusable_link_is_named_by_its_place_in_links(served: Served) -> None:
    # The engine named it "ref", a field no caller sends (a link not found was links[1] already).
    with served.client(served.alice) as client:
        assert client.post("/api/v1/memory", json={"content": "a target", "key": "target"}).status_code == 201
        for links, field in ((["target", ""], "links[1]"), (["target", "a\u0000"], "links[1]"),
                             (["\ud800"], "links[0]")):
            refused = client.post("/api/v1/memory", headers={"Content-Type": "application/json"},
                                  content=json.dumps({"content": "linked", "links": links}).encode())
            assert refused.status_code == 422 and refused.json()["field"] == field, refused.text
        assert [m["key"] for m in client.get("/api/v1/memory").json()["memories"]] == ["target"]

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


ERRORS = [  # (method, path as requested, path as documented, token?, body, status)
    ("GET", "/api/v1/memory", "/api/v1/memory", False, None, 401),
    ("GET", "/metrics", "/metrics", False, None, 401),
    ("GET", "/metrics", "/metrics", True, None, 403),  # an agent's token: not the scraper's
    ("POST", "/api/v1/memory", "/api/v1/memory", True, b"{", 400),
    ("POST", "/api/v1/memory", "/api/v1/memory", True, b'{"content": 5}', 422),
    ("POST", "/api/v1/memory", "/api/v1/memory", True, b'{"content": ""}', 422),
    ("POST", "/api/v1/memory", "/api/v1/memory", True, b'{"content": "' + b"x" * 70_000 + b'"}', 413),
    ("POST", "/api/v1/memory", "/api/v1/memory", True, b'{"content": "a", "links": ["nowhere"]}', 404),
    ("GET", "/api/v1/memory?offset=-1", "/api/v1/memory", True, None, 422),
    ("GET", "/api/v1/stats?sinse=1", "/api/v1/stats", True, None, 422),
    ("GET", "/api/v1/memory/nowhere", "/api/v1/memory/{ref}", True, None, 404),
    ("DELETE", "/api/v1/memory/by-key?key=nowhere", "/api/v1/memory/by-key", True, None, 404),
    ("POST", "/api/v1/history/cli:a", "/api/v1/history/{conversation}", True, b'{"role": "robot"}', 422),
]


@pytest.mark.parametrize(("method", "path", "documented", "token", "body", "status"), ERRORS,
                         ids=[f"{e[0]} {e[1][:40]} {e[5]}" for e in ERRORS])
def test_error_responses_match_the_published_schema(served: Served, method: str, path: str, documented: str,
                                                    token: bool, body: bytes | None, status: int) -> None:
    # The schema documented FastAPI's 422 ({"detail": [...]}, application/json), which the server
    # never sends, and none of its 400, 401, 404 and 413: a client generated from it could not read
    # an error. Each is now a Problem, as application/problem+json.
    import jsonschema

    schema = httpx.get(served.url + "/openapi.json").json()
    headers = {"Content-Type": "application/json"} | ({"Authorization": f"Bearer {served.alice}"} if token else {})
    answer = httpx.request(method, served.url + path, content=body, headers=headers)
    assert answer.status_code == status, answer.text
    responses = schema["paths"][documented][method.lower()]["responses"]
    assert str(status) in responses, sorted(responses)
    media = answer.headers["content-type"].split(";")[0]
    content = responses[str(status)]["content"]
    assert media in content, (media, content)
    jsonschema.validate(answer.json(), {**content[media]["schema"], "components": schema["components"]})
    assert "HTTPValidationError" not in str(schema)


def test_mcp_stdio_answers_a_line_the_sdk_cannot_read(tmp_path: Path) -> None:
    # A lone surrogate escape is valid JSON the SDK's reader refuses: the line was dropped, and
    # the client waited for ever. The SDK's client cannot send one, so this speaks JSON-RPC itself.
    params = _stdio(tmp_path, "alice")
    proc = subprocess.Popen([params.command, *params.args], env=params.env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None

    def ask(line: str) -> dict:
        proc.stdin.write(line.encode() + b"\n")
        proc.stdin.flush()
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        assert ready, f"no answer to {line}"
        return json.loads(proc.stdout.readline())

    try:
        assert "result" in ask('{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":'
                               '"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}')
        proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        for args, field in (('{"content":"lone \\ud800 half"}', "content"), ('{"content":"x","tags":["a","\\udfff"]}',
                                                                              "tags[1]")):
            answer = ask('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"remember","arguments":'
                         + args + "}}")
            assert answer["id"] == 1 and answer["result"]["isError"], answer
            text = answer["result"]["content"][0]["text"]
            assert f"invalid {field}: contains a lone surrogate" in text and "allowed" in text, text
        answer = ask('{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"engram://\\ud800"}}')
        assert answer["id"] == 2 and "params.uri" in answer["error"]["message"], answer
        answer = ask("not json at all")
        assert answer["id"] is None and answer["error"]["code"] == -32700, answer
        listed = ask('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list","arguments":{}}}')
        assert listed["id"] == 3 and listed["result"]["structuredContent"]["memories"] == [], listed
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
