"""``engram mcp`` keeps one client's writes in the order it sent them: the SDK runs every request in a
task of its own, so a ``get`` piped right after the ``remember`` that stores it was often answered
first, "memory not found" (``interfaces/mcp/answered.py``)."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

from mcp import Client

from tests.interfaces.test_mcp import _data, _stdio

ROUNDS = 6


def _round(n: int, first_id: int) -> list[dict[str, Any]]:
    """A write, a read of it, then a write that reads the first (a link to it), then a list."""
    calls = [("remember", {"content": f"the blue kettle number {n} sits on the windowsill", "key": f"kettle{n}"}),
             ("get", {"memory_id": f"kettle{n}"}),
             ("remember", {"content": f"the kettle {n} whistles when it boils", "key": f"whistle{n}",
                           "links": [f"kettle{n}"]}),
             ("list", {"limit": 100})]
    return [{"jsonrpc": "2.0", "id": first_id + i, "method": "tools/call", "params": {"name": name, "arguments": args}}
            for i, (name, args) in enumerate(calls)]


def test_requests_piped_at_once_read_what_the_writes_before_them_stored(tmp_path: Path) -> None:
    params = _stdio(tmp_path, "alice")
    lines = [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                 "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "pipe", "version": "0"}}},
             {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    for n in range(ROUNDS):
        lines += _round(n, 1 + 4 * n)
    done = subprocess.run([params.command, *params.args], env=params.env, capture_output=True, timeout=300,
                          input="".join(json.dumps(line) + "\n" for line in lines).encode())
    answers = {answer["id"]: answer["result"] for answer in map(json.loads, done.stdout.decode().splitlines())}
    assert sorted(answers) == list(range(1 + 4 * ROUNDS)), done.stderr.decode()[-2000:]
    for n in range(ROUNDS):
        stored, got, linked, listed = (answers[1 + 4 * n + i] for i in range(4))
        assert not stored.get("isError") and not linked.get("isError"), (stored, linked)
        assert not got.get("isError"), got["content"][0]["text"]
        assert got["structuredContent"]["content"] == f"the blue kettle number {n} sits on the windowsill"
        keys = {memory["key"] for memory in listed["structuredContent"]["memories"]}
        assert {f"kettle{k}" for k in range(n + 1)} | {f"whistle{k}" for k in range(n + 1)} <= keys


def test_the_sdk_client_sending_calls_without_waiting_reads_its_own_writes(tmp_path: Path) -> None:
    # An agent's turn with several tool calls, sent by the official client all at once.
    async def run() -> None:
        async with Client(_stdio(tmp_path, "alice")) as alice:
            calls = []
            for n in range(ROUNDS):
                for request in _round(n, 0):
                    calls.append(asyncio.ensure_future(alice.call_tool(request["params"]["name"],
                                                                       request["params"]["arguments"])))
            results = await asyncio.gather(*calls)
            for n in range(ROUNDS):
                stored, got, linked, listed = (results[4 * n + i] for i in range(4))
                _data(stored)
                assert _data(got)["content"] == f"the blue kettle number {n} sits on the windowsill"
                assert _data(linked)["memory_id"]
                keys = {memory["key"] for memory in _data(listed)["memories"]}
                assert {f"kettle{k}" for k in range(n + 1)} <= keys

    asyncio.run(run())
