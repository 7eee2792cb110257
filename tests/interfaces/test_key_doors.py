"""A key that equals another memory's id still names its own memory when given as a key: ``engram
get/update/forget --key`` (the CLI as a real process) and MCP's ``key`` argument of get, update and
forget (the SDK's client over streamable HTTP) always read a key, as HTTP's ``/by-key?key=`` and
``Engram.get_by_key`` do, while a bare ref keeps reading an id first. Another agent reaches none of it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from mcp import Client

from tests.interfaces.conftest import Served
from tests.interfaces.test_mcp import _data, _error_text, _http
from tests.unit.test_cli import engram


def _json(home: Path, *args: str, agent: str = "alice") -> dict:
    done = engram(home, "--agent", agent, "--json", *args)
    assert done.returncode == 0, (args, done.stderr)
    return json.loads(done.stdout)


def test_cli_key_option_always_reads_a_key(isolated_home: Path) -> None:
    first = _json(isolated_home, "remember", "the first", "--key", "first")["memory"]["id"]
    shadow = _json(isolated_home, "remember", "named after an id", "--key", first)["memory"]["id"]
    bobs = _json(isolated_home, "remember", "bob's own", "--key", first, agent="bob")["memory"]["id"]

    assert _json(isolated_home, "get", first)["id"] == first  # a bare ref is an id first
    assert _json(isolated_home, "get", "--key", first)["id"] == shadow
    assert _json(isolated_home, "get", "--key", first, agent="bob")["id"] == bobs  # never alice's
    changed = _json(isolated_home, "update", "--key", first, "--content", "renamed shadow")["memory"]
    assert changed["id"] == shadow and _json(isolated_home, "get", first)["content"] == "the first"
    both = engram(isolated_home, "get", first, "--key", first)
    assert both.returncode == 2 and "exactly one of ref, --key" in both.stderr, both.stderr
    for command in (("get",), ("update", "--content", "x"), ("forget",)):
        missing = engram(isolated_home, *command, "--key", "no-such-key")
        assert missing.returncode == 3 and "no-such-key" in missing.stderr, (command, missing.stderr)
    dry = _json(isolated_home, "forget", "--key", first, "--dry-run")
    assert [m["id"] for m in dry["removed"]] == [shadow]
    assert [m["id"] for m in _json(isolated_home, "forget", "--key", first, agent="bob")["removed"]] == [bobs]
    assert [m["id"] for m in _json(isolated_home, "forget", "--key", first)["removed"]] == [shadow]
    assert _json(isolated_home, "get", first)["content"] == "the first"  # the id's own memory stays
    assert engram(isolated_home, "get", "--key", first).returncode == 3


def test_mcp_key_argument_always_reads_a_key(served: Served) -> None:
    async def run() -> None:
        async with Client(_http(served, served.alice)) as alice, Client(_http(served, served.bob)) as bob:
            first = _data(await alice.call_tool("remember", {"content": "the first", "key": "first"}))["memory_id"]
            shadow = _data(await alice.call_tool("remember", {"content": "named after an id", "key": first}))["memory_id"]

            assert _data(await alice.call_tool("get", {"memory_id": first}))["id"] == first
            assert _data(await alice.call_tool("get", {"key": first}))["id"] == shadow
            changed = _data(await alice.call_tool("update", {"key": first, "content": "renamed shadow"}))
            assert changed["memory_id"] == shadow
            assert _data(await alice.call_tool("get", {"memory_id": first}))["content"] == "the first"
            for tool, args in (("get", {"memory_id": first, "key": first}), ("get", {}),
                               ("update", {"memory_id": first, "key": first, "content": "x"})):
                text = _error_text(await alice.call_tool(tool, args))
                assert f"invalid {tool}:" in text and "exactly one of memory_id, key" in text, text
            # bob sees neither: a key he does not hold is not found, whatever alice stored under it.
            for tool, args in (("get", {"key": first}), ("update", {"key": first, "content": "hijacked"}),
                               ("forget", {"key": first, "reason": "mine now"})):
                assert "not found" in _error_text(await bob.call_tool(tool, args)), tool
            dry = _data(await alice.call_tool("forget", {"key": first, "dry_run": True}))
            assert dry["forgotten"] == [shadow] and dry["dry_run"]
            assert _data(await alice.call_tool("forget", {"key": first, "reason": "test"}))["forgotten"] == [shadow]
            assert _data(await alice.call_tool("get", {"memory_id": first}))["content"] == "the first"

    asyncio.run(run())
    assert served.engram.for_agent("alice").get_by_key("first").content == "the first"
