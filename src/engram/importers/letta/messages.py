"""A Letta agent's messages as engram conversation messages, MemGPT's packed conversation unpacked
(the mapping is in the package's docstring)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from engram import jsondoc
from engram.errors import ValidationError
from engram.importers.base import HistoryEntry, Plan, a_list, fail, optional_text, timestamp, wrong_type
from engram.importers.letta.common import KIND
from engram.importers.letta.summaries import Summary, add_summary, in_alert, in_summary_message
from engram.model import ToolCall, parse_tool_calls

_ROLES = ("system", "user", "assistant", "tool", "function", "approval", "summary")
# MemGPT's packed events to the agent that are not the conversation, and what the report calls them.
_EVENTS = {"heartbeat": "heartbeats", "login": "login events", "system_alert": "system alerts"}
_REPLY_TOOL = "send_message"  # MemGPT's tool for speaking to the user (Letta's DEFAULT_MESSAGE_TOOL)


def _content(value: Any, where: str) -> tuple[str, list[str], int]:
    """A message's text (its text parts, in order), its reasoning parts, and how many other parts
    (images, redacted reasoning) it had. Early exports hold the text as a plain string."""
    if value is None:
        return "", [], 0
    if isinstance(value, str):
        return value, [], 0
    texts: list[str] = []
    reasoning: list[str] = []
    other = 0
    for n, part in enumerate(a_list(value, where)):
        if not isinstance(part, Mapping):
            raise wrong_type(f"{where}[{n}]", part, "a content part object")
        kind = part.get("type")
        if kind == "text":
            text = part.get("text")
            if not isinstance(text, str):
                raise wrong_type(f"{where}[{n}].text", text, "text")
            texts.append(text)
        elif kind == "reasoning" and isinstance(part.get("reasoning"), str):
            reasoning.append(part["reasoning"])
        else:
            other += 1
    return "\n".join(texts), reasoning, other


def read_messages(plan: Plan, messages: list[Any], where: str, key: str, agent: str | None) -> None:
    calls: set[str] = set()  # the tool calls this conversation made so far
    replies: dict[str, int] = {}  # a send_message call's id -> the place in plan.history of the reply it became
    left_out: dict[str, int] = {}
    summaries: list[Summary] = []

    def leave_out(what: str, n: int = 1) -> None:
        left_out[what] = left_out.get(what, 0) + n

    for i, message in enumerate(messages):
        at_ = f"{where}[{i}]"
        if not isinstance(message, Mapping):
            raise wrong_type(at_, message, "a message object")
        role = message.get("role")
        if role not in _ROLES:
            raise fail(f"{at_}.role", f"{jsondoc.shown(role)} is not a Letta message role", ", ".join(_ROLES))
        at = timestamp(message.get("created_at"), f"{at_}.created_at")
        if at is None:
            raise fail(f"{at_}.created_at", "is missing", "an ISO 8601 time")
        text, reasoning, other = _content(message.get("content"), f"{at_}.content")
        if other:
            leave_out("parts other than text (images, redacted reasoning)", other)
        if role == "summary" and (said := in_summary_message(text)) is not None:
            summaries.append(Summary(at_, at, said))
            continue
        if role in ("system", "approval", "summary"):
            leave_out(f"{role} messages" if role != "summary" else "empty summary messages")
            continue
        kept: dict[str, Any] = {k: message[k] for k in ("id", "name") if isinstance(message.get(k), str)}
        if reasoning:
            kept["reasoning"] = reasoning
        if role in ("tool", "function"):
            meta = {KIND: kept} if kept else {}
            for answers, result, place in _results(message, text, at_):
                if answers in replies:  # send_message's "OK": bookkeeping, kept with the reply it answers
                    _fold(plan, replies[answers], {**kept, "tool_call_id": answers, "content": result,
                                                   "created_at": message.get("created_at")})
                elif answers not in calls:
                    plan.warnings.append(f"{place}: the tool result for {answers!r} has no call before it; not imported")
                else:
                    plan.history.append(HistoryEntry(place, key, "tool", result, at, meta, tool_call_id=answers,
                                                     agent=agent))
            continue
        try:
            made = parse_tool_calls(message.get("tool_calls")) if role == "assistant" else ()
        except ValidationError as exc:
            raise fail(f"{at_}.{exc.field}", exc.problem, exc.allowed) from None
        packed = _packed(text) if role == "user" else None
        reply = _reply(made) if role == "assistant" else None
        if packed is not None and packed["type"] == "system_alert" and (said := in_alert(packed.get("message"))):
            summaries.append(Summary(at_, at, said))  # MemGPT's summary: a system alert in a user message
            continue
        if packed is not None and packed["type"] in _EVENTS:
            leave_out(_EVENTS[packed["type"]])
            continue
        if packed is not None:
            kept["raw"] = text  # the packed text, as Letta stored it
            text = packed["message"]
        elif reply is not None:
            # The message's text is the agent's inner monologue (Letta shows it as reasoning); what
            # the person read is the call's argument.
            kept["raw"] = {"content": text, "tool_calls": [call.to_dict() for call in made]}
            if text.strip():
                kept["reasoning"] = [*kept.get("reasoning", []), text]
            replies[made[0].id] = len(plan.history)
            text, made = reply, ()
        if not text.strip() and not made:
            leave_out(f"empty {role} messages")
            continue
        calls.update(call.id for call in made)
        plan.history.append(HistoryEntry(at_, key, role, text, at, {KIND: kept} if kept else {},
                                         tool_calls=list(made) or None, agent=agent))
    if summaries:
        add_summary(plan, summaries, key, agent)
    if left_out:
        why = [w for w, shown in (
            ("system messages are Letta's compiled prompt: its blocks are imported as memories",
             "system messages" in left_out),
            ("heartbeats, login events and system alerts are MemGPT's events to the agent, not the conversation",
             any(what in left_out for what in _EVENTS.values()))) if shown]
        plan.warnings.append(f"{where}: not imported: " + ", ".join(f"{what} ({n})" for what, n in left_out.items())
                             + (f" ({'; '.join(why)})" if why else ""))


def _packed(text: str) -> Mapping[str, Any] | None:
    """What a MemGPT-style packed user message holds, when the text is one unambiguously: a JSON
    object with a ``time`` whose ``type`` is a user message with its ``message`` text or one of the
    events in ``_EVENTS`` (the shapes of Letta's ``package_user_message``, ``get_heartbeat``,
    ``get_login_event`` and ``package_system_message``). None for anything else."""
    if not text.lstrip().startswith("{"):
        return None
    try:
        value = jsondoc.loads(text)
    except json.JSONDecodeError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("time"), str):
        return None
    if value.get("type") in _EVENTS:
        return value
    said = value.get("message")
    return value if value.get("type") == "user_message" and isinstance(said, str) and said.strip() else None


def _reply(made: tuple[ToolCall, ...]) -> str | None:
    """The text MemGPT sent the user, when the message's one tool call is ``send_message`` with
    an object of arguments holding a ``message`` text (``request_heartbeat`` or others beside it
    stay in the raw call). None for anything else."""
    if len(made) != 1 or made[0].name != _REPLY_TOOL:
        return None
    try:
        arguments = jsondoc.loads(made[0].arguments)
    except json.JSONDecodeError:
        return None
    said = arguments.get("message") if isinstance(arguments, dict) else None
    return said if isinstance(said, str) and said.strip() else None


def _fold(plan: Plan, n: int, result: Mapping[str, Any]) -> None:
    """Keep a send_message result in the raw record of the reply at ``plan.history[n]``."""
    entry = plan.history[n]
    letta = dict(entry.metadata[KIND])
    letta["raw"] = {**letta["raw"], "results": [*letta["raw"].get("results", []), dict(result)]}
    plan.history[n] = replace(entry, metadata={**entry.metadata, KIND: letta})


def _results(message: Mapping[str, Any], text: str, where: str) -> list[tuple[str, str, str]]:
    """The (call id, result text, place) of each tool result a tool message holds: its
    ``tool_returns`` when they name their calls (parallel calls share one message), else its
    ``tool_call_id`` and text."""
    out: list[tuple[str, str, str]] = []
    returns = a_list(message.get("tool_returns"), f"{where}.tool_returns")
    if len(returns) > 1 or (returns and not text.strip()):
        for n, ret in enumerate(returns):
            place = f"{where}.tool_returns[{n}]"
            if not isinstance(ret, Mapping):
                raise wrong_type(place, ret, "a tool return object")
            answers = optional_text(ret.get("tool_call_id"), f"{place}.tool_call_id")
            result = ret.get("func_response")
            if answers is None or not isinstance(result, str):
                raise fail(place, "names no tool_call_id or has no func_response text",
                           "a tool return with tool_call_id and func_response")
            out.append((answers, result, place))
        return out
    answers = optional_text(message.get("tool_call_id"), f"{where}.tool_call_id")
    if answers is None and returns and isinstance(returns[0], Mapping):
        answers = optional_text(returns[0].get("tool_call_id"), f"{where}.tool_returns[0].tool_call_id")
    if answers is None:
        raise fail(f"{where}.tool_call_id", "is missing", "the id of the tool call this result answers")
    return [(answers, text, where)]
