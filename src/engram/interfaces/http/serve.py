"""Run the HTTP app with uvicorn on a socket we bind ourselves (so port 0 works and the printed
address is the real one). Used by ``engram serve`` and by tests that need a real server."""

from __future__ import annotations

import socket
import threading
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # uvicorn is imported when the server is made: binding the socket comes first
    import uvicorn


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket; raises ``OSError`` when the address is taken."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named, not left 0: asyncio turns Nagle's algorithm off (TCP_NODELAY) only on
    # connections whose protocol says TCP, and with it on, a keep-alive client waited ~40 ms for
    # each response (Nagle holding the body for the client's delayed ACK of the headers).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def address(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def make_server(app: Any, *, log_level: str = "warning") -> uvicorn.Server:
    import uvicorn

    config = uvicorn.Config(app, log_level=log_level, lifespan="on", timeout_graceful_shutdown=2,
                            access_log=False)
    return uvicorn.Server(config)


class BackgroundServer:
    """uvicorn in a thread on 127.0.0.1:<free port>; ``url`` once started; ``stop()`` ends it."""

    def __init__(self, app: Any, host: str = "127.0.0.1") -> None:
        self.sock = bind(host, 0)
        self.url = address(self.sock)
        self.server = make_server(app)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def start(self, timeout: float = 20.0) -> BackgroundServer:
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the HTTP server did not start")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()
