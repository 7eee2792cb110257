"""The one place errors become MCP tool errors (``is_error`` results a model can read): engram's
own, and the SDK's refusals of arguments that do not match a tool's schema, both in the words every
door uses (``invalid tags[1]: ...``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import pydantic
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError

from engram.errors import EngramError
from engram.interfaces.present import error_text, field_name

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


def arguments_text(exc: pydantic.ValidationError) -> str:
    """The SDK's refusal of a tool's arguments as engram words them: each field as every door names
    it (``filters.tags[0]``, where pydantic says ``filters.tags.0``) with what was wrong, without
    pydantic's model name, echoed values and documentation links."""
    return "; ".join(f"invalid {field_name(err['loc']) if err['loc'] else 'arguments'}: {err['msg']}"
                     for err in exc.errors(include_url=False, include_input=False))


class EngramMCPServer(MCPServer):
    """The SDK's server, with argument errors reworded (``arguments_text``); nothing else differs."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError:
            raise
        except ToolError as exc:
            if isinstance(exc.__cause__, pydantic.ValidationError):
                raise ToolError(f"Error executing tool {name}: {arguments_text(exc.__cause__)}") from exc.__cause__
            raise
