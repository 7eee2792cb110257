"""Percent-escapes in a request's path or query must spell UTF-8 text.

The server (uvicorn, then Starlette for the query) decodes them with ``errors="replace"``, so
``/api/v1/memory/%FF%FE`` arrived as the key ``"\ufffd\ufffd"``: a lookup answered 404 for a key
nobody sent, and ``POST /api/v1/history/%FF`` appended to a conversation nobody named. Every API
route checks the request as sent once its token is checked (``refuse_undecodable``, a dependency beside
the unknown query check) and refuses it with a 422 naming the parameter, before the engine is reached.
"""

from __future__ import annotations

from urllib.parse import unquote_to_bytes

from fastapi import Request

from engram.errors import ValidationError

_ALLOWED = "text that is valid UTF-8 once percent-decoded (é is %C3%A9)"


def _is_utf8(raw: bytes) -> bool:
    try:
        unquote_to_bytes(raw).decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _path_field(request: Request, raw_path: bytes) -> str | None:
    """The path parameter whose segment is not UTF-8 (``ref``, ``other``, ``conversation``), or
    None when every segment is; ``path`` for a segment that is no parameter."""
    sent = raw_path.split(b"/")
    route = request.scope.get("route")
    # ``%2F`` stays encoded in the raw path, so its segments line up with the route's from the end
    # (a root path only adds segments in front).
    template = str(getattr(route, "path_format", "")).split("/")
    for index in range(1, len(sent) + 1):
        if not _is_utf8(sent[-index]):
            part = template[-index] if index <= len(template) else ""
            return part[1:-1].split(":")[0] if part.startswith("{") and part.endswith("}") else "path"
    return None


async def refuse_undecodable(request: Request) -> None:
    """A dependency of every API route: a path segment or query value that is not UTF-8 is an error."""
    raw_path = request.scope.get("raw_path")
    if isinstance(raw_path, bytes) and b"%" in raw_path and (field := _path_field(request, raw_path)):
        raise ValidationError(field, "the path segment is not valid UTF-8 once percent-decoded", _ALLOWED)
    query = request.scope.get("query_string") or b""
    if b"%" not in query and not any(byte > 0x7F for byte in query):
        return  # (most requests: nothing encoded)
    for pair in query.split(b"&"):
        name, _, value = pair.replace(b"+", b" ").partition(b"=")
        if not _is_utf8(name):
            raise ValidationError("query", "a parameter name is not valid UTF-8 once percent-decoded", _ALLOWED)
        if not _is_utf8(value):
            raise ValidationError(unquote_to_bytes(name).decode("utf-8"),
                                  "the value is not valid UTF-8 once percent-decoded", _ALLOWED)
