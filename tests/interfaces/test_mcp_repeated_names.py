"""A JSON-RPC message naming one field twice in an object is refused at both MCP transports with a
parse error naming the field, and nothing is stored: the SDK's reader kept the last value, so
``{"content": "a", "content": "b"}`` stored "b" without a word, while the HTTP API refuses such a
body. Raw clients (the SDK's own client never writes a repeated name): JSON-RPC lines on a real
``engram mcp`` process's stdin, and POSTs to a real server's ``/mcp``."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import mcp_types as types

from engram.engine import Engram
from tests.interfaces.conftest import serving
from tests.interfaces.test_mcp_numbers import RawClient

SAID = 'Parse error: the name "content" is given twice in one object (allowed: each name once per object)'
CALL = '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "remember", "arguments": %s}}'
# A call whose request metadata is given: names nested deeper than the arguments.
CALL_META = '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "remember", "arguments": %s, "_meta": %s}}'


def _answer(client: RawClient, line: str) -> dict:
    """The server's answer to ``line``, waited for at most a minute (a server that stopped reading or
    answering fails the test instead of hanging it)."""
    client._send(line)
    assert client.process.stdout is not None
    with ThreadPoolExecutor(1) as pool:
        read = pool.submit(client.process.stdout.readline)
        try:
            return json.loads(read.result(timeout=60))
        except TimeoutError:
            client.process.kill()  # (so the reading thread ends too)
            raise AssertionError(f"no answer to {line[:200]!r} within 60 s") from None


def test_stdio_refuses_a_repeated_argument_naming_it_and_stores_nothing(tmp_path: Path) -> None:
    client = RawClient(tmp_path)
    try:
        refused = _answer(client, CALL % '{"content": "a", "content": "b"}')
        assert refused == {"jsonrpc": "2.0", "id": 7, "error": {"code": -32700, "message": SAID}}, refused
        # A notification naming a field twice gets no answer; the next request is answered as usual.
        client._send('{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"a": 1, "a": 2}}')
        nested = _answer(client, CALL_META % ('{"content": "x"}', '{"k": 1, "k": 2}'))
        assert nested["id"] == 7 and '"k" is given twice' in nested["error"]["message"], nested
        # A response (the client answering the server) naming a field twice is not answered either, as
        # JSON-RPC says of responses (review: it got an error back); nor is a line nested past Python's
        # recursion limit fatal (review: RecursionError ended the server): it is refused, the server goes on.
        client._send('{"jsonrpc": "2.0", "id": "srv-1", "result": {"a": 1, "a": 2}}')
        deep = _answer(client, '{"jsonrpc": "2.0", "id": 21, "method": "ping", "params": ' + "[" * 100_000
                       + "]" * 100_000 + "}")
        assert deep["id"] in (21, None) and deep["error"]["code"] == -32700, str(deep)[:500]
        # The same name in different objects is no repeat.
        stored = _answer(client, CALL_META % ('{"content": "kept"}', '{"name": {"name": 1}, "content": 2}'))
        assert stored["id"] == 7 and stored["result"].get("isError") is not True, stored
    finally:
        client.close()
    with Engram.from_settings(home=tmp_path, embeddings={"provider": "none"}) as mem:
        assert [m.content for m in mem.for_agent("alice").visible_memories()] == ["kept"]


def test_http_mcp_refuses_a_repeated_argument_naming_it_and_stores_nothing(tmp_path: Path) -> None:
    with serving(tmp_path, embeddings={"provider": "none"}) as served:
        headers = {"Authorization": f"Bearer {served.alice}", "Accept": "application/json, text/event-stream",
                   "Content-Type": "application/json"}
        with httpx.Client(base_url=served.url, headers=headers, timeout=30) as http:
            opened = http.post("/mcp", content='{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": '
                               '{"protocolVersion": "2025-06-18", "capabilities": {}, '
                               '"clientInfo": {"name": "raw", "version": "1"}}}')
            assert opened.status_code == 200, opened.text
            http.headers["mcp-session-id"] = opened.headers["mcp-session-id"]
            assert http.post("/mcp", content='{"jsonrpc": "2.0", "method": "notifications/initialized"}').status_code == 202

            refused = http.post("/mcp", content=CALL % '{"content": "a", "content": "b"}')
            assert refused.status_code == 400, refused.text
            assert refused.json() == {"jsonrpc": "2.0", "id": 7, "error": {"code": -32700, "message": SAID}}

            # An id given twice cannot be told: the answer's id is null, written out, as JSON-RPC asks and
            # the SDK's client reads it (review: the id was left out, and the SDK's reader refused the answer).
            unknown = http.post("/mcp", content='{"jsonrpc": "2.0", "id": 8, "id": 9, "method": "ping"}')
            assert unknown.status_code == 400 and unknown.json()["id"] is None and '"id":null' in unknown.text.replace(
                " ", ""), unknown.text
            assert types.jsonrpc_message_adapter.validate_json(unknown.content)

            stored = http.post("/mcp", content=CALL % '{"content": "kept"}')
            assert stored.status_code == 200 and '"isError":false' in stored.text.replace(" ", ""), stored.text
        assert [m.content for m in served.engram.for_agent("alice").visible_memories()] == ["kept"]
