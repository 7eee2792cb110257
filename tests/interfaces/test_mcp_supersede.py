"""``supersede`` over MCP with the SDK's client on a real socket: a reversal that would make two
memories supersede each other is refused as a tool error naming the tool, and both stay as they were."""

from __future__ import annotations

import asyncio

from mcp import Client

from tests.interfaces.conftest import Served
from tests.interfaces.test_mcp import _data, _error_text, _http


def test_supersede_cycle_is_refused_and_recall_keeps_the_fact_that_holds(served: Served) -> None:
    async def run() -> None:
        async with Client(_http(served, served.alice)) as client:
            _data(await client.call_tool("remember", {"content": "The team deploys on Tuesdays", "key": "deploy-old"}))
            _data(await client.call_tool("remember", {"content": "The team deploys on Thursdays", "key": "deploy-new"}))
            _data(await client.call_tool("supersede", {"old_key": "deploy-old", "new_key": "deploy-new"}))
            # A model reverting the decision the other way round: each would retire the other.
            text = _error_text(await client.call_tool("supersede", {"old_key": "deploy-new", "new_key": "deploy-old"}))
            assert "invalid supersede" in text and "deploy-old is itself superseded by deploy-new" in text, text
            assert _data(await client.call_tool("get", {"key": "deploy-new"}))["superseded_by"] is None
            hits = _data(await client.call_tool("recall", {"query": "which day does the team deploy"}))["results"]
            assert [h["content"] for h in hits] == ["The team deploys on Thursdays"]
            # Through a third memory too (old -> new -> newest, then newest by old).
            _data(await client.call_tool("remember", {"content": "The team deploys on Fridays", "key": "deploy-newest"}))
            _data(await client.call_tool("supersede", {"old_key": "deploy-new", "new_key": "deploy-newest"}))
            text = _error_text(await client.call_tool("supersede", {"old_key": "deploy-newest", "new_key": "deploy-old"}))
            assert "deploy-old is itself superseded by deploy-newest" in text, text
            hits = _data(await client.call_tool("recall", {"query": "which day does the team deploy"}))["results"]
            assert [h["content"] for h in hits] == ["The team deploys on Fridays"]

    asyncio.run(run())
