"""JSON null for an optional MCP tool argument means "not given": its default, whatever the
default. Models send null for what they do not mean to set; the SDK refused it for every optional
argument whose default is not None (``remember``'s category and importance, ``list``'s limit,
``memory_store``'s category, ``memory_recall``'s limit) while taking it for the others. A required
argument sent as null is refused naming it. Over stdio and streamable HTTP, with the SDK's client."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from mcp import Client

from tests.interfaces.conftest import Served
from tests.interfaces.test_mcp import _data, _error_text, _http, _stdio

# Enough of each tool's arguments to call it; the memory "garden" is stored first.
CALLS: dict[str, dict[str, Any]] = {
    "remember": {"content": "The user waters the garden at dawn"}, "recall": {"query": "garden"},
    "forget": {"key": "garden", "dry_run": True}, "link": {"source_key": "garden", "target_key": "shed"},
    "supersede": {"old_key": "garden", "new_key": "shed"}, "get": {"key": "garden"},
    "versions": {"key": "garden"}, "list": {}, "update": {"key": "garden"},
    "memory_store": {"key": "notes", "content": "A note"}, "memory_recall": {"query": "garden"},
    "memory_forget": {"key": "garden"}, "memory_link": {"action": "link", "from": "garden", "to": "shed"},
    "semantic_recall": {"query": "garden"},
}


async def _every_optional_null_is_not_given(client: Client) -> None:
    # Each optional argument of each tool, null: never refused for being null.
    tools = (await client.list_tools()).tools
    assert {t.name for t in tools} == set(CALLS)
    for tool in tools:
        required = set(tool.input_schema.get("required", ()))
        for name in tool.input_schema["properties"]:
            if name in required or tool.name in ("forget", "memory_forget", "supersede"):
                continue  # (those change what the others read; forget's dry run is covered below)
            result = await client.call_tool(tool.name, {**CALLS[tool.name], name: None})
            if result.is_error:
                assert f"invalid {name}:" not in _error_text(result), (tool.name, name, _error_text(result))


async def _nulls_take_the_defaults(client: Client) -> None:
    _data(await client.call_tool("memory_store", {"key": "garden", "content": "The garden gate sticks",
                                                  "category": "core"}))
    _data(await client.call_tool("memory_store", {"key": "shed", "content": "The shed is blue in the garden"}))
    await _every_optional_null_is_not_given(client)
    stored = _data(await client.call_tool("remember", {"content": "The user grows tomatoes", "category": None,
                                                       "importance": None, "scope": None, "tags": None}))
    got = _data(await client.call_tool("get", {"memory_id": stored["memory_id"], "key": None}))
    assert (got["category"], got["importance"], got["scope"], got["tags"]) == ("knowledge", 0.5, "agent:alice", [])
    entry = _data(await client.call_tool("memory_store", {"key": "pots", "content": "Pots are by the door",
                                                          "category": None, "links": None}))
    assert _data(await client.call_tool("get", {"memory_id": entry["memory_id"]}))["category"] == "knowledge"
    # As left out: list's limit 20, order recent, offset 0; recall's depth 0; memory_recall's limit 5.
    assert (_data(await client.call_tool("list", {"limit": None, "order": None, "offset": None}))
            == _data(await client.call_tool("list", {})))
    assert (_data(await client.call_tool("recall", {"query": "garden", "depth": None, "limit": None}))
            == _data(await client.call_tool("recall", {"query": "garden"})))
    assert (_data(await client.call_tool("memory_recall", {"query": "garden", "limit": None, "depth": None,
                                                           "category": None}))
            == _data(await client.call_tool("memory_recall", {"query": "garden"})))
    # forget's dry_run null is false (its default), erase null too: the memory goes.
    gone = _data(await client.call_tool("forget", {"key": "pots", "dry_run": None, "erase": None, "reason": None}))
    assert gone["count"] == 1 and gone.get("dry_run") is not True, gone
    linked = _data(await client.call_tool("link", {"source_key": "garden", "target": stored["memory_id"],
                                                   "action": None}))
    assert linked["action"] == "link" and linked["changed"] is True, linked


async def _required_nulls_are_refused(client: Client) -> None:
    before = _data(await client.call_tool("list", {"limit": 100}))["count"]
    for tool, args, named in (("remember", {"content": None}, "invalid content: "),
                              ("recall", {"query": None}, "invalid query: "),
                              ("memory_store", {"key": "k", "content": None}, "invalid content: "),
                              ("memory_store", {"key": None, "content": "c"}, "invalid key: "),
                              ("memory_forget", {"key": None}, "invalid key: "),
                              ("memory_link", {"action": None, "from": "garden", "to": "shed"}, "invalid action: "),
                              ("memory_link", {"action": "link", "from": None, "to": "shed"}, "invalid from: ")):
        assert named in _error_text(await client.call_tool(tool, args)), (tool, args)
    assert _data(await client.call_tool("list", {"limit": 100}))["count"] == before  # nothing stored


def test_null_optional_arguments_over_stdio(tmp_path: Path) -> None:
    async def run() -> None:
        async with Client(_stdio(tmp_path, "alice", tools="both")) as client:
            await _nulls_take_the_defaults(client)
            await _required_nulls_are_refused(client)

    asyncio.run(run())


def test_null_optional_arguments_over_http(served: Served) -> None:
    async def run() -> None:
        async with Client(_http(served, served.alice)) as client:
            await _nulls_take_the_defaults(client)
            await _required_nulls_are_refused(client)

    asyncio.run(run())
