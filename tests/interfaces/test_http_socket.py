"""The listening socket engram serves HTTP on: every connection it accepts must have Nagle's
algorithm off, or a keep-alive client waits for its delayed ACK (~40 ms) on each response. And
the server runs on uvicorn's fast parts (httptools, uvloop), which the server extra installs."""

from __future__ import annotations

import asyncio
import json
import socket
import urllib.request
from collections.abc import Callable
from typing import Any

import pytest
import uvloop

from engram.interfaces.http.serve import BackgroundServer, bind

LOOPS: dict[str, Callable[[], asyncio.AbstractEventLoop]] = {
    "asyncio": asyncio.new_event_loop, "uvloop": uvloop.new_event_loop}


def test_the_server_parses_http_with_httptools_on_uvloop() -> None:
    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = json.dumps({"loop": type(asyncio.get_running_loop()).__module__}).encode()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body})

    server = BackgroundServer(app).start()
    try:
        with urllib.request.urlopen(server.url + "/", timeout=20) as response:
            answer = json.load(response)
        assert server.server.config.http_protocol_class.__name__ == "HttpToolsProtocol"
        assert answer["loop"].startswith("uvloop"), answer
    finally:
        server.stop()


@pytest.mark.parametrize("loop", sorted(LOOPS))
def test_connections_accepted_by_the_event_loop_have_nodelay(loop: str) -> None:
    # uvicorn serves our socket through asyncio's create_server, which sets TCP_NODELAY only on
    # sockets whose protocol is TCP: checked here through the same mechanism, on a real connection.
    async def accept_one() -> int:
        seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        class Record(asyncio.Protocol):
            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                sock = transport.get_extra_info("socket")
                seen.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
                transport.close()

        listener = bind("127.0.0.1", 0)
        server = await asyncio.get_running_loop().create_server(Record, sock=listener)
        try:
            _reader, writer = await asyncio.open_connection(*listener.getsockname()[:2])
            flag = await asyncio.wait_for(seen, 10)
            writer.close()
            return flag
        finally:
            server.close()
            await server.wait_closed()

    with asyncio.Runner(loop_factory=LOOPS[loop]) as runner:
        assert runner.run(accept_one()) != 0
