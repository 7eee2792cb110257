"""An update by key keeps the tags and metadata it was not given, and given ones replace them -
the same at every door: the library, the ``engram`` command, HTTP over a socket, MCP with the SDK client."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from mcp import Client

from tests.interfaces.conftest import Served
from tests.interfaces.test_mcp import _data, _http
from tests.unit.test_cli import engram


def test_cli_update_without_tags_keeps_them_and_given_tags_replace(isolated_home: Path) -> None:
    assert engram(isolated_home, "remember", "User prefers Python", "--key", "lang", "--tags", "prefs,code").returncode == 0
    assert engram(isolated_home, "remember", "User prefers Go", "--key", "lang").returncode == 0
    got = json.loads(engram(isolated_home, "--json", "get", "lang").stdout)
    assert got["content"] == "User prefers Go" and got["tags"] == ["prefs", "code"]
    assert engram(isolated_home, "remember", "User prefers Rust", "--key", "lang", "--tags", "lang").returncode == 0
    assert json.loads(engram(isolated_home, "--json", "get", "lang").stdout)["tags"] == ["lang"]


def test_http_and_mcp_updates_treat_tags_the_same(served: Served) -> None:
    with served.client(served.alice) as c:
        c.post("/api/v1/memory", json={"content": "Deploys go out on Fridays", "key": "deploy",
                                       "tags": ["ops"], "metadata": {"team": "infra"}})
        c.post("/api/v1/memory", json={"content": "Deploys go out on Thursdays", "key": "deploy"})
        kept = c.get("/api/v1/memory/deploy").json()
        assert kept["content"] == "Deploys go out on Thursdays"
        assert kept["tags"] == ["ops"] and kept["metadata"] == {"team": "infra"}
        c.post("/api/v1/memory", json={"content": "Deploys go out on Wednesdays", "key": "deploy", "tags": []})
        assert c.get("/api/v1/memory/deploy").json()["tags"] == []

    async def run() -> None:
        async with Client(_http(served, served.alice)) as alice:
            _data(await alice.call_tool("remember", {"content": "The cat is called Tom", "key": "cat", "tags": ["pets"]}))
            _data(await alice.call_tool("remember", {"content": "The cat is called Tim", "key": "cat"}))
            assert _data(await alice.call_tool("get", {"memory_id": "cat"}))["tags"] == ["pets"]

    asyncio.run(run())
    lib = served.engram.for_agent("alice")
    lib.remember("The cat is called Tam", key="cat")
    assert lib.get("cat").tags == ("pets",) and lib.get("cat").content == "The cat is called Tam"
