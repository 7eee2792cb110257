"""MCP with the SDK's own client: over a real `engram mcp` stdio subprocess and over streamable HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from engram.auth import TokenStore
from engram.engine import Engram
from engram.interfaces.http.app import create_app
from engram.interfaces.http.serve import BackgroundServer
from engram.interfaces.settings import ServerSettings
from tests.interfaces.conftest import Served

CLAWCODE = {"remember", "recall", "forget", "link", "get", "supersede"}
PTRCLAW = {"memory_store", "memory_recall", "memory_forget", "memory_link"}
CLAWLESS = {"semantic_recall"}  # offered beside either family (test_mcp_semantic_recall)


def _stdio(home: Path, agent: str, tools: str | None = "both") -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env["ENGRAM_HOME"] = str(home)
    if tools is not None:
        env["ENGRAM_SERVER__MCP_TOOLS"] = tools
    return StdioServerParameters(
        command=sys.executable,
        args=["-c", "from engram.interfaces.cli.app import main; main()", "--agent", agent, "mcp"], env=env)


def _http(served: Served, token: str | None, session: str | None = None) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    if session:
        headers["X-Engram-Session"] = session
    return streamable_http_client(f"{served.url}/mcp", http_client=create_mcp_http_client(headers=headers))


def _data(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


def _error_text(result: Any) -> str:
    assert result.is_error
    return result.content[0].text


async def _exercise_tools(client: Client) -> None:
    """Every tool once, the ClawCode result shape, and errors surfacing as tool errors."""
    names = {t.name for t in (await client.list_tools()).tools}
    assert CLAWCODE | PTRCLAW | CLAWLESS <= names
    stored = _data(await client.call_tool("remember", {
        "content": "The user prefers Python for scripting tasks", "tags": ["preferences", "programming"],
        "context": {"source": "chat"}}))  # a session_id would make it that session's (test_mcp_clawcode_compat)
    assert stored["action"] == "created"
    mid = stored["memory_id"]
    other = _data(await client.call_tool("memory_store", {"key": "project-setup", "content": "The project uses Python 3.12"}))
    assert other["key"] == "project-setup"

    found = _data(await client.call_tool("recall", {
        "query": "What programming languages does the user prefer?", "limit": 5,
        "filters": {"tags": ["preferences"]}}))
    top = found["results"][0]
    assert top["memory_id"] == mid and set(top) == {"memory_id", "content", "relevance", "tags", "timestamp", "context"}
    assert top["tags"] == ["preferences", "programming"] and 0 < top["relevance"] <= 1 and top["timestamp"].endswith("Z")
    assert top["context"]["source"] == "chat"
    high = _data(await client.call_tool("recall", {"query": "Python", "min_relevance": 1.0}))
    assert all(r["relevance"] >= 1.0 for r in high["results"])

    assert _data(await client.call_tool("link", {"source": mid, "target": "project-setup"}))["changed"] is True
    # The same link again changes nothing, and says so (it said true), from either family and end.
    assert _data(await client.call_tool("link", {"source": "project-setup", "target": mid}))["changed"] is False
    assert _data(await client.call_tool("memory_link", {"action": "link", "from": mid, "to": "project-setup"}))[
        "changed"] is False
    assert _data(await client.call_tool("get", {"memory_id": mid}))["links"] == [other["memory_id"]]
    linked = _data(await client.call_tool("memory_recall", {"query": "scripting preferences", "depth": 1}))
    assert {e["key"] for e in linked["entries"]} >= {"project-setup"}
    assert _data(await client.call_tool("memory_link", {"action": "unlink", "from": mid, "to": "project-setup"}))["changed"]

    assert "not found" in _error_text(await client.call_tool("forget", {"memory_id": "mem_456", "reason": "outdated"}))
    assert "invalid query" in _error_text(await client.call_tool("recall", {"query": "   "}))
    assert "invalid forget" in _error_text(await client.call_tool("forget", {"reason": "no selector"}))
    # Arguments refused are named as every door names fields, without pydantic's noise (a range: the engine's words).
    out_of_range = _error_text(await client.call_tool("remember", {"content": "x", "importance": 7}))
    assert out_of_range == ("Error executing tool remember: invalid importance: 7.0 is out of range "
                            "(allowed: a number from 0 to 1)")
    wrong_item = _error_text(await client.call_tool("recall", {"query": "x", "filters": {"tags": ["ok", 3]}}))
    assert wrong_item == "Error executing tool recall: invalid filters.tags[1]: Input should be a valid string"
    two = _error_text(await client.call_tool("memory_store", {"content": 5}))
    assert "invalid content: Input should be a valid string" in two and "invalid key: Field required" in two
    assert "pydantic" not in two and "input_value" not in two

    dry = _data(await client.call_tool("forget", {"query": "Python scripting", "dry_run": True}))
    assert dry["forgotten"] == [mid] and dry["dry_run"]
    assert _data(await client.call_tool("forget", {"memory_id": mid, "reason": "Outdated preference"}))["count"] == 1
    assert _data(await client.call_tool("memory_forget", {"key": "project-setup"}))["count"] == 1
    assert _data(await client.call_tool("recall", {"query": "Python"}))["results"] == []

    _data(await client.call_tool("memory_store", {"key": "soul:identity", "content": "I am Ada", "category": "core"}))
    soul = await client.read_resource("engram://soul")
    assert "## Your Identity\nI am Ada" in soul.contents[0].text
    core = json.loads((await client.read_resource("engram://core")).contents[0].text)
    assert [m["key"] for m in core] == ["soul:identity"]


def test_stdio_subprocess_tools_and_isolation(tmp_path: Path) -> None:
    async def run() -> None:
        async with Client(_stdio(tmp_path, "alice")) as alice:
            await _exercise_tools(alice)
            _data(await alice.call_tool("remember", {"content": "alice keeps the tulip bulbs in the shed"}))
        async with Client(_stdio(tmp_path, "bob")) as bob:
            assert _data(await bob.call_tool("recall", {"query": "tulip bulbs shed"}))["results"] == []
            assert (await bob.call_tool("memory_forget", {"key": "soul:identity"})).is_error
        async with Client(_stdio(tmp_path, "alice")) as alice:  # and it persisted for alice
            assert _data(await alice.call_tool("recall", {"query": "tulip bulbs shed"}))["results"]

    asyncio.run(run())


def test_tool_names_are_configurable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    params = _stdio(tmp_path, "alice")
    params.env["ENGRAM_SERVER__MCP_TOOLS"] = "ptrclaw"

    async def run() -> set[str]:
        async with Client(params) as client:
            return {t.name for t in (await client.list_tools()).tools}

    assert asyncio.run(run()) == PTRCLAW | CLAWLESS


def test_streamable_http_tools_isolation_and_auth(served: Served) -> None:
    async def run() -> None:
        async with Client(_http(served, served.alice)) as alice:
            await _exercise_tools(alice)
            bulbs = _data(await alice.call_tool("remember", {"content": "alice keeps the tulip bulbs in the shed"}))
            shared = _data(await alice.call_tool("remember", {"content": "the potting roof leaks", "scope": "global"}))
            await alice.call_tool("link", {"source": shared["memory_id"], "target": bulbs["memory_id"]})
            assert _data(await alice.call_tool("get", {"memory_id": shared["memory_id"]}))["links"] == [bulbs["memory_id"]]
        async with Client(_http(served, served.bob)) as bob:
            assert _data(await bob.call_tool("recall", {"query": "tulip bulbs shed"}))["results"] == []
            assert json.loads((await bob.read_resource("engram://core")).contents[0].text) == []
            # The global memory is linked to alice's: bob sees it, never the id of alice's.
            assert _data(await bob.call_tool("get", {"memory_id": shared["memory_id"]}))["links"] == []
            found = _data(await bob.call_tool("recall", {"query": "potting roof", "depth": 1}))["results"]
            assert [r["memory_id"] for r in found] == [shared["memory_id"]] and "links" not in found[0]["context"]
            ptr = _data(await bob.call_tool("memory_recall", {"query": "potting roof", "depth": 1}))
            assert all(entry["links"] == [] for entry in ptr["entries"])
        async with Client(_http(served, served.alice, session="s1")) as s1:
            note = _data(await s1.call_tool("remember", {"content": "session one scratch note", "scope": "session"}))
            hits = _data(await s1.call_tool("recall", {"query": "scratch note", "filters": {"session_id": "s1"}}))
            assert [r["memory_id"] for r in hits["results"]] == [note["memory_id"]]
            assert hits["results"][0]["context"]["session_id"] == "s1"
        async with Client(_http(served, served.alice)) as alice:
            assert _data(await alice.call_tool("recall", {"query": "scratch note"}))["results"] == []
        # The memories went through the same store the HTTP API serves: by its id alice reaches the
        # session's note from any view of hers (recall without the session did not find it); bob does not.
        assert str(served.engram.for_agent("alice").get(note["memory_id"]).scope) == "session:alice/s1"
        assert served.engram.for_agent("bob", "s1").find(note["memory_id"]) is None

    asyncio.run(run())
    assert served.engram.for_agent("alice", "s1").recall("tulip bulbs").hits


def test_streamable_http_refuses_without_a_valid_token(served: Served) -> None:
    async def connect(token: str | None) -> None:
        async with Client(_http(served, token)) as client:
            await client.list_tools()

    for token in (None, "eg_deadbeef_wrong"):
        with pytest.raises(Exception):  # noqa: B017 - the SDK surfaces the 401 as a connection error
            asyncio.run(asyncio.wait_for(connect(token), 30))


def test_default_family_titles_annotations_list_update_and_mcp_origin(tmp_path: Path) -> None:
    async def run() -> None:
        async with Client(_stdio(tmp_path, "alice", tools=None)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            # one family unless server.mcp_tools says more, and Clawless's semantic recall
            assert set(tools) == CLAWCODE | {"list", "update", "versions"} | CLAWLESS
            assert all(t.title for t in tools.values())
            hints = {name: t.annotations for name, t in tools.items()}
            assert {n for n, a in hints.items() if a.read_only_hint} == {"recall", "get", "versions", "list",
                                                                          "semantic_recall"}
            assert {n for n, a in hints.items() if a.destructive_hint} == {"forget", "link"}
            assert hints["remember"].idempotent_hint and hints["update"].idempotent_hint
            assert hints["remember"].destructive_hint is False and hints["forget"].idempotent_hint

            first = _data(await client.call_tool("remember", {"content": "The deploy window is Tuesday morning"}))
            second = _data(await client.call_tool("remember", {"content": "The office plants need water on Fridays",
                                                               "tags": ["office"]}))
            listed = _data(await client.call_tool("list", {"limit": 5}))
            assert [m["memory_id"] for m in listed["memories"]] == [second["memory_id"], first["memory_id"]]
            tagged = _data(await client.call_tool("list", {"tags": ["office"]}))["memories"]
            assert [m["content"] for m in tagged] == ["The office plants need water on Fridays"]
            changed = _data(await client.call_tool("update", {"memory_id": first["memory_id"],
                                                              "content": "The deploy window is Wednesday morning",
                                                              "importance": 0.9}))
            assert changed["action"] == "updated" and changed["memory_id"] == first["memory_id"]
            now = _data(await client.call_tool("get", {"memory_id": first["memory_id"]}))
            assert (now["content"], now["importance"]) == ("The deploy window is Wednesday morning", 0.9)
            assert "not found" in _error_text(await client.call_tool("update", {"memory_id": "nope", "content": "x"}))
            assert (await client.call_tool("update", {"memory_id": first["memory_id"], "importance": 3})).is_error

    asyncio.run(run())
    from engram.audit import AuditQuery
    from engram.engine import Engram

    with Engram.from_settings(home=tmp_path, agent="alice") as engram:
        entries = engram.backend.audit_log().query(AuditQuery(limit=20))
    assert {(e.action, e.origin) for e in entries} == {("stored", "mcp"), ("updated", "mcp")}


def test_an_idle_http_session_is_ended_and_released(tmp_path: Path) -> None:
    # A client that is killed never ends its session: the server must let it go after
    # server.mcp_session_idle_s, or every such client is kept until the server stops.
    db_path = tmp_path / "memory.db"
    engram = Engram.from_settings(home=tmp_path, path=db_path)
    tokens = TokenStore.open(db_path)
    token, _ = tokens.create("alice", "test")
    server = BackgroundServer(create_app(engram, tokens, ServerSettings(mcp_session_idle_s=0.5))).start()
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    try:
        with httpx.Client(base_url=server.url, headers=headers, timeout=30) as c:
            opened = c.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
            session = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
            ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
            assert c.post("/mcp", json=ping, headers=session).status_code == 200  # alive while used
            time.sleep(2.0)
            assert c.post("/mcp", json=ping, headers=session).status_code == 404  # ended: start anew
    finally:
        server.stop()
        tokens.close()
        engram.close()
