"""Text arguments kept as the text sent: the SDK reads a string argument as the JSON it spells
when its annotation is not exactly ``str`` (``FuncMetadata.pre_parse_json``, for clients that send
a list or an object as JSON text), and ``str | None`` is not exactly ``str``. So an optional text
argument that happened to be JSON took another value: ``update``'s content ``'{"a": 1}'`` became a
dict and was refused ("Input should be a valid string"), a key ``"null"`` became None and the
memory was stored under a key made from its content, a ``forget`` reason ``"[]"`` was refused
(python-sdk issue 3055). ``TextArguments`` pre-parses only the arguments that may hold something
other than text (lists, objects, numbers); every tool registered by ``EngramMCPServer`` uses it.

Those others keep the SDK's reading of a list or an object sent as JSON text, but not of the text
``"null"``: read as JSON it became None, "not given", so ``list(category="null")`` listed every
category and ``remember(scope="null")`` stored in the default scope, where the CLI and HTTP refuse
"null" for those fields. The text is validated as sent (refused naming its argument, as at the
other doors); a JSON null is still "not given"."""

from __future__ import annotations

import types
import typing
from typing import Any

from mcp.server.mcpserver.tools.base import Tool
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata


def _only_text(annotation: Any) -> bool:
    """Whether an argument so annotated holds text or nothing: ``str``, ``str | None``."""
    if annotation is str:
        return True
    if typing.get_origin(annotation) not in (typing.Union, types.UnionType):
        return False
    return all(arg is str or arg is type(None) for arg in typing.get_args(annotation))


class TextArguments(FuncMetadata):
    """``FuncMetadata`` whose JSON pre-parsing leaves the text-only arguments alone."""

    def pre_parse_json(self, data: dict[str, Any]) -> dict[str, Any]:
        fields = self.arg_model.model_fields
        only_text = {name for name, info in fields.items() if _only_text(info.annotation)}
        only_text |= {fields[name].alias for name in only_text if fields[name].alias}  # as sent: by alias too
        text = {name: value for name, value in data.items() if name in only_text}
        parsed = super().pre_parse_json({name: value for name, value in data.items() if name not in text})
        return {name: text[name] if name in text else _unless_null_text(data[name], parsed[name]) for name in data}


def _unless_null_text(sent: Any, parsed: Any) -> Any:
    """The SDK's reading of an argument, except that text it read as JSON's null stays the text sent."""
    return sent if parsed is None and isinstance(sent, str) else parsed


def keep_text(tool: Tool) -> None:
    """Make ``tool`` read its text-only arguments as sent (see the module docstring)."""
    meta = tool.fn_metadata
    tool.fn_metadata = TextArguments(arg_model=meta.arg_model, output_schema=meta.output_schema,
                                     output_model=meta.output_model, wrap_output=meta.wrap_output)
