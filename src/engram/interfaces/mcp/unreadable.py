"""Answers for stdio messages the MCP SDK cannot read, which it dropped without a word.

The SDK parses each stdio line with pydantic, whose JSON reader refuses a lone surrogate escape
(``"\\ud800"``, valid JSON that no UTF-8 text can hold) and anything that is not JSON; the line
reached the server as an exception that was logged at debug level and dropped, so the client
waited for an answer that never came (over HTTP the SDK answers such a body with a parse error).
``AnsweringUnreadable`` stands between the transport and the server: such a request gets an answer
at once, naming what was wrong in the words every door uses: a tool call a tool error naming the
argument (``invalid content: contains a lone surrogate ...``, from ``model.usable_text``), any
other request ``Invalid params`` naming the parameter, and a line that is not JSON ``Parse error``.
Everything else passes through untouched.
"""

from __future__ import annotations

import logging
from typing import Any

import mcp_types as types
from mcp.shared.message import SessionMessage

from engram import jsondoc
from engram.errors import ValidationError
from engram.interfaces.mcp.wrapped_stream import WrappedStream
from engram.interfaces.present import error_text, field_name
from engram.model import usable_text

log = logging.getLogger("engram.mcp")


def unusable_at(value: Any, loc: tuple[Any, ...] = ()) -> tuple[tuple[Any, ...], str] | None:
    """The location and text of the first string (or object key) in ``value`` that
    ``usable_text`` refuses, or None."""
    if isinstance(value, str):
        try:
            usable_text("", value)
        except ValidationError:
            return loc, value
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            found = unusable_at(key, (*loc, key)) or unusable_at(item, (*loc, key))
            if found:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = unusable_at(item, (*loc, index))
            if found:
                return found
    return None


def _refusal(loc: tuple[Any, ...], text: str) -> str:
    # The location printed with escapes: the key itself may be the unusable text.
    field = field_name([part if isinstance(part, int) else ascii(part)[1:-1] for part in loc])
    try:
        usable_text(field, text)
    except ValidationError as exc:
        return error_text(exc)
    raise AssertionError("unusable_at found text that usable_text takes")  # pragma: no cover


def answer(line: str, reason: str) -> types.JSONRPCMessage | None:
    """The answer to a stdio line the SDK could not read (``reason``: its parser's words), or None
    for a notification (nothing to answer)."""
    try:
        # jsondoc: json.loads let RecursionError out of a line nested 100,000 deep, and the server died.
        message = jsondoc.loads(line)
    except ValueError:
        message = None
    if not isinstance(message, dict) or not isinstance(message.get("method"), str):
        return types.JSONRPCError(jsonrpc="2.0", id=None, error=types.ErrorData(
            code=types.PARSE_ERROR, message=f"Parse error: {reason}"))
    ident = message.get("id")
    if not isinstance(ident, int | str) or isinstance(ident, bool) or not usable_text_ok(ident):
        return None  # a notification (or an id no answer could carry): nothing to answer
    params = message.get("params")
    if message["method"] == "tools/call" and isinstance(params, dict) and isinstance(params.get("name"), str) \
            and usable_text_ok(params["name"]):
        found = unusable_at(params.get("arguments"))
        if found is not None:
            text = f"Error executing tool {params['name']}: {_refusal(*found)}"
            result = types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)
            return types.JSONRPCResponse(jsonrpc="2.0", id=ident,
                                         result=result.model_dump(by_alias=True, exclude_none=True))
    found = unusable_at(params, ("params",))
    problem = _refusal(*found) if found else f"the request could not be read: {reason}"
    return types.JSONRPCError(jsonrpc="2.0", id=ident, error=types.ErrorData(
        code=types.INVALID_PARAMS, message=f"Invalid params: {problem}"))


def usable_text_ok(value: Any) -> bool:
    return not isinstance(value, str) or unusable_at(value) is None


class AnsweringUnreadable(WrappedStream):
    """The stdio transport's read stream, with the items the SDK could not read answered on
    ``write_stream`` instead of passed on (to be dropped); everything else is the stream's own."""

    def __init__(self, read_stream: Any, write_stream: Any) -> None:
        super().__init__(read_stream)
        self._write = write_stream

    def __aiter__(self) -> AnsweringUnreadable:
        return self

    async def __anext__(self) -> Any:
        while True:
            item = await self._inner.__anext__()
            line = _unread_line(item)
            if line is None:
                return item
            reply = answer(line, _reason(item))
            if reply is None:
                log.debug("dropped an unreadable notification: %r", line[:200])
                continue
            await self._write.send(SessionMessage(reply))


def _unread_line(item: Any) -> str | None:
    """The line the SDK's JSON reader refused, when ``item`` is that refusal."""
    errors = getattr(item, "errors", None)
    if not isinstance(item, Exception) or not callable(errors):
        return None
    try:
        first = errors()[0]
    except Exception:  # noqa: BLE001 - not a pydantic error: leave it to the SDK
        return None
    return first.get("input") if first.get("type") == "json_invalid" and isinstance(first.get("input"), str) else None


def _reason(item: Any) -> str:
    first = item.errors()[0]
    return str((first.get("ctx") or {}).get("error") or first.get("msg") or "invalid JSON")
