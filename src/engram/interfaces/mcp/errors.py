"""The one place errors become MCP tool errors (``is_error`` results a model can read): engram's
own, and the SDK's refusals of arguments that do not match a tool's schema, both in the words every
door uses (``invalid tags[1]: ...``). Served over HTTP (``EngramMCPServer.remote``), an error of the
server's state (storage, settings, a provider) is worded without the server's paths, as HTTP's
problem details are (``present.served_text``); the server's log keeps the whole text."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import mcp_types as types
import pydantic
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError

from engram.errors import EngramError, refusal
from engram.interfaces.mcp.text_arguments import keep_text
from engram.interfaces.present import error_text, field_name
from engram.model import given_arguments

T = TypeVar("T")
log = logging.getLogger("engram.mcp")


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


def arguments_text(exc: pydantic.ValidationError | Sequence[Any]) -> str:
    """The SDK's refusal of a tool's arguments (or some of its errors) as engram words them: each
    field as every door names it (``filters.tags[0]``, where pydantic says ``filters.tags.0``) with
    what was wrong in the engine's words (``errors.refusal``: ``unknown category "feelings"`` and
    what is allowed, as the library refuses it), without pydantic's model name and documentation links."""
    errors = exc.errors(include_url=False) if isinstance(exc, pydantic.ValidationError) else exc
    return "; ".join(error_text(refusal(err, field_name(err["loc"]) if err["loc"] else "arguments")) for err in errors)


class EngramMCPServer(MCPServer):
    """The SDK's server, with argument errors reworded (``arguments_text``), arguments a tool does
    not take refused (``unknown_arguments``), arguments of the wrong type refused rather than
    converted (``strict_arguments``), optional arguments sent as null taken as not given
    (``given``), optional text arguments that look like JSON kept as text
    (``add_tool``: ``text_arguments``), stdio lines the SDK cannot read answered and every stdio
    request answered before the server stops at the end of stdin (``run_stdio_async``); nothing
    else differs."""

    _taken: dict[str, frozenset[str]] | None = None
    # Served to remote clients (MCP over HTTP): errors without the server's paths.
    remote: bool = False

    def add_tool(self, fn: Callable[..., Any], name: str | None = None, **kwargs: Any) -> None:
        super().add_tool(fn, name=name, **kwargs)
        tool = self._tool_manager.get_tool(name or fn.__name__)
        if tool is not None:  # (just added)
            keep_text(tool)

    async def unknown_arguments(self, name: str, arguments: dict[str, Any]) -> None:
        """Raise ``ToolError`` naming the first argument that tool ``name`` does not take, with the
        ones it does. The SDK drops such an argument without a word, so a misspelt or invented one
        (``metadata`` to ``remember``, ``tag`` for ``tags``) was lost while the call reported
        success; the HTTP API refuses an unknown field the same way."""
        if self._taken is None:  # (every tool is registered before the server serves)
            self._taken = {tool.name: frozenset(tool.input_schema.get("properties", {}))
                           for tool in await self.list_tools()}
        taken = self._taken.get(name)
        if taken is None:
            return  # an unknown tool: the SDK says so
        for argument in arguments:
            if argument not in taken:
                raise ToolError(f"Error executing tool {name}: invalid {argument}: is not an argument of {name} "
                                f"(allowed: {', '.join(sorted(taken))})")

    def strict_arguments(self, name: str, arguments: dict[str, Any]) -> None:
        """Raise ``ToolError`` naming the first argument of the wrong JSON type, with the type
        allowed. The SDK validates in pydantic's lax mode, which converted them: ``"dry_run":
        "yes"`` ran as true, ``"limit": "5"`` as 5, ``"older_than_days": true`` as 1 day; the
        library and the HTTP API refuse them. The SDK still reads a list or an object sent as JSON
        text (``pre_parse_json``, for clients that send them so), and a whole number sent as a float
        (``"limit": 5.0``) as an integer: the tool's JSON Schema says "integer", which takes 5.0, and
        the library and HTTP take it too (``model.parse_integer``); nothing else is converted."""
        tool = self._tool_manager.get_tool(name)
        if tool is None:
            return  # an unknown tool: the SDK says so
        metadata = tool.fn_metadata
        try:
            metadata.arg_model.model_validate(metadata.pre_parse_json(arguments), strict=True)
        except pydantic.ValidationError as exc:
            # Strict mode refuses 5.0 for an int; the SDK's own (lax) validation then makes it 5.
            wrong = [err for err in exc.errors(include_url=False)
                     if not (err["type"] == "int_type" and isinstance(err["input"], float) and err["input"].is_integer())]
            if wrong:
                raise ToolError(f"Error executing tool {name}: {arguments_text(wrong)}") from exc

    async def run_stdio_async(self) -> None:
        """The SDK's stdio loop, with the lines its JSON reader refuses answered (``unreadable``)
        instead of dropped unanswered, those naming a field twice refused (``repeats``), and every
        request read before stdin ends answered before the server stops (``answered``)."""
        from mcp.server.stdio import stdio_server

        from engram.interfaces.mcp.answered import AnsweredBeforeEnd
        from engram.interfaces.mcp.repeats import CheckedLines
        from engram.interfaces.mcp.unreadable import AnsweringUnreadable

        lowlevel = self._lowlevel_server
        lines = CheckedLines.stdin()
        async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
            lines.answer_on(write_stream)
            served = AnsweredBeforeEnd(AnsweringUnreadable(read_stream, write_stream), write_stream, self.writes)
            await lowlevel.run(served, served.writes, lowlevel.create_initialization_options())

    def writes(self, request: types.JSONRPCRequest) -> bool:
        """Whether ``request`` calls a tool that may change memories (one not marked read-only, its
        annotations' ``read_only_hint``): such a call is kept in order on stdio (``answered``).
        An unknown tool writes nothing: the SDK refuses it."""
        name = (request.params or {}).get("name") if request.method == "tools/call" else None
        tool = self._tool_manager.get_tool(name) if isinstance(name, str) else None
        return tool is not None and not (tool.annotations is not None and tool.annotations.read_only_hint)

    def given(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """``arguments`` without the optional ones sent as JSON null (``model.given_arguments``):
        null for an optional argument is its default, whatever the default (the SDK refused null
        for one whose default is not None: ``remember``'s category, ``list``'s limit). A required
        one sent as null is kept, for the SDK to refuse naming it."""
        tool = self._tool_manager.get_tool(name)
        if tool is None:
            return arguments  # an unknown tool: the SDK says so
        return given_arguments(arguments, tool.parameters.get("required", ()))

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        # Unknown names first: a misspelt one sent as null was dropped with the nulls that mean
        # "not given", and the call answered as if it had been read.
        await self.unknown_arguments(name, arguments or {})
        arguments = self.given(name, arguments or {})
        self.strict_arguments(name, arguments or {})
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError:
            raise
        except ToolError as exc:
            if isinstance(exc.__cause__, pydantic.ValidationError):
                raise ToolError(f"Error executing tool {name}: {arguments_text(exc.__cause__)}") from exc.__cause__
            cause = _engram_cause(exc)
            if self.remote and cause is not None:
                served = error_text(cause, remote=True)
                if served != error_text(cause):
                    log.error("tool %s failed: %s", name, cause)  # the whole text, for the operator
                    raise ToolError(f"Error executing tool {name}: {served}") from cause
            raise


def _engram_cause(exc: BaseException) -> EngramError | None:
    """The engram error a tool raised, under the ``ToolError``s ``tool_errors`` and the SDK wrap it in."""
    seen: BaseException | None = exc
    while seen is not None and not isinstance(seen, EngramError):
        seen = seen.__cause__
    return seen
