"""Answer on the listening socket while ``engram serve`` is still starting.

Importing the web framework and the MCP SDK, opening the store and building the app take seconds
on a busy machine; a supervisor or a client polling ``/healthz`` should see a live process at
once. So the socket is bound first and this small responder answers on it until the real app is
ready: ``/healthz`` gets ``200 {"status": "starting"}`` (the process is alive), ``/readyz`` the
``503`` its ``Readiness`` gives (what is still pending), anything else ``503`` with
``Retry-After: 1``. Then it stops and uvicorn serves the same socket; connections
waiting in the backlog are answered by whichever is running. Plain sockets and ``select`` keep
it free of the imports it is there to wait for.
"""

from __future__ import annotations

import json
import select
import socket
import threading

from engram.interfaces.http.readiness import Readiness

_READ_TIMEOUT_S = 1.0


def _reply(status: str, body: dict[str, object], extra: str = "") -> bytes:
    payload = json.dumps(body).encode()
    head = (f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {len(payload)}\r\n"
            f"{extra}connection: close\r\n\r\n")
    return head.encode() + payload


_HEALTHY = _reply("200 OK", {"status": "starting"})
_NOT_YET = _reply("503 Service Unavailable", {"detail": "engram is starting; retry in a second"}, "retry-after: 1\r\n")


def _ready_reply(readiness: Readiness) -> bytes:
    status, body, headers = readiness.answer()
    return _reply("200 OK" if status == 200 else "503 Service Unavailable", body,
                  "".join(f"{name}: {value}\r\n" for name, value in headers.items()))


def _answer(conn: socket.socket, readiness: Readiness) -> None:
    conn.settimeout(_READ_TIMEOUT_S)
    with conn:
        try:
            request = b""
            while b"\r\n" not in request and len(request) < 8192:
                chunk = conn.recv(1024)
                if not chunk:
                    return
                request += chunk
            parts = request.split(b"\r\n", 1)[0].split()
            path = parts[1].split(b"?", 1)[0] if len(parts) > 1 else b""
            if path == b"/readyz":
                conn.sendall(_ready_reply(readiness))
            else:
                conn.sendall(_HEALTHY if path == b"/healthz" else _NOT_YET)
        except OSError:
            pass  # a client that went away or never spoke: nothing to answer


class StartingResponder:
    """Answers on ``sock`` in a thread from ``start()`` until ``stop()`` (the socket stays open);
    ``/readyz`` from ``readiness`` (by default: the store, not opened yet)."""

    def __init__(self, sock: socket.socket, readiness: Readiness | None = None) -> None:
        self.sock = sock
        self.readiness = readiness or Readiness(["store"])
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="engram-starting", daemon=True)

    def start(self) -> StartingResponder:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _loop(self) -> None:
        while not self._stop.is_set():
            readable, _, _ = select.select([self.sock], [], [], 0.05)
            if not readable or self._stop.is_set():
                continue
            try:
                conn, _ = self.sock.accept()  # readable: a connection is waiting, accept returns at once
            except OSError:
                return  # the socket was closed under us
            _answer(conn, self.readiness)
