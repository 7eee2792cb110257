"""Letta (formerly MemGPT): its Agent File (``.af``), the JSON a Letta server exports an agent as.

Two shapes are in use. The current one (Letta ≥ 0.8) lists ``agents``, ``blocks``, ``tools``,
``groups``, ``files``, ``sources`` and ``mcp_servers``, with file-local ids (``agent-0``,
``block-1``, ``message-3``): an agent names its memory blocks by ``block_ids`` and carries its
``messages``. The first one (Letta 0.6-0.7) is one agent at the top level with its blocks inline
(``core_memory``), its ``messages`` without ids, and a ``version``. Some exports in the wild hold
the document once more as a JSON string (the SDK's text written out as JSON); it is read the same.

Mapping: each memory block (``human``, ``persona``, ...) of an agent is one ``core`` memory keyed
``letta-<label>``, tagged with its label (and the block's ``tags``), its text byte for byte, Letta's block id, label, limit,
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
are the agent's configuration, not its memory. Letta's summary messages are not messages: the
latest of a conversation becomes its summary (``summaries.py``). The agent's name is the engram
agent (the naming rule of every importer), its Letta id when it has no name; a later agent of the
file with the same name is ``<name>-2`` (``_engram_agents``). A block longer than ``max_content_chars`` refuses the import
(``apply.py`` names every such record and the setting to raise), never cut nor split.

Modules: ``blocks`` (blocks and passages), ``messages`` (the conversation, unpacked),
``summaries``, ``common``; this one reads the document and its agents.

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

import json
import re
from collections.abc import Mapping
from typing import Any

from engram import jsondoc
from engram.history.keys import conversation_key, shown_key
from engram.importers.base import Plan, a_list, agent_name, fail, member, optional_text, wrong_type
from engram.importers.letta.blocks import read_block, read_blocks, read_passage
from engram.importers.letta.common import KIND
from engram.importers.letta.messages import read_messages
from engram.text import counted

SUFFIX = ".af"
_SHAPE = ('a Letta Agent File: {"agents": [...], "blocks": [...], ...}, or an older one with one agent\'s '
          '"core_memory" and "messages" at the top')
_KEY_UNSAFE = re.compile(r"[\s:\x00-\x1f\x7f]+")


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
        blocks = read_blocks(data.get("blocks"))
        agents = [(f"agents[{i}]", agent) for i, agent in enumerate(data["agents"])]
        for (where, agent), engram_agent in zip(agents, _engram_agents(plan, agents), strict=True):
            _agent(plan, agent, where, blocks, engram_agent)
        _not_imported(plan, data, "", ("groups", "files", "sources", "mcp_servers"))
    elif isinstance(data, Mapping) and isinstance(data.get("core_memory"), list):
        _agent(plan, data, "", {}, _engram_agents(plan, [("", data)])[0])
    else:
        raise fail("document", "no Letta agent", _SHAPE)
    return plan


def _engram_agents(plan: Plan, agents: list[tuple[str, Any]]) -> list[str | None]:
    """Each agent's engram agent: its name (the naming rule of every importer), and for an agent
    whose name an earlier agent of the file has too, ``<name>-2`` (``-3``...: the first such name
    that no agent of the file holds). Two agents with one name are two agents with their own
    blocks and conversations; merged, one's blocks would sit beside the other's as ``letta-human-2``
    and their messages interleave in one conversation. File order decides, so a re-import of the
    same file maps each agent to the same engram agent and finds what the first import stored.
    Letta's export carries no id that outlives the file (``agent-0`` is the file's first agent), so
    across files the name is the identity: a later export of an agent joins what its first import
    made. An agent with no name is named by its Letta id by the same rule (``agent-0``: within a
    file, apart from the others; across files, the file-local id is all there is), with a
    warning; only one with neither joins the importing agent."""
    names: list[str | None] = []
    for where, agent in agents:
        if not isinstance(agent, Mapping):
            raise wrong_type(where or "document", agent, "an agent object")
        name = agent_name(optional_text(agent.get("name"), member(where, "name")), member(where, "name"), "agent")
        if name is None:
            # A nameless agent (Letta always names one; a hand-edited file may not) is its own
            # engram agent too, named by its Letta id, rather than joining the importing agent
            # (its blocks beside that agent's own, as letta-human-2). With no id either, it does join it.
            name = agent_name(optional_text(agent.get("id"), member(where, "id")), member(where, "id"), "agent")
            if name is not None:
                plan.warnings.append(f"{where or 'document'}: an agent with no name; imported as agent {name!r}, "
                                     "named by its Letta id")
        names.append(name)
    taken = {name for name in names if name}
    first: dict[str, str] = {}  # an engram agent -> the place of the agent that has it
    out: list[str | None] = []
    for (where, _), name in zip(agents, names, strict=True):
        if name is None or name not in first:
            if name is not None:
                first[name] = where
            out.append(name)
            continue
        n = 2
        while f"{name[:120]}-{n}" in taken:
            n += 1
        apart = f"{name[:120]}-{n}"
        taken.add(apart)
        out.append(apart)
        plan.warnings.append(f"{where} ({name}): {first[name]} has that name too; kept apart as agent "
                             f"{apart!r} (its memories and conversation {shown_key(_conversation(apart))}); by order "
                             "in the file, so "
                             "importing this file again maps it the same way")
    return out


def _conversation(engram_agent: str | None) -> str:
    """The conversation an agent's messages join: ``letta:<agent>``."""
    return conversation_key("letta", _KEY_UNSAFE.sub("-", engram_agent or "agent")[:128])


def _agent(plan: Plan, agent: Mapping[str, Any], where: str, blocks: Mapping[str, tuple[str, Mapping[str, Any]]],
           engram_agent: str | None) -> None:
    name = optional_text(agent.get("name"), member(where, "name"))
    shown = name or optional_text(agent.get("id"), member(where, "id")) or "agent"
    # Blocks: the current format names shared blocks by id; the first one holds them inline.
    mine: list[tuple[str, Any]] = []
    for k, block_id in enumerate(a_list(agent.get("block_ids"), member(where, "block_ids"))):
        if not isinstance(block_id, str) or block_id not in blocks:
            raise fail(f"{member(where, 'block_ids')}[{k}]", f"{jsondoc.shown(block_id)} names no block in blocks",
                       "the id of one of the file's blocks")
        mine.append(blocks[block_id])
    for field in ("memory_blocks", "core_memory"):
        mine += [(f"{member(where, field)}[{k}]", b) for k, b in enumerate(a_list(agent.get(field), member(where, field)))]
    for block_where, block in mine:
        record = read_block(block, block_where, shown, engram_agent, plan.warnings)
        if record is not None:
            plan.records.append(record)
    for k, passage in enumerate(a_list(agent.get("passages"), member(where, "passages"))):
        plan.records.append(read_passage(passage, f"{member(where, 'passages')}[{k}]", shown, engram_agent, plan.warnings))
    read_messages(plan, a_list(agent.get("messages"), member(where, "messages")), member(where, "messages"),
                  _conversation(engram_agent), engram_agent)
    config = [what for what, present in (
        ("its system prompt", isinstance(agent.get("system"), str) and agent["system"].strip()),
        (counted(len(agent.get('tool_ids') or agent.get('tools') or []), "tool"), agent.get("tool_ids") or agent.get("tools")),
        ("tool rules", agent.get("tool_rules")), ("llm_config", agent.get("llm_config"))) if present]
    if config:
        plan.warnings.append(f"{where or 'document'} ({shown}): {', '.join(config)} not imported: Letta's "
                             "configuration of the agent, not its memory")


def _not_imported(plan: Plan, data: Mapping[str, Any], where: str, fields: tuple[str, ...]) -> None:
    held = [f"{len(data[f])} {f}" for f in fields if isinstance(data.get(f), list) and data[f]]
    if held:
        plan.warnings.append(f"{where or 'document'}: {', '.join(held)} not imported (not memory engram keeps)")

