"""ClawCode's and PtrClaw's MCP shapes as their documents write them, with the SDK's own client over
a real ``engram mcp`` subprocess: ``remember``'s ``context`` (session, timestamp, other keys),
``recall.limit`` as the default ``limit``, and PtrClaw's ``memory_recall`` links as keys."""

from __future__ import annotations

import asyncio
from pathlib import Path

from mcp import Client

from tests.interfaces.conftest import Served
from tests.interfaces.test_mcp import _data, _error_text, _http, _stdio


def test_remember_context_sets_session_time_and_metadata(tmp_path: Path) -> None:
    params = _stdio(tmp_path, "alice", tools=None)
    params.env["ENGRAM_FILES__FORMAT"] = "yaml"

    async def run() -> None:
        async with Client(params) as client:
            stored = _data(await client.call_tool("remember", {
                "content": "User prefers Python for scripting tasks", "tags": ["preferences", "programming"],
                "context": {"session_id": "sess_123", "timestamp": "2026-02-09T10:30:00Z", "source": "chat"}}))
            # ClawCode's recall of that session finds it, made when the context says, its context echoed.
            found = _data(await client.call_tool("recall", {
                "query": "What programming languages does the user prefer?",
                "filters": {"tags": ["preferences"], "session_id": "sess_123"}}))["results"]
            assert [r["memory_id"] for r in found] == [stored["memory_id"]]
            assert found[0]["timestamp"] == "2026-02-09T10:30:00Z"
            context = found[0]["context"]
            assert (context["session_id"], context["source"], context["scope"]) == (
                "sess_123", "chat", "session:alice/sess_123")
            assert "context" not in context and "timestamp" not in context
            # A session's memory stays in its session: another session does not see it.
            other = _data(await client.call_tool("recall", {"query": "programming languages prefer",
                                                            "filters": {"session_id": "sess_999"}}))
            assert other["results"] == []
            # Epoch seconds work too; without a session_id the memory is the agent's.
            plain = _data(await client.call_tool("remember", {"content": "The standup is at nine",
                                                              "context": {"timestamp": 1770000000}}))
            got = _data(await client.call_tool("get", {"memory_id": plain["memory_id"]}))
            assert (got["created_at"], got["scope"], got["metadata"]) == (1770000000, "agent:alice", {})

    asyncio.run(run())
    files = list((tmp_path / "memory").rglob("*.yaml"))
    text = next(f for f in files if "sess_123" in str(f)).read_text(encoding="utf-8")
    assert "context:\n" in text and "source: chat" in text and "context:\n      context:" not in text, text
    assert "2026-02-09T10:30:00Z" in text, text


def test_remember_context_bad_values_name_the_key_and_store_nothing(tmp_path: Path) -> None:
    async def run() -> None:
        async with Client(_stdio(tmp_path, "alice", tools=None)) as client:
            for context, scope, words in (
                ({"timestamp": "last tuesday-ish"}, None, ["context.timestamp", "ISO 8601"]),
                ({"timestamp": "0001-01-01"}, None, ["context.timestamp", "0002-01-01"]),
                ({"timestamp": True}, None, ["context.timestamp"]),
                ({"session_id": 5}, None, ["context.session_id"]),
                ({"session_id": "two words"}, None, ["context.session_id", "letters, digits"]),
                ({"session_id": "sess_1"}, "global", ["context.session_id", 'scope "session"']),
            ):
                args = {"content": "a fact that must not be stored", "context": context}
                if scope:
                    args["scope"] = scope
                text = _error_text(await client.call_tool("remember", args))
                assert all(w in text for w in words), (context, text)
            assert _data(await client.call_tool("list", {}))["memories"] == []

    asyncio.run(run())


def test_recall_limit_setting_is_the_default_limit(tmp_path: Path, served: Served) -> None:
    facts = [f"Walnut tree number {n} grows by the north fence" for n in range(12)]
    params = _stdio(tmp_path / "stdio", "alice", tools=None)  # not the served engine's home
    params.env["ENGRAM_RECALL__LIMIT"] = "3"

    async def run() -> None:
        async with Client(params) as client:
            for fact in facts:
                _data(await client.call_tool("remember", {"content": fact}))
            assert len(_data(await client.call_tool("recall", {"query": "walnut tree"}))["results"]) == 3
            assert len(_data(await client.call_tool("recall", {"query": "walnut tree", "limit": 7}))["results"]) == 7
        # Unset, the setting's default (10) applies, as in the library and the CLI.
        async with Client(_http(served, served.alice)) as client:
            for fact in facts:
                _data(await client.call_tool("remember", {"content": fact}))
            assert len(_data(await client.call_tool("recall", {"query": "walnut tree"}))["results"]) == 10

    asyncio.run(run())


def test_ptrclaw_memory_recall_links_are_keys_the_agent_may_read(served: Served) -> None:
    async def run() -> None:
        async with Client(_http(served, served.alice)) as alice:
            _data(await alice.call_tool("memory_store", {"key": "lang", "content": "The user writes Rust at work"}))
            _data(await alice.call_tool("memory_store", {"key": "job", "content": "The user builds compilers",
                                                         "links": ["lang"]}))
            shared = _data(await alice.call_tool("remember", {"content": "The office kettle is broken",
                                                              "key": "kettle", "scope": "global"}))
            await alice.call_tool("memory_link", {"action": "link", "from": "kettle", "to": "lang"})
            entries = _data(await alice.call_tool("memory_recall", {"query": "Rust compilers"}))["entries"]
            assert {e["key"]: sorted(e["links"]) for e in entries} == {"lang": ["job", "kettle"], "job": ["lang"]}
        async with Client(_http(served, served.bob)) as bob:
            # The global memory is linked to alice's "lang": bob sees neither its key nor its id.
            entries = _data(await bob.call_tool("memory_recall", {"query": "office kettle"}))["entries"]
            assert [(e["id"], e["links"]) for e in entries] == [(shared["memory_id"], [])]

    asyncio.run(run())
