"""ClawCode's and PtrClaw's MCP shapes as their documents write them, with the SDK's own client over
a real ``engram mcp`` subprocess: ``remember``'s ``context`` (session, timestamp, other keys),
``recall.limit`` as the default ``limit``, and PtrClaw's ``memory_recall`` links as keys."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
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
                # A record time later than now (beyond a clock running a few minutes fast) is refused:
                # every later change would come before it. When the fact holds is valid_from.
                ({"timestamp": "2999-01-01T00:00:00Z"}, None, ["context.timestamp", "later than now", "valid_from"]),
                ({"session_id": 5}, None, ["context.session_id"]),
                ({"session_id": "two words"}, None, ["context.session_id", "letters, digits"]),
                ({"session_id": "sess_1"}, "global", ["context.session_id", 'scope "session"']),
                # Names recall's context gives the memory's own fields: kept as metadata, the value
                # would never come back (a context "category": "ops" was recalled as "knowledge").
                ({"category": "ops"}, None, ["context.category", "the argument category of remember"]),
                ({"source": "chat", "type": "preference"}, None, ["context.type", "the argument type"]),
                ({"key": "deploy-day"}, None, ["context.key", "the argument key"]),
                ({"via": "standup"}, None, ["context.via", "another name"]),
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


def test_a_session_memory_is_reached_by_its_id_and_forgotten_or_listed_within_its_session(tmp_path: Path) -> None:
    # ClawCode's day one as its document writes it, over a connection naming no session: remember
    # in sess_123, recall it there, then every tool that takes a memory_id reaches it by the id
    # recall gave (it is the agent's own), and forget/list name the session as recall does.
    async def run() -> None:
        async with Client(_stdio(tmp_path, "alice", tools="both")) as client:
            stored = _data(await client.call_tool("remember", {
                "content": "User prefers Python for scripting tasks", "tags": ["preferences", "programming"],
                "context": {"session_id": "sess_123", "timestamp": "2026-02-09T10:30:00Z"}}))
            mid = stored["memory_id"]
            found = _data(await client.call_tool("recall", {
                "query": "What programming languages does the user prefer?",
                "filters": {"tags": ["preferences", "programming"], "session_id": "sess_123"}}))["results"]
            assert [r["memory_id"] for r in found] == [mid]
            got = _data(await client.call_tool("get", {"memory_id": mid}))
            assert (got["id"], got["scope"]) == (mid, "session:alice/sess_123")
            key = got["key"]
            changed = _data(await client.call_tool("update", {"memory_id": mid, "content": "User prefers Python for "
                                                                                          "scripting and tooling"}))
            assert changed["memory_id"] == mid and changed["action"] == "updated"
            versions = _data(await client.call_tool("versions", {"memory_id": mid}))["versions"]
            assert [v["content"] for v in versions] == ["User prefers Python for scripting tasks"]
            agents = _data(await client.call_tool("remember", {"content": "The build box runs Python 3.12",
                                                               "tags": ["programming"]}))["memory_id"]
            assert _data(await client.call_tool("link", {"source": mid, "target": agents}))["changed"] is True
            assert _data(await client.call_tool("get", {"memory_id": mid}))["links"] == [agents]
            # A key is read where the connection reads (its agent and global): the error says which
            # session holds it and the id that reaches it.
            missing = _error_text(await client.call_tool("get", {"key": key}))
            assert f'memory named by key not found: "{key}"; ' in missing, missing
            assert 'session "sess_123"' in missing and mid in missing, missing
            # Without a session, forget and list keep to the connection's scopes, as before; with
            # recall's filters.session_id, to that session's memories.
            assert [m["memory_id"] for m in _data(await client.call_tool("list", {"tags": ["programming"]}))[
                "memories"]] == [agents]
            listed = _data(await client.call_tool("list", {"tags": ["programming"],
                                                           "filters": {"session_id": "sess_123"}}))["memories"]
            assert [m["memory_id"] for m in listed] == [mid]
            listed = _data(await client.call_tool("list", {"filters": {"session_id": "sess_123",
                                                                       "tags": ["preferences"]}}))["memories"]
            assert [m["memory_id"] for m in listed] == [mid]
            assert _data(await client.call_tool("forget", {"query": "Python scripting", "dry_run": True}))["count"] == 0
            for selector in ({"query": "Python scripting"}, {"tag": "programming"}, {"older_than_days": 0}):
                would = _data(await client.call_tool("forget", {
                    **selector, "dry_run": True, "filters": {"session_id": "sess_123"}}))
                assert would["forgotten"] == [mid], (selector, would)
            would = _data(await client.call_tool("forget", {"key": key, "dry_run": True,
                                                            "filters": {"session_id": "sess_123"}}))
            assert would["forgotten"] == [mid]
            # Bad filters are refused naming them; nothing goes.
            for args, words in (
                ({"tag": "programming", "filters": {"session_id": "two words"}}, ["filters.session_id"]),
                ({"tag": "programming", "filters": {"session": "sess_123"}}, ["session_id"]),
                ({"memory_id": mid, "filters": {"tags": ["programming"]}}, ["invalid filters", "query, tag"]),
            ):
                text = _error_text(await client.call_tool("forget", args))
                assert all(w in text for w in words), (args, text)
            text = _error_text(await client.call_tool("list", {"type": "learned", "filters": {"type": "learned"}}))
            assert "filters.type" in text, text
            # ClawCode's forget by the id recall gave, with its reason; PtrClaw's tools reach one by id too.
            forgotten = _data(await client.call_tool("forget", {"memory_id": mid, "reason": "Outdated preference"}))
            assert forgotten["forgotten"] == [mid] and forgotten["reason"] == "Outdated preference"
            again = _data(await client.call_tool("remember", {"content": "User writes Go at work",
                                                              "context": {"session_id": "sess_123"}}))
            assert _data(await client.call_tool("memory_link", {"action": "link", "from": again["memory_id"],
                                                                "to": agents}))["changed"] is True
            gone = _data(await client.call_tool("memory_forget", {"key": again["memory_id"]}))
            assert (gone["forgotten"], gone["count"]) == ([again["key"]], 1)
            assert _data(await client.call_tool("list", {"filters": {"session_id": "sess_123"}}))["memories"] == []

    asyncio.run(run())


def _agent_params(home: Path, agent: str, per_agent: bool, *more: str) -> Any:
    made = _stdio(home, agent, tools="both")
    made.args = [*made.args[:-1], *more, "mcp"]  # --agent NAME, then more options, then the command
    if per_agent:
        made.env["ENGRAM_PER_AGENT_DATABASES"] = "true"
    return made


@pytest.mark.parametrize("per_agent", [False, True], ids=["one-database", "per-agent-databases"])
def test_another_agent_reaches_no_session_memory_by_its_id(tmp_path: Path, per_agent: bool) -> None:
    # Alice's session memory, by its id: bob's connection (a session of the same name included)
    # can neither read, change nor forget it, with one database or one per agent.
    async def run() -> None:
        async with Client(_agent_params(tmp_path, "alice", per_agent)) as alice:
            mid = _data(await alice.call_tool("remember", {
                "content": "Alice's bank PIN hint is her first cat", "tags": ["private"],
                "context": {"session_id": "sess_123"}}))["memory_id"]
        for extra in ((), ("--session", "sess_123")):
            async with Client(_agent_params(tmp_path, "bob", per_agent, *extra)) as bob:
                for tool, args in (("get", {"memory_id": mid}), ("versions", {"memory_id": mid}),
                                   ("forget", {"memory_id": mid, "reason": "mine now"}),
                                   ("update", {"memory_id": mid, "content": "changed by bob"}),
                                   ("link", {"source": mid, "target": mid}),
                                   ("memory_forget", {"key": mid})):
                    text = _error_text(await bob.call_tool(tool, args))
                    assert f'not found: "{mid}"; recall first' in text, (tool, text)
                    assert "sess_123" not in text, text
                for args in ({"tag": "private"}, {"tag": "private", "filters": {"session_id": "sess_123"}}):
                    assert _data(await bob.call_tool("forget", {**args, "dry_run": True}))["count"] == 0
        async with Client(_agent_params(tmp_path, "alice", per_agent)) as alice:
            got = _data(await alice.call_tool("get", {"memory_id": mid}))
            assert got["content"] == "Alice's bank PIN hint is her first cat" and got["links"] == []

    asyncio.run(run())
