"""ClawCode's and PtrClaw's MCP shapes as their documents write them, with the SDK's own client over
a real ``engram mcp`` subprocess: ``remember``'s ``context`` (session, timestamp, other keys),
``recall.limit`` as the default ``limit``, and PtrClaw's ``memory_recall`` links as keys."""

from __future__ import annotations

import asyncio

from mcp import Client

from tests.interfaces.conftest import Served
from tests.interfaces.test_mcp import _data, _http


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
