"""The base of engram's stand-ins for the MCP SDK's anyio streams (``unreadable``, ``answered``):
each changes one thing about a stream the SDK made and hands the rest to it."""

from __future__ import annotations

from typing import Any, Self


class WrappedStream:
    """A stream standing in for ``inner``: entering it, leaving it and every attribute it does not
    define itself (``receive``, ``send``, ``close``, ``last_context``, ...) are ``inner``'s."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def __aenter__(self) -> Self:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)
