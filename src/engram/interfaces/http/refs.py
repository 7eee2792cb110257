"""A memory's id or key as one URL path segment, percent-encoded: ``/api/v1/memory/notes%2Ftoday``;
a conversation key the same way (``/api/v1/history/web:a%2Fb``: a key's parts may hold ``/``).

A server decodes the whole path before routing, so ``notes%2Ftoday`` would arrive as two segments
and never reach ``/{ref}``. For paths under ``ENCODED_PATHS``, ``EncodedRefs`` routes on the
path as sent with only ``%2F`` and ``%25`` left encoded (every other escape decoded as usual), and
the ``ref`` converter decodes those two inside the one segment it matched. A literal ``/`` still
separates segments, so ``/{ref}/versions`` and ``/{ref}/links/{other}`` stay unambiguous, and
every URL that worked before means what it meant. A key equal to a fixed route name (``search``,
``by-key``, ...) or to ``.``/``..`` (which clients fold away) is reached through ``/by-key?key=``.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

from starlette.convertors import Convertor, register_url_convertor
from starlette.types import ASGIApp, Receive, Scope, Send

ENCODED_PATHS = ("/api/v1/memory/", "/api/v1/history/")
_KEPT = re.compile(r"(%2[Ff]|%25)")


class RefConvertor(Convertor[str]):
    """One path segment, with the ``%2F`` and ``%25`` that ``EncodedRefs`` kept decoded."""

    regex = "[^/]+"

    def convert(self, value: str) -> str:
        return _KEPT.sub(lambda m: "%" if m.group() == "%25" else "/", value)

    def to_string(self, value: str) -> str:
        return value.replace("%", "%25").replace("/", "%2F")


register_url_convertor("ref", RefConvertor())


def routed_path(scope: Scope) -> str | None:
    """The path to route a memory or history request on (``%2F`` and ``%25`` kept encoded), or None to
    leave the request as the server decoded it."""
    raw = scope.get("raw_path")
    if not isinstance(raw, bytes) or b"%" not in raw:
        return None  # (nothing encoded, nothing to keep: most requests, stores included, stop here)
    sent = raw.decode("latin-1")
    decoded, path = unquote(sent), scope["path"]
    # The server's decoding of the path as sent (after any root path), else leave it alone.
    if not path.endswith(decoded):
        return None
    kept = "".join(part.upper() if _KEPT.fullmatch(part) else unquote(part) for part in _KEPT.split(sent))
    routed = path[: len(path) - len(decoded)] + kept
    route = routed[len(scope.get("root_path", "")):] if routed.startswith(scope.get("root_path", "")) else routed
    return routed if route.startswith(ENCODED_PATHS) else None


class EncodedRefs:
    """ASGI middleware: memory and history requests are routed with encoded slashes and percents kept."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and (routed := routed_path(scope)) is not None:
            scope = {**scope, "path": routed}
        await self.app(scope, receive, send)
