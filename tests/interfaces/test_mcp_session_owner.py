"""An MCP session over streamable HTTP answers only the token that opened it.

A client of the initialize handshake (the SDK's ``mode="legacy"``, and MCP clients before the
2026 revision) gets an ``Mcp-Session-Id`` and sends it with every request. Any token could be
served within any session whose id it held: another agent's token ran tools (as itself) within
it, read its stream and ended it (DELETE) for its owner. Each call acts for the token of the
request that carries it, never for the session's.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from engram.auth import VERIFIED_RECHECK_S, TokenStore
from tests.interfaces.conftest import Served

VERSION = "2025-06-18"  # a handshake-era revision: the one with sessions
SESSION_NOT_FOUND = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Session not found"}}


def _call(ident: int, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}


def _answer(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC message of a POST's answer, as JSON or as the one event of its SSE stream."""
    if response.headers["content-type"].startswith("text/event-stream"):
        return json.loads(next(line[5:] for line in response.text.splitlines() if line.startswith("data:")))
    return response.json()


def _raw(served: Served, token: str, **headers: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=served.url, timeout=30, headers={
        "Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream", **headers})


def _http_keeping_sessions(token: str) -> tuple[httpx.AsyncClient, list[str]]:
    """An HTTP client for the SDK's ``streamable_http_client`` sending ``token``, and the list it
    fills with each ``Mcp-Session-Id`` the server hands out (the SDK client does not expose it)."""
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    sessions: list[str] = []

    async def keep_session(response: Any) -> None:
        if "mcp-session-id" in response.headers:
            sessions.append(response.headers["mcp-session-id"])

    http.event_hooks["response"].append(keep_session)
    return http, sessions


def test_a_session_answers_only_the_token_that_opened_it(served: Served) -> None:
    alice_again, _ = served.tokens.create("alice", "second")  # the same agent's other token is another token

    async def run() -> None:
        http, sessions = _http_keeping_sessions(served.alice)
        async with Client(streamable_http_client(f"{served.url}/mcp", http_client=http), mode="legacy") as alice:
            stored = json.loads((await alice.call_tool("remember", {"content": "alice keeps the tulip bulbs in the shed"}))
                                .content[0].text)
            assert sessions, "the handshake gave no Mcp-Session-Id"
            session = {"Mcp-Session-Id": sessions[0], "MCP-Protocol-Version": VERSION}
            for other in (served.bob, alice_again):
                async with _raw(served, other, **session) as intruder:
                    for ident, (tool, arguments) in enumerate([
                            ("recall", {"query": "tulip bulbs"}), ("get", {"memory_id": stored["memory_id"]}),
                            ("remember", {"content": "written into another's session"}),
                            ("forget", {"memory_id": stored["memory_id"]})], start=10):
                        refused = await intruder.post("/mcp", json=_call(ident, tool, arguments))
                        assert (refused.status_code, refused.json()) == (404, SESSION_NOT_FOUND), tool
                    assert (await intruder.post("/mcp", json={"jsonrpc": "2.0", "id": 20, "method": "ping"})).status_code == 404
                    # The session's stream (server-to-client messages) and its end are its owner's too.
                    assert (await intruder.get("/mcp")).status_code == 404
                    assert (await intruder.delete("/mcp")).status_code == 404
                    # The same answer as for a session that does not exist: whether it does is not told.
                    unknown = await intruder.post("/mcp", json=_call(21, "recall", {"query": "x"}),
                                                  headers={"Mcp-Session-Id": "0" * 32})
                    assert (unknown.status_code, unknown.json()) == (404, SESSION_NOT_FOUND)
            # The owner's session goes on, untouched.
            found = json.loads((await alice.call_tool("recall", {"query": "tulip bulbs shed"})).content[0].text)
            assert [r["memory_id"] for r in found["results"]] == [stored["memory_id"]]

    asyncio.run(run())
    assert [m.content for m in served.engram.for_agent("alice").list()] == ["alice keeps the tulip bulbs in the shed"]
    assert served.engram.for_agent("bob").list() == []


def test_each_call_acts_for_its_own_requests_caller(served: Served) -> None:
    # One session of alice's token: each request's own X-Engram-Session (read with its token at
    # each request) decides where its call acts, not what the request that opened the session named.
    async def run() -> list[str]:
        async with _raw(served, served.alice) as alice:
            opened = await alice.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
            assert opened.status_code == 200, opened.text
            session = {"Mcp-Session-Id": opened.headers["mcp-session-id"], "MCP-Protocol-Version": VERSION}
            assert (await alice.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                                     headers=session)).status_code == 202
            ids = []
            for ident, named in enumerate(["s1", "s2", None], start=2):
                headers = {**session, **({"X-Engram-Session": named} if named else {})}
                answer = _answer(await alice.post("/mcp", headers=headers, json=_call(
                    ident, "remember", {"content": f"note made in {named}", "scope": "session" if named else "agent"})))
                assert not answer["result"]["isError"], answer
                ids.append(answer["result"]["structuredContent"]["memory_id"])
            return ids

    ids = asyncio.run(run())
    alice = served.engram.for_agent("alice")
    assert [str(alice.get(memory_id).scope) for memory_id in ids] == ["session:alice/s1", "session:alice/s2", "agent:alice"]


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


def test_revoking_a_token_ends_the_sessions_it_opened_and_their_streams(served: Served) -> None:
    """A revoked token is refused on its next request; the sessions it opened end too, within about
    a second (``auth.end_revoked_sessions``), their GET streams (server-to-client messages)
    included: before, a stream stayed open until the client left or ``server.mcp_session_idle_s``
    (30 minutes) ran out. Revoked as ``engram token revoke`` does, from another store of the same
    database (another process); another token's session goes on."""

    async def open_session(token: str) -> dict[str, str]:
        async with _raw(served, token) as client:
            opened = await client.post("/mcp", json=INITIALIZE)
            assert opened.status_code == 200, opened.text
            session = {"Mcp-Session-Id": opened.headers["mcp-session-id"], "MCP-Protocol-Version": VERSION}
            done = await client.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                                     headers=session)
            assert done.status_code == 202, done.text
        return session

    async def until_closed(stream: httpx.Response) -> None:
        async for _ in stream.aiter_bytes():
            pass

    async def run() -> None:
        alices, bobs = await open_session(served.alice), await open_session(served.bob)
        async with _raw(served, served.alice, **alices) as alice, _raw(served, served.bob, **bobs) as bob:
            async with alice.stream("GET", "/mcp") as stream:
                assert stream.status_code == 200 and stream.headers["content-type"].startswith("text/event-stream")
                elsewhere = TokenStore.open(served.db_path)
                try:
                    await asyncio.to_thread(elsewhere.revoke, served.alice)
                finally:
                    elsewhere.close()
                revoked = asyncio.get_running_loop().time()
                await asyncio.wait_for(until_closed(stream), timeout=10)  # ended by the server, not left open
                assert asyncio.get_running_loop().time() - revoked < 5
            ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
            # Refused: 404 "Session not found" while the server's last check of the token is under a
            # second old (``VERIFIED_RECHECK_S``), then 401.
            assert (await alice.post("/mcp", json=ping)).status_code in (401, 404)
            await asyncio.sleep(VERIFIED_RECHECK_S)
            assert (await alice.post("/mcp", json=ping)).status_code == 401
            # Bob's session, opened by a live token, is untouched.
            assert _answer(await bob.post("/mcp", json=ping))["result"] == {}
            async with bob.stream("GET", "/mcp") as kept:
                assert kept.status_code == 200

    asyncio.run(run())


class _Transport:
    """A session's transport as the SDK's manager holds it; ``fails``: its streams cannot be closed."""

    def __init__(self, fails: bool) -> None:
        self.fails, self.terminated = fails, False

    async def terminate(self) -> None:
        if self.fails:
            raise RuntimeError("stream already broken")
        self.terminated = True


class _Manager:
    """The two tables of the SDK's session manager ``end_revoked_sessions`` reads (mcp 2.x's)."""

    def __init__(self, owners: dict[str, Any], transports: dict[str, _Transport]) -> None:
        self._session_owners, self._server_instances = owners, transports


def test_one_session_that_cannot_be_closed_does_not_stop_the_others_from_ending(tmp_path: Any) -> None:
    # The watch runs for the server's life: a transport failing to close (a fault injected here; the
    # SDK's real one is hard to break on purpose) used to end the watch, so later revokes ended nothing.
    from engram.interfaces.http.auth import end_revoked_sessions

    tokens = TokenStore.open(tmp_path / "memory.db")
    try:
        _, alice = tokens.create("alice")
        _, bob = tokens.create("bob")
        broken, fine = _Transport(fails=True), _Transport(fails=False)
        manager = _Manager({"s1": {"client_id": alice.id}, "s2": {"client_id": bob.id}}, {"s1": broken, "s2": fine})
        tokens.revoke(alice.id)

        async def watch() -> None:
            task = asyncio.create_task(end_revoked_sessions(manager, tokens, every=0.05))
            await asyncio.sleep(0.3)
            assert "s1" not in manager._session_owners and not task.done()  # alice's ended, the watch goes on
            tokens.revoke(bob.id)
            for _ in range(100):
                if fine.terminated:
                    break
                await asyncio.sleep(0.05)
            task.cancel()

        asyncio.run(watch())
        assert fine.terminated and manager._session_owners == {} and manager._server_instances == {}
    finally:
        tokens.close()


def _session_manager(app: Any) -> Any:
    """The SDK's session manager behind the app's /mcp route (McpAuth → RefusingRepeatedNames →
    StreamableHTTPASGIApp), whose tables the server's watch keeps."""
    [route] = [r for r in app.router.routes if getattr(r, "path", None) == "/mcp"]
    return route.endpoint.app.app.session_manager


def test_a_session_its_client_ended_is_forgotten_by_the_server(tmp_path: Any) -> None:
    """A client ending its session (DELETE, as the SDK's client does on leaving) left the session's
    entry in both of the SDK manager's tables for the server's life: its closed transport and its
    owner, one of each per session ever ended so; and the watch of revoked tokens, which runs
    while any session has an owner, read the tokens every second from then on. The watch now drops
    the sessions the SDK has terminated, within about a second. Real sockets, the official client."""
    from engram.engine import Engram
    from engram.interfaces.http.app import create_app
    from engram.interfaces.http.serve import BackgroundServer
    from engram.interfaces.settings import ServerSettings

    db_path = tmp_path / "memory.db"
    engram = Engram.from_settings(home=tmp_path, path=db_path, embeddings={"provider": "none"}, files={"enabled": False})
    tokens = TokenStore.open(db_path)
    alice, _ = tokens.create("alice", "test")
    app = create_app(engram, tokens, ServerSettings(mcp_tools="both"))
    manager = _session_manager(app)
    server = BackgroundServer(app).start()

    async def session_of_a_client(leaving: str) -> str:
        http, sessions = _http_keeping_sessions(alice)
        async with Client(streamable_http_client(f"{server.url}/mcp", http_client=http), mode="legacy") as client:
            stored = json.loads((await client.call_tool("remember", {"content": f"a note {leaving}"})).content[0].text)
            assert stored["memory_id"] and sessions and sessions[0] in manager._session_owners
        return sessions[0]  # the client has sent its DELETE

    async def run() -> None:
        ended = [await session_of_a_client("left"), await session_of_a_client("left too")]
        async with _raw_to(server.url, alice) as open_one:  # a session still open is kept
            opened = await open_one.post("/mcp", json=INITIALIZE)
            kept = opened.headers["mcp-session-id"]
            for _ in range(60):
                if not set(ended) & (set(manager._session_owners) | set(manager._server_instances)):
                    break
                await asyncio.sleep(0.1)
            assert not set(ended) & set(manager._session_owners), manager._session_owners
            assert not set(ended) & set(manager._server_instances), manager._server_instances
            assert kept in manager._session_owners and kept in manager._server_instances
            # A request naming an ended session is answered as one that never was.
            gone = await open_one.post("/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "ping"},
                                       headers={"Mcp-Session-Id": ended[0], "MCP-Protocol-Version": VERSION})
            assert (gone.status_code, gone.json()) == (404, SESSION_NOT_FOUND)
            session = {"Mcp-Session-Id": kept, "MCP-Protocol-Version": VERSION}
            assert (await open_one.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                                        headers=session)).status_code == 202
            assert _answer(await open_one.post("/mcp", json={"jsonrpc": "2.0", "id": 3, "method": "ping"},
                                               headers=session))["result"] == {}

    try:
        asyncio.run(run())
    finally:
        server.stop()
        tokens.close()
        engram.close()


def _raw_to(url: str, token: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=url, timeout=30, headers={
        "Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"})
