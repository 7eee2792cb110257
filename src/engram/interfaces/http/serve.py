"""Run the HTTP app with uvicorn on a socket we bind ourselves (so port 0 works and the printed
address is the real one). Used by ``engram serve`` and by tests that need a real server."""

from __future__ import annotations

import gc
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


def freeze_startup_heap() -> None:
    """Put what the server built at start (framework, app, engine, the loaded model's wrapper:
    objects it keeps until it exits) beyond the reach of the garbage collector's full passes.

    A full pass walks every tracked object, and it comes round every few hundred stores as the
    heap grows: ~85,000 objects after start, ~36 ms of CPU each pass on a busy 2-core host, all of
    it revisiting objects that live as long as the process (~0.06-0.09 ms a store under 16 storing
    clients, and a stall of the event loop for every request in flight). Frozen, a pass walks only
    what was made since. Garbage at that moment is collected first; an object frozen is never
    freed, which only matters for one that later becomes unreachable in a cycle: at start, nearly
    nothing does. Call once, after the start-up work (``engram serve`` does once the model is
    loaded), never from code that builds servers repeatedly in one process (tests), where it
    would keep every earlier server's objects alive."""
    gc.collect()
    gc.freeze()


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
