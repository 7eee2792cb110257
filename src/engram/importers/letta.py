"""Letta (formerly MemGPT): its Agent File (``.af``), the JSON a Letta server exports an agent as.

Two shapes are in use. The current one (Letta ≥ 0.8) lists ``agents``, ``blocks``, ``tools``,
``groups``, ``files``, ``sources`` and ``mcp_servers``, with file-local ids (``agent-0``,
``block-1``, ``message-3``): an agent names its memory blocks by ``block_ids`` and carries its
``messages``. The first one (Letta 0.6-0.7) is one agent at the top level with its blocks inline
(``core_memory``), its ``messages`` without ids, and a ``version``. Some exports in the wild hold
the document once more as a JSON string (the SDK's text written out as JSON); it is read the same.

Mapping: each memory block (``human``, ``persona``, ...) of an agent is one ``core`` memory keyed
``letta-<label>``, tagged with its label, its text byte for byte, Letta's block id, label, limit,
description and read-only flag in ``metadata["letta"]`` (a block's own ``letta`` metadata is kept
there as ``["own"]``, with a warning). A block's identity is its label and text: re-importing the
same file skips it, an edited block in a later export is a new memory (``letta-human-2``) rather
than silently dropped. Archival ``passages`` (the format does not carry them yet; read when a file
does, with Letta's passage fields ``text``, ``created_at``, ``tags``, ``metadata``) become
``knowledge`` memories. The agent's messages go to that agent's conversation history under
``letta:<agent>``, in file order at their times: user and assistant text, the assistant's tool
calls and the tool results answering them; an assistant's reasoning parts are kept in the
message's ``metadata["letta"]["reasoning"]``. System messages are Letta's compiled system prompt
(instructions plus a rendering of the blocks, imported as memories already): not imported, and
reported, as are the system prompt, tools, tool rules, model settings and attached files, which
are the agent's configuration, not its memory. The agent's name is the engram agent (the naming
rule of every importer).

MemGPT-style agents (``memgpt_agent`` and Letta agents before its newer message types) store the
conversation packed; it is unpacked as Letta itself shows it (``Message.to_letta_messages``), so
engram's history holds the conversation the person had and pairs its exchanges for recall:
a user message holding ``{"type": "user_message", "message": ...}`` becomes a user message with
that text; an assistant message whose one tool call is ``send_message`` becomes an assistant
message with the call's ``message`` argument, its text (the agent's inner monologue) moving to
``["reasoning"]``, and the bookkeeping result answering the call (``{"status": "OK", ...}``) is
folded into it rather than imported as a message. Heartbeats, login events and system alerts
(packed user messages too) are events to the agent, not conversation: left out and reported with
their counts; kept, a heartbeat would stand as the user's turn between a question and its answer.
What an unpacked message held in Letta is kept in ``metadata["letta"]["raw"]`` (the packed text;
or the monologue, the call and the results), so an exporter can restore it. Only an unambiguous
shape is unpacked (a JSON object of a known ``type`` with its text; one ``send_message`` call
whose arguments are an object with a ``message`` text); anything else arrives verbatim.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from engram import jsondoc
from engram.errors import ValidationError
from engram.history.keys import conversation_key
from engram.importers.base import (
    HistoryEntry,
    Plan,
    Record,
    agent_name,
    fail,
    metadata,
    optional_text,
    require_text,
    slug,
    tags,
    timestamp,
    with_provenance,
)
from engram.model import Category, ToolCall, parse_tool_calls

KIND = "letta"
SUFFIX = ".af"
_ROLES = ("system", "user", "assistant", "tool", "function", "approval", "summary")
_SHAPE = ('a Letta Agent File: {"agents": [...], "blocks": [...], ...}, or an older one with one agent\'s '
          '"core_memory" and "messages" at the top')
_KEY_UNSAFE = re.compile(r"[\s:\x00-\x1f\x7f]+")
# MemGPT's packed events to the agent that are not the conversation, and what the report calls them.
_EVENTS = {"heartbeat": "heartbeats", "login": "login events", "system_alert": "system alerts"}
_REPLY_TOOL = "send_message"  # MemGPT's tool for speaking to the user (Letta's DEFAULT_MESSAGE_TOOL)


def looks_like(data: Any) -> bool:
    """An Agent File of either shape (or one held as a JSON string)."""
    data = _unwrapped(data)
    if not isinstance(data, Mapping):
        return False
    agents = data.get("agents")
    if isinstance(agents, list):
        return "blocks" in data or any(isinstance(a, Mapping) and ("block_ids" in a or "llm_config" in a)
                                       for a in agents[:5])
    return isinstance(data.get("core_memory"), list) and ("messages" in data or "llm_config" in data)


def _unwrapped(data: Any) -> Any:
    """The document a JSON string holds, when it holds one (an export written out twice)."""
    if isinstance(data, str) and data.lstrip().startswith("{"):
        try:
            return jsondoc.loads(data)
        except json.JSONDecodeError:
            return data
    return data


def read(text: str) -> Plan:
    """The plan of an Agent File; raises ``SnapshotError`` naming the JSON path of what is
    malformed (``agents[0].messages[3].role``), before anything is imported."""
    try:
        data = jsondoc.loads(text)
    except json.JSONDecodeError as exc:
        raise fail(f"line {exc.lineno}", f"malformed JSON: {exc.msg} (column {exc.colno})", _SHAPE) from None
    data = _unwrapped(data)
    plan = Plan(KIND, "letta")
    if isinstance(data, Mapping) and isinstance(data.get("agents"), list):
        blocks = _blocks_by_id(data.get("blocks"))
        for i, agent in enumerate(data["agents"]):
            _agent(plan, agent, f"agents[{i}]", blocks)
        _not_imported(plan, data, "", ("groups", "files", "sources", "mcp_servers"))
    elif isinstance(data, Mapping) and isinstance(data.get("core_memory"), list):
        _agent(plan, data, "", {})
    else:
        raise fail("document", "no Letta agent", _SHAPE)
    return plan


def _at(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name


def _list(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise fail(where, f"got {type(value).__name__}", "a list")
    return value


def _blocks_by_id(value: Any) -> dict[str, tuple[str, Mapping[str, Any]]]:
    found: dict[str, tuple[str, Mapping[str, Any]]] = {}
    for j, block in enumerate(_list(value, "blocks")):
        where = f"blocks[{j}]"
        if not isinstance(block, Mapping):
            raise fail(where, f"got {type(block).__name__}", "a memory block object")
        block_id = optional_text(block.get("id"), f"{where}.id")
        if block_id is None:
            raise fail(f"{where}.id", "is missing", "the block's id, which agents name in block_ids")
        found[block_id] = (where, block)
    return found


def _agent(plan: Plan, agent: Any, where: str, blocks: Mapping[str, tuple[str, Mapping[str, Any]]]) -> None:
    if not isinstance(agent, Mapping):
        raise fail(where or "document", f"got {type(agent).__name__}", "an agent object")
    name = optional_text(agent.get("name"), _at(where, "name"))
    engram_agent = agent_name(name, _at(where, "name"), "agent")
    shown = name or optional_text(agent.get("id"), _at(where, "id")) or "agent"
    # Blocks: the current format names shared blocks by id; the first one holds them inline.
    mine: list[tuple[str, Any]] = []
    for k, block_id in enumerate(_list(agent.get("block_ids"), _at(where, "block_ids"))):
        if not isinstance(block_id, str) or block_id not in blocks:
            raise fail(f"{_at(where, 'block_ids')}[{k}]", f"{block_id!r} names no block in blocks",
                       "the id of one of the file's blocks")
        mine.append(blocks[block_id])
    for field in ("memory_blocks", "core_memory"):
        mine += [(f"{_at(where, field)}[{k}]", b) for k, b in enumerate(_list(agent.get(field), _at(where, field)))]
    for block_where, block in mine:
        record = _block(block, block_where, shown, engram_agent, plan.warnings)
        if record is not None:
            plan.records.append(record)
    for k, passage in enumerate(_list(agent.get("passages"), _at(where, "passages"))):
        plan.records.append(_passage(passage, f"{_at(where, 'passages')}[{k}]", shown, engram_agent, plan.warnings))
    chat = _KEY_UNSAFE.sub("-", engram_agent or "agent")[:128]
    _messages(plan, _list(agent.get("messages"), _at(where, "messages")), _at(where, "messages"),
              conversation_key("letta", chat), engram_agent)
    config = [what for what, present in (
        ("its system prompt", isinstance(agent.get("system"), str) and agent["system"].strip()),
        (f"{len(agent.get('tool_ids') or agent.get('tools') or [])} tools", agent.get("tool_ids") or agent.get("tools")),
        ("tool rules", agent.get("tool_rules")), ("llm_config", agent.get("llm_config"))) if present]
    if config:
        plan.warnings.append(f"{where or 'document'} ({shown}): {', '.join(config)} not imported: Letta's "
                             "configuration of the agent, not its memory")


def _not_imported(plan: Plan, data: Mapping[str, Any], where: str, fields: tuple[str, ...]) -> None:
    held = [f"{len(data[f])} {f}" for f in fields if isinstance(data.get(f), list) and data[f]]
    if held:
        plan.warnings.append(f"{where or 'document'}: {', '.join(held)} not imported (not memory engram keeps)")


def _block(block: Any, where: str, agent: str, engram_agent: str | None, warnings: list[str]) -> Record | None:
    if not isinstance(block, Mapping):
        raise fail(where, f"got {type(block).__name__}", "a memory block object")
    label = require_text(block.get("label"), f"{where}.label")
    value = block.get("value")
    if not isinstance(value, str):
        raise fail(f"{where}.value", f"got {type(value).__name__}", "the block's text")
    if not value.strip():
        warnings.append(f"{where}: the {label!r} block is empty; nothing to import")
        return None
    limit = block.get("limit")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
        raise fail(f"{where}.limit", f"got {limit!r}"[:200], "a number of characters")
    own = metadata(block.get("metadata", block.get("metadata_")), f"{where}.metadata")
    provenance = {k: v for k, v in (
        ("agent", agent), ("label", label), ("block", optional_text(block.get("id"), f"{where}.id")),
        ("limit", limit), ("description", optional_text(block.get("description"), f"{where}.description")),
        ("read_only", True if block.get("read_only") is True else None)) if v is not None}
    created = timestamp(block.get("created_at"), f"{where}.created_at")
    return Record(
        source_id=f"block:{label}:{hashlib.sha256(value.encode()).hexdigest()}",
        where=where,
        content=value,
        key=f"letta-{slug(label)}",
        category=Category.CORE,
        importance=0.8,  # always in the agent's context in Letta
        tags=tags([label], f"{where}.label"),
        metadata=with_provenance(own, KIND, provenance, where, warnings),
        created_at=created,
        updated_at=timestamp(block.get("updated_at"), f"{where}.updated_at") or created,
        agent=engram_agent,
        fields={"content": ".value", "key": ".label"},
    )


def _passage(passage: Any, where: str, agent: str, engram_agent: str | None, warnings: list[str]) -> Record:
    if not isinstance(passage, Mapping):
        raise fail(where, f"got {type(passage).__name__}", "an archival passage object")
    text = passage.get("text")
    if not isinstance(text, str) or not text.strip():
        raise fail(f"{where}.text", f"got {text!r}"[:200], "the passage's text")
    passage_id = optional_text(passage.get("id"), f"{where}.id")
    own = metadata(passage.get("metadata", passage.get("metadata_")), f"{where}.metadata")
    provenance = {"agent": agent, **({"passage": passage_id} if passage_id else {})}
    created = timestamp(passage.get("created_at"), f"{where}.created_at")
    return Record(
        source_id=f"passage:{passage_id}" if passage_id else f"passage:{hashlib.sha256(text.encode()).hexdigest()}",
        where=where,
        content=text,
        category=Category.KNOWLEDGE,
        tags=tags(passage.get("tags"), f"{where}.tags"),
        metadata=with_provenance(own, KIND, provenance, where, warnings),
        created_at=created,
        updated_at=timestamp(passage.get("updated_at"), f"{where}.updated_at") or created,
        agent=engram_agent,
        id_field="id" if passage_id else None,
        fields={"content": ".text"},
    )


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
    for n, part in enumerate(_list(value, where)):
        if not isinstance(part, Mapping):
            raise fail(f"{where}[{n}]", f"got {type(part).__name__}", "a content part object")
        kind = part.get("type")
        if kind == "text":
            text = part.get("text")
            if not isinstance(text, str):
                raise fail(f"{where}[{n}].text", f"got {type(text).__name__}", "text")
            texts.append(text)
        elif kind == "reasoning" and isinstance(part.get("reasoning"), str):
            reasoning.append(part["reasoning"])
        else:
            other += 1
    return "\n".join(texts), reasoning, other


def _messages(plan: Plan, messages: list[Any], where: str, key: str, agent: str | None) -> None:
    calls: set[str] = set()  # the tool calls this conversation made so far
    replies: dict[str, int] = {}  # a send_message call's id -> the place in plan.history of the reply it became
    left_out: dict[str, int] = {}

    def leave_out(what: str, n: int = 1) -> None:
        left_out[what] = left_out.get(what, 0) + n

    for i, message in enumerate(messages):
        at_ = f"{where}[{i}]"
        if not isinstance(message, Mapping):
            raise fail(at_, f"got {type(message).__name__}", "a message object")
        role = message.get("role")
        if role not in _ROLES:
            raise fail(f"{at_}.role", f"{role!r} is not a Letta message role"[:200], ", ".join(_ROLES))
        at = timestamp(message.get("created_at"), f"{at_}.created_at")
        if at is None:
            raise fail(f"{at_}.created_at", "is missing", "an ISO 8601 time")
        text, reasoning, other = _content(message.get("content"), f"{at_}.content")
        if other:
            leave_out("parts other than text (images, redacted reasoning)", other)
        if role in ("system", "approval", "summary"):
            leave_out(f"{role} messages")
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
    returns = _list(message.get("tool_returns"), f"{where}.tool_returns")
    if len(returns) > 1 or (returns and not text.strip()):
        for n, ret in enumerate(returns):
            place = f"{where}.tool_returns[{n}]"
            if not isinstance(ret, Mapping):
                raise fail(place, f"got {type(ret).__name__}", "a tool return object")
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
