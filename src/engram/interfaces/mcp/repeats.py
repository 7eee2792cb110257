"""MCP messages whose JSON names one field twice in an object, refused at both transports.

The SDK reads each JSON-RPC message with pydantic, which keeps the last of a repeated name:
``{"content": "a", "content": "b"}`` in a ``tools/call`` stored "b" without a word, while the HTTP
API refuses such a body (400, naming the name). The message is read here first by
``jsondoc.loads`` with ``unique_names`` (the reading every door's JSON gets), before the SDK sees
it: on stdio each line (``CheckedLines``, the transport's stdin), over HTTP each POST body
(``RefusingRepeatedNames``, in front of the SDK's app). A message naming a field twice is answered
with a JSON-RPC parse error naming it, carrying the request's id so the client's call ends; a
notification gets no answer on stdio (JSON-RPC answers none) and the error over HTTP (which must
answer). Any other JSON is left to the SDK, which says what is wrong with it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage

from engram import jsondoc

log = logging.getLogger("engram.mcp")

ALLOWED = "each name once per object"


@dataclass(frozen=True, slots=True)
class Refusal:
    """The answer to a message naming a field twice; ``request``: whether it expects one."""

    error: types.JSONRPCError
    request: bool

    def body(self) -> bytes:
        # exclude_unset, as the SDK's own transports write: an id that could not be told is sent as
        # "id": null, which JSON-RPC asks for and the SDK's client reads (without it, it cannot).
        return self.error.model_dump_json(by_alias=True, exclude_unset=True).encode()


def refusal(document: str | bytes) -> Refusal | None:
    """The refusal of a JSON-RPC message (or batch) that names a field twice in one object, or None."""
    try:
        jsondoc.loads(document, unique_names=True)
        return None
    except jsondoc.RepeatedName as exc:
        repeated = exc
    except json.JSONDecodeError:
        return None  # the SDK answers malformed JSON itself
    try:
        message = jsondoc.loads(document)
    except json.JSONDecodeError:
        return None  # (malformed past the repeat too: the SDK says where)
    ident = message.get("id") if isinstance(message, dict) else None
    # The id the answer carries: an id given twice is not known, and JSON-RPC's is text or a number.
    known = repeated.name != "id" and isinstance(ident, int | str) and not isinstance(ident, bool)
    error = types.JSONRPCError(jsonrpc="2.0", id=ident if known else None, error=types.ErrorData(
        code=types.PARSE_ERROR, message=f"Parse error: {repeated.msg} (allowed: {ALLOWED})"))
    # A request has a method and an id; a response (a client's answer to the server, also with an
    # id) is never answered, as JSON-RPC says, nor is a notification: both are only logged.
    request = isinstance(message, dict) and isinstance(message.get("method"), str) and "id" in message
    return Refusal(error, request=request)


class CheckedLines:
    """The stdio transport's stdin lines, each message naming a field twice answered on the
    transport's write stream (given by ``answer_on`` once the transport is open) instead of passed
    on to the SDK."""

    def __init__(self, lines: Any) -> None:
        self._lines = lines
        self._write: Any = None
        self._open = anyio.Event()

    @classmethod
    def stdin(cls) -> CheckedLines:
        """The process's stdin, read as the SDK reads it (UTF-8, an undecodable byte replaced),
        without keeping Ctrl-C waiting (``stdin.stdin_lines``). Given its stdin, the SDK no longer
        points fd 0 at the null device while it serves: nothing engram runs in the server reads
        stdin or starts a process that could."""
        from engram.interfaces.mcp.stdin import stdin_lines

        return cls(stdin_lines())

    def answer_on(self, write_stream: Any) -> None:
        self._write = write_stream
        self._open.set()

    async def __aiter__(self) -> AsyncIterator[str]:
        async for line in self._lines:
            refused = refusal(line)
            if refused is None:
                yield line
            elif refused.request:
                await self._open.wait()  # (the transport reads before it hands out its write stream)
                await self._write.send(SessionMessage(refused.error))
            else:
                log.debug("dropped a notification naming a field twice: %r", line[:200])


class RefusingRepeatedNames:
    """ASGI wrapper for the streamable-HTTP MCP app: a POST body naming a field twice is answered
    400 with the JSON-RPC error (as the SDK answers a body it cannot parse); any other request
    goes to ``app`` with its body as sent. The body is read whole, as the SDK reads it, within the
    server's size limit (``BodyLimit``, outside)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        received: list[dict[str, Any]] = []
        body = b""
        while True:
            message = await receive()
            received.append(message)
            if message["type"] != "http.request":
                break  # (a disconnect: the SDK sees it)
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        refused = refusal(body) if received[-1]["type"] == "http.request" else None
        if refused is not None:
            await send({"type": "http.response.start", "status": 400,
                        "headers": [(b"content-type", b"application/json")]})
            await send({"type": "http.response.body", "body": refused.body()})
            return

        async def replay() -> dict[str, Any]:
            return received.pop(0) if received else await receive()

        await self.app(scope, replay, send)
