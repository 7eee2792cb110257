"""The one place engram's errors become MCP tool errors (``is_error`` results a model can read)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from mcp.server.mcpserver.exceptions import ToolError

from engram.errors import ConfigError, EngramError, NotFoundError, ValidationError
from engram.interfaces.seams import Unavailable

T = TypeVar("T")


def message(exc: Exception) -> str:
    """What the model reads: which field was wrong and what is allowed, or what was not found."""
    if isinstance(exc, ValidationError):
        text = f"invalid {exc.field}: {exc.problem}"
        return text + (f" (allowed: {exc.allowed})" if exc.allowed else "")
    if isinstance(exc, NotFoundError):
        return f"{exc.what} not found: {exc.ref!r}; recall first to find the right memory_id or key"
    if isinstance(exc, Unavailable):
        return str(exc)
    if isinstance(exc, ConfigError):
        return f"engram is misconfigured: {exc}"
    return f"memory storage failed: {exc}"


@contextmanager
def tool_errors() -> Iterator[None]:
    """Turn engram errors raised inside a tool into ``ToolError``."""
    try:
        yield
    except (EngramError, Unavailable) as exc:
        raise ToolError(message(exc)) from exc


def guarded(fn: Callable[[], T]) -> T:
    with tool_errors():
        return fn()
