"""The one place engram's errors become MCP tool errors (``is_error`` results a model can read)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from mcp.server.mcpserver.exceptions import ToolError

from engram.errors import EngramError
from engram.interfaces.present import error_text

T = TypeVar("T")


@contextmanager
def tool_errors() -> Iterator[None]:
    """Turn engram errors raised inside a tool into ``ToolError``."""
    try:
        yield
    except EngramError as exc:
        raise ToolError(error_text(exc)) from exc


def guarded(fn: Callable[[], T]) -> T:
    with tool_errors():
        return fn()
