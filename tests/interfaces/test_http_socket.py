"""The listening socket engram serves HTTP on: every connection it accepts must have Nagle's
algorithm off, or a keep-alive client waits for its delayed ACK (~40 ms) on each response."""

from __future__ import annotations

import asyncio
import socket

from engram.interfaces.http.serve import bind


def test_connections_accepted_by_the_event_loop_have_nodelay() -> None:
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

    assert asyncio.run(accept_one()) != 0
