"""Clawless's semantic recall as the MCP tool ``semantic_recall``, with the SDK's own client over a
real ``engram mcp`` stdio subprocess and over streamable HTTP: the HTTP route's answer, refusals
naming the argument, and one agent never reading another's conversations."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from mcp import Client

from engram.engine import Engram
from tests.interfaces.conftest import Served
from tests.interfaces.test_mcp import _data, _error_text, _http, _stdio

DOG = ("My dog is called Biscuit", "Biscuit is a lovely name.")
REPORT = ("The quarterly report is due Friday", "I will remind you on Thursday.")


def _converse(engram: Engram) -> None:
    for key, (user, bot) in (("telegram:42", DOG), ("web:7", REPORT)):
        engram.history.append(key, "user", user)
        engram.history.append(key, "assistant", bot)


def test_semantic_recall_over_stdio_answers_as_http_and_stays_with_its_agent(tmp_path: Path) -> None:
    with Engram.from_settings(home=tmp_path, agent="alice") as alice:
        _converse(alice)
        expected = alice.history.semantic_recall("what is my puppy called", key="42", top_k=1)

    async def run() -> None:
        async with Client(_stdio(tmp_path, "alice", tools=None)) as client:  # the default family offers it
            tool = next(t for t in (await client.list_tools()).tools if t.name == "semantic_recall")
            assert tool.annotations.read_only_hint and tool.title
            assert tool.input_schema["properties"]["top_k"]["anyOf"][0]["maximum"] == 100
            found = _data(await client.call_tool("semantic_recall", {"query": "what is my puppy called",
                                                                     "chat_id": "42", "top_k": 1}))
            assert [(e["userMessage"], e["botResponse"]) for e in found["entries"]] == [DOG]
            entry = found["entries"][0]
            assert (entry["chatId"], entry["platform"], entry["conversation"]) == ("42", "telegram", "telegram:42")
            assert found["recap"] == expected.recap and "Biscuit" in found["recap"]
            # By full key, and with no chat: every conversation of the agent's.
            keyed = _data(await client.call_tool("semantic_recall", {"query": "report due", "chat_id": "web:7"}))
            assert [e["userMessage"] for e in keyed["entries"]] == [REPORT[0]]
            both = _data(await client.call_tool("semantic_recall", {"query": "dog report", "top_k": 5}))
            assert sorted(e["conversation"] for e in both["entries"]) == ["telegram:42", "web:7"]
        async with Client(_stdio(tmp_path, "bob", tools="ptrclaw")) as bob:  # offered with PtrClaw's family too
            for arguments in ({"query": "what is my puppy called"}, {"query": "dog", "chat_id": "telegram:42"},
                              {"query": "report", "chat_id": "7", "top_k": 100}):
                found = _data(await bob.call_tool("semantic_recall", arguments))
                assert found == {"entries": [], "recap": ""}, arguments

    asyncio.run(run())
    with Engram.from_settings(home=tmp_path, agent="bob") as bob:  # bob's reads left alice's alone
        assert bob.history.conversations() == []
    with Engram.from_settings(home=tmp_path, agent="alice") as alice:
        assert alice.history.conversations() == ["telegram:42", "web:7"]


@pytest.mark.parametrize(("arguments", "field"), [
    ({"query": ""}, "query"),
    ({"query": "   "}, "query"),
    ({"chat_id": "42"}, "query"),
    ({"query": "d\x00og"}, "query"),
    ({"query": "dog", "top_k": 0}, "top_k: 0 is out of range (allowed: 1 to 100)"),
    ({"query": "dog", "top_k": 101}, "top_k: 101 is out of range (allowed: 1 to 100)"),
    ({"query": "dog", "top_k": "3"}, "top_k"),
    ({"query": "dog", "top_k": True}, "top_k"),
    ({"query": "dog", "chat_id": "a b"}, "chat_id"),
    ({"query": "dog", "chat_id": "web:"}, "chat_id"),
    ({"query": "dog", "chat_id": "a:b:c:d"}, "chat_id"),
    ({"query": "dog", "chat_id": "web:4\x002"}, "chat_id"),
    ({"query": "dog", "chatId": "42"}, "chatId"),  # Clawless's spelling is not silently ignored
])
def test_semantic_recall_over_http_refuses_naming_the_argument(served: Served, arguments: dict, field: str) -> None:
    with served.client(served.alice) as c:
        c.post("/api/v1/history/web:42", json={"role": "user", "content": DOG[0]})
        c.post("/api/v1/history/web:42", json={"role": "assistant", "content": DOG[1]})

    async def run() -> None:
        async with Client(_http(served, served.alice)) as alice:
            text = _error_text(await alice.call_tool("semantic_recall", arguments))
            assert (f"invalid {field}:" if ":" not in field else field) in text, text
            ok = _data(await alice.call_tool("semantic_recall", {"query": "dog", "chat_id": "42", "top_k": 1}))
            assert [e["userMessage"] for e in ok["entries"]] == [DOG[0]]
        async with Client(_http(served, served.bob)) as bob:  # the token's agent: bob has no conversation
            assert _data(await bob.call_tool("semantic_recall", {"query": "dog", "chat_id": "web:42"}))["entries"] == []

    asyncio.run(run())
    assert served.engram.for_agent("alice").history.count("web:42") == 2  # nothing lost
