"""MCP tool arguments a model gets wrong: the error names the argument by the tool's own name and
says what is allowed (never a bare "Error executing tool", never a silently ignored key), over
stdio and over streamable HTTP, with the SDK's own client."""

from __future__ import annotations

import asyncio
from pathlib import Path

from mcp import Client

from tests.interfaces.conftest import Served
from tests.interfaces.test_mcp import _data, _error_text, _http, _stdio

FILTER_KEYS = ("tags", "session_id", "category", "type")


async def _recall_filters_are_checked(client: Client) -> None:
    _data(await client.call_tool("remember", {"content": "The user writes Python every day", "tags": ["lang"]}))
    for filters, field in (({"session_id": 5}, "filters.session_id"), ({"category": 7}, "filters.category"),
                           ({"type": 5}, "filters.type"), ({"tags": "lang"}, "filters.tags")):
        text = _error_text(await client.call_tool("recall", {"query": "python", "filters": filters}))
        assert field in text, (filters, text)
    text = _error_text(await client.call_tool("recall", {"query": "python", "filters": {"category": "facts"}}))
    # The library's words for the value (spelt as JSON), not pydantic's "Input should be 'core', ...".
    assert text == ('Error executing tool recall: invalid filters.category: unknown category "facts" '
                    "(allowed: core, knowledge, conversation)"), text
    # A misspelt key is refused, not ignored (it used to return unfiltered hits).
    text = _error_text(await client.call_tool("recall", {"query": "python", "filters": {"tag": ["nomatch"]}}))
    assert '"tag"' in text and all(k in text for k in FILTER_KEYS), text
    # In engram's words, as the SDK's own refusals are: no pydantic "Value error, " before them.
    assert text == ('Error executing tool recall: invalid filters: unknown filter "tag" '
                    "(allowed: tags, session_id, category, type)"), text
    # The tool's schema tells a client the keys before it guesses.
    schema = next(t for t in (await client.list_tools()).tools if t.name == "recall").input_schema
    assert "filters" in schema["properties"] and "$defs" in schema
    found = _data(await client.call_tool("recall", {"query": "python", "filters": {"tags": ["lang"],
                                                                                   "category": "knowledge"}}))
    assert [r["content"] for r in found["results"]] == ["The user writes Python every day"]
    assert _data(await client.call_tool("recall", {"query": "python", "filters": {"tags": ["nomatch"]}}))[
        "results"] == []


async def _forget_names_its_own_arguments(client: Client) -> None:
    # The engine's selectors are ref / older_than_s; the tool's are memory_id / older_than_days.
    for args, got in (({}, "got no selector"), ({"memory_id": "lang", "query": "python"}, "got memory_id, query"),
                      ({"tag": "x", "older_than_days": 3}, "got tag, older_than_days")):
        text = _error_text(await client.call_tool("forget", args))
        assert got in text and "exactly one of memory_id, key, query, tag, older_than_days" in text, text
        assert "ref" not in text and "older_than_s" not in text, text
    assert _data(await client.call_tool("forget", {"older_than_days": 0, "dry_run": True}))["dry_run"]


async def _true_is_no_importance(client: Client) -> None:
    # As at the HTTP door and in the library: true is not read as 1.0.
    text = _error_text(await client.call_tool("remember", {"content": "an odd importance", "importance": True}))
    assert "importance" in text, text
    assert _data(await client.call_tool("remember", {"content": "an int importance", "importance": 1}))


async def _unknown_arguments_are_refused(client: Client) -> None:
    # The SDK dropped them: metadata sent to remember was lost while the call said "created".
    text = _error_text(await client.call_tool("remember", {"content": "kept with its metadata?",
                                                           "metadata": {"source": "chat"}}))
    assert "invalid metadata: is not an argument of remember" in text and "context" in text, text
    text = _error_text(await client.call_tool("recall", {"query": "metadata", "tag": "x"}))
    assert "invalid tag: is not an argument of recall" in text and "filters" in text, text
    # Sent as null too: it was dropped with the nulls that mean "not given", and the call succeeded.
    text = _error_text(await client.call_tool("remember", {"content": "kept without its tagz?", "tagz": None}))
    assert "invalid tagz: is not an argument of remember" in text and "tags" in text, text
    listed = _data(await client.call_tool("list", {"limit": 100}))["memories"]
    assert all(m["content"] not in ("kept with its metadata?", "kept without its tagz?") for m in listed), listed


async def _null_text_is_text(client: Client) -> None:
    # The SDK read the text "null" of a non-text argument as JSON's null, "not given": list's category
    # "null" listed every category and remember's scope "null" stored in the default scope, where the
    # CLI and HTTP refuse "null". It is validated as the text sent, refused naming the argument.
    _data(await client.call_tool("remember", {"content": "The user keeps bees", "category": "core"}))
    _data(await client.call_tool("remember", {"content": "The user read a novel", "category": "knowledge"}))
    refusals = (("list", {"category": "null"},
                 'invalid category: unknown category "null" (allowed: core, knowledge, conversation)'),
                ("remember", {"content": "where does this go?", "scope": "null"},
                 'invalid scope: unknown scope "null" (allowed: '),
                ("recall", {"query": "bees", "filters": "null"}, "invalid filters: "),
                ("forget", {"older_than_days": "null", "dry_run": True}, "invalid older_than_days: "),
                # A whole number out of its range names the range, as the library and CLI do.
                ("list", {"limit": 0}, "invalid limit: 0 is out of range (allowed: 1 to 1000)"),
                ("list", {"offset": -1}, "invalid offset: -1 is out of range (allowed: 0 to 1000000000)"),
                ("recall", {"query": "bees", "limit": 101}, "invalid limit: 101 is out of range (allowed: 1 to 100)"),
                ("recall", {"query": "bees", "depth": 4}, "invalid depth: 4 is out of range (allowed: 0 to 3)"))
    for tool, args, said in refusals:
        assert said in _error_text(await client.call_tool(tool, args)), (tool, args)
    listed = [m["content"] for m in _data(await client.call_tool("list", {"limit": 100}))["memories"]]
    assert "where does this go?" not in listed and "The user read a novel" in listed  # nothing stored
    # A JSON null is still "not given"; a list sent as JSON text is still read as the list.
    unfiltered = _data(await client.call_tool("list", {"limit": 100, "category": None}))["memories"]
    assert [m["content"] for m in unfiltered] == listed
    assert [m["content"] for m in _data(await client.call_tool("list", {"category": "core"}))["memories"]] == [
        "The user keeps bees"]
    stored = _data(await client.call_tool("remember", {"content": "The user hikes", "scope": None, "tags": '["x"]'}))
    got = _data(await client.call_tool("get", {"memory_id": stored["memory_id"]}))
    assert got["tags"] == ["x"] and got["scope"] == "agent:alice", got


def test_arguments_over_stdio(tmp_path: Path) -> None:
    async def run() -> None:
        async with Client(_stdio(tmp_path, "alice", tools=None)) as client:
            await _recall_filters_are_checked(client)
            await _forget_names_its_own_arguments(client)
            await _true_is_no_importance(client)
            await _unknown_arguments_are_refused(client)
            await _null_text_is_text(client)

    asyncio.run(run())


def test_arguments_over_http(served: Served) -> None:
    async def run() -> None:
        async with Client(_http(served, served.alice)) as client:
            await _recall_filters_are_checked(client)
            await _forget_names_its_own_arguments(client)
            await _true_is_no_importance(client)
            await _unknown_arguments_are_refused(client)
            await _null_text_is_text(client)

    asyncio.run(run())


def test_every_argument_of_every_tool_is_described(tmp_path: Path) -> None:
    # A model reads only the schema: an argument without a description (memory_recall's depth,
    # link's action) left it guessing what a value does or what the default is.
    async def run() -> dict[str, list[str]]:
        async with Client(_stdio(tmp_path, "alice", tools="both")) as client:
            return {tool.name: [name for name, spec in tool.input_schema["properties"].items()
                                if not spec.get("description")]
                    for tool in (await client.list_tools()).tools}

    bare = asyncio.run(run())
    assert len(bare) == 14 and not any(bare.values()), bare
