"""Request size limit as plain ASGI middleware: refuses a declared Content-Length over the limit
before reading, and stops a chunked body as soon as it passes the limit."""

from __future__ import annotations

import json
from typing import Any

Scope = dict[str, Any]


class BodyTooLarge(Exception):
    """Raised by a reader that finds a body over the limit (answered 413 by the problem handler)."""


def _problem(limit: int) -> bytes:
    return json.dumps({"type": "https://engram.dev/problems/too-large", "title": "Request too large",
                       "status": 413, "detail": f"the request body is larger than {limit} bytes",
                       "field": "body", "allowed": f"up to {limit} bytes"}).encode()


class BodyLimit:
    def __init__(self, app: Any, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse(send)
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
                        await self._refuse(send)
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message: Any) -> None:
            if state["refused"]:
                return  # the 413 has been sent; whatever the app says now is dropped
            if message["type"] == "http.response.start":
                state["started"] = True
            await send(message)

        await self.app(scope, limited_receive, guarded_send)

    async def _refuse(self, send: Any) -> None:
        body = _problem(self.max_bytes)
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/problem+json"), (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})
