"""Validation of conversation messages (``make_message``, ``message_from_dict``) and the tool
calls they carry, in engram's, OpenAI's or JSON text form; raises ``ValidationError`` naming
the field.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from engram import jsondoc
from engram.errors import ValidationError
from engram.model.fields import parse_metadata, sent_at
from engram.model.records import Message, Role, ToolCall
from engram.model.values import usable_json, usable_text
from engram.temporal.instants import parse_time

MAX_MESSAGE_CHARS = 1_000_000


def parse_role(value: str | Role) -> Role:
    try:
        return Role(str(value).strip().lower())
    except ValueError:
        raise ValidationError("role", f"unknown role {jsondoc.shown(value)}", [r.value for r in Role]) from None


def parse_tool_calls(value: Any) -> tuple[ToolCall, ...]:
    """Tool calls as ``ToolCall``s, engram dicts ``{id, name, arguments}``, OpenAI dicts
    ``{id, function: {name, arguments}}`` or their JSON text."""
    if value is None:
        return ()
    if isinstance(value, str):
        try:
            value = jsondoc.loads(value)
        except json.JSONDecodeError as exc:
            raise ValidationError("tool_calls", f"malformed JSON ({exc.msg})", "a JSON list of tool calls") from None
    if not isinstance(value, list | tuple):
        raise ValidationError("tool_calls", f"got {type(value).__name__}", "a list of {id, name, arguments}")
    calls: list[ToolCall] = []
    for item in value:
        if isinstance(item, ToolCall):
            calls.append(item)
            continue
        if not isinstance(item, Mapping):
            raise ValidationError("tool_calls", f"got {jsondoc.shown(item)}, not an object", "{id, name, arguments}")
        function = item.get("function") if isinstance(item.get("function"), Mapping) else item
        call_id, name, arguments = item.get("id"), function.get("name"), function.get("arguments", "{}")
        if not isinstance(call_id, str) or not call_id.strip():
            raise ValidationError("tool_calls.id", "every tool call needs a non-empty id", "a string")
        usable_json("tool_calls", [call_id, name, arguments])
        if not isinstance(name, str) or not name.strip():
            raise ValidationError("tool_calls.name", f"tool call {jsondoc.shown(call_id)} has no name", "a string")
        if not isinstance(arguments, str):
            try:
                # As sent, as closely as JSON text allows: names in the caller's order, text unescaped,
                # compact (as JSON.stringify and OpenAI write arguments). Nothing compares this text
                # but the response cache, where a different spelling is only a miss.
                arguments = json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))
            except (TypeError, ValueError):
                raise ValidationError("tool_calls.arguments", "not JSON-serialisable", "JSON") from None
        calls.append(ToolCall(call_id.strip(), name.strip(), arguments))
    ids = [c.id for c in calls]
    if len(set(ids)) != len(ids):
        raise ValidationError("tool_calls.id", "tool call ids repeat within one message", "distinct ids")
    return tuple(calls)


def make_message(
    role: str | Role,
    content: str,
    *,
    tool_calls: Any = None,
    tool_call_id: str | None = None,
    metadata: Mapping[str, Any] | str | None = None,
    created_at: float | None = None,
    max_chars: int = MAX_MESSAGE_CHARS,
    now: float | None = None,
) -> Message:
    """Validate a message; raises ``ValidationError`` naming the field.

    With ``now`` (the engine's clock: every append gives it), ``created_at`` is read as a memory's
    is (``recorded_at``): when the message was sent, so a time more than ``CREATED_AT_LEEWAY_S``
    later than ``now`` is refused and one within it is ``now``; a message dated in the future
    would sort after every later one and outlive them in trimming.

    Only assistant messages carry tool calls and only tool messages a ``tool_call_id``; system
    and user messages need content (an assistant message that only calls tools may be empty).
    """
    parsed_role = parse_role(role)
    if not isinstance(content, str):
        raise ValidationError("content", f"got {type(content).__name__}", "text")
    usable_text("content", content)
    if tool_call_id is not None and isinstance(tool_call_id, str):
        usable_text("tool_call_id", tool_call_id)
    if len(content) > max_chars:
        raise ValidationError("content", f"is {len(content)} characters; the maximum is {max_chars}",
                              f"up to {max_chars} characters")
    calls = parse_tool_calls(tool_calls)
    if calls and parsed_role is not Role.ASSISTANT:
        raise ValidationError("tool_calls", f"a {parsed_role.value} message cannot call tools", "assistant messages")
    if parsed_role is Role.TOOL:
        if not isinstance(tool_call_id, str) or not tool_call_id.strip():
            raise ValidationError("tool_call_id", "a tool message must name the call it answers", "the id of a tool call")
        tool_call_id = tool_call_id.strip()
    elif tool_call_id is not None:
        raise ValidationError("tool_call_id", f"a {parsed_role.value} message cannot answer a tool call", "tool messages")
    if parsed_role in (Role.SYSTEM, Role.USER) and not content.strip():
        raise ValidationError("content", "must not be empty", f"1-{max_chars} characters")
    if parsed_role is Role.ASSISTANT and not calls and not content.strip():
        raise ValidationError("content", "an assistant message needs content or tool calls", "text")
    at = parse_time(created_at, "created_at") if now is None else sent_at(created_at, now)
    return Message(parsed_role, content, calls, tool_call_id, parse_metadata(metadata), 0.0 if at is None else at)


def message_from_dict(data: Any, max_chars: int = MAX_MESSAGE_CHARS) -> Message:
    """A message from its ``to_dict`` form (or an OpenAI-style dict); raises ``ValidationError``."""
    if not isinstance(data, Mapping):
        raise ValidationError("message", f"got {type(data).__name__}", "an object with role and content")
    return make_message(
        data.get("role", ""), data.get("content") or "", tool_calls=data.get("tool_calls"),
        tool_call_id=data.get("tool_call_id"), metadata=data.get("metadata"),
        created_at=data.get("created_at"), max_chars=max_chars,
    )
