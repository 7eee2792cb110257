"""Request size limit as plain ASGI middleware: refuses a declared Content-Length over the limit
before the app reads it, and stops a chunked body as soon as it passes the limit.

A refused body is still read off the socket (and dropped) before the 413 completes, up to
``DRAIN_BYTES``: a server that closes a connection with unread data in its receive buffer makes
the kernel send a reset, and a client still sending its body then sees "connection reset" instead
of the 413 (the "lingering close" web servers do). Past that much, the connection is closed."""

from __future__ import annotations

import json
from typing import Any

Scope = dict[str, Any]

# How much of a refused body is read and dropped so that the client receives its 413.
DRAIN_BYTES = 64 * 1024 * 1024


# The setting a 413 names, so the person who meets the limit knows what raises it (it is not fixed).
SETTING = "server.max_body_bytes (ENGRAM_SERVER__MAX_BODY_BYTES)"


def _problem(limit: int) -> bytes:
    return json.dumps({"type": "https://engram.dev/problems/too-large", "title": "Request too large",
                       "status": 413,
                       "detail": f"the request body is larger than this server's limit of {limit:,} bytes, "
                                 f"set by {SETTING}",
                       "field": "body", "allowed": f"up to {limit:,} bytes (the server's {SETTING} raises it)",
                       "limit": limit}).encode()


class BodyLimit:
    def __init__(self, app: Any, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            # A client that sent "Expect: 100-continue" holds its body back until asked: reading
            # would ask for it, so it is answered at once.
            waiting = b"100-continue" in headers.get(b"expect", b"").lower()
            await self._refuse(receive, send, rest="held back" if waiting else "coming")
            return
        seen = 0
        state = {"started": False, "refused": False}

        async def limited_receive() -> Any:
            nonlocal seen
            if state["refused"]:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    # Answer 413 now and tell the app the client went away, so it stops reading.
                    if not state["started"]:
                        state["refused"] = True
                        await self._refuse(receive, send, rest="coming" if message.get("more_body") else "read")
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message: Any) -> None:
            if state["refused"]:
                return  # the 413 has been sent; whatever the app says now is dropped
            if message["type"] == "http.response.start":
                state["started"] = True
            await send(message)

        await self.app(scope, limited_receive, guarded_send)

    async def _refuse(self, receive: Any, send: Any, *, rest: str) -> None:
        """Send the 413. ``rest`` is where the rest of the body is: "read" already, "coming"
        (read it off first), or "held back" by the client (never asked for)."""
        reusable = rest == "read" or (rest == "coming" and await _drain(receive))
        body = _problem(self.max_bytes)
        headers = [(b"content-type", b"application/problem+json"), (b"content-length", str(len(body)).encode())]
        if not reusable:  # part of the body was never read: the connection cannot carry another request
            headers.append((b"connection", b"close"))
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": body})


async def _drain(receive: Any) -> bool:
    """Read and drop the rest of a request body; True when all of it was read."""
    dropped = 0
    while dropped <= DRAIN_BYTES:
        message = await receive()
        if message["type"] != "http.request":
            return False  # the client went away
        dropped += len(message.get("body", b""))
        if not message.get("more_body", False):
            return True
    return False
