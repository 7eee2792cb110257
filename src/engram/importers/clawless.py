"""Clawless: its bridge home (``~/.clawless``), or its ``conversation-history.jsonl`` alone.

``conversation-history.jsonl`` holds one exchange per line. Clawless's code writes each as
``{"timestamp", "chat_id", "user_message", "bot_response", "platform"}``; its documentation (and
engram's own ``jsonl`` history backend) spell the same fields ``{"userMessage", "botResponse",
"chatId", "platform", "timestamp"}``: both are read, line by line. Clawless before its JSONL store
wrote the same file as one JSON document, ``{"conversations": [{"timestamp", "chatId",
"userMessage", "botResponse", "platform"}, ...]}`` (indented, so not one record a line): read too,
its entries named ``conversations[N]``. Each exchange becomes two messages (user, then assistant) in
engram's conversation history under the key ``platform:chatId`` (``clawless:chatId`` without a
platform; a ``chatId`` ``chat:thread``, as engram's ``jsonl`` history writes a thread's, is that
thread; one that cannot be a key's part keeps its usable characters and a hash, ``_key``), at the
line's time, so Clawless's semantic recall over conversations keeps working on them.
``MEMORY.md``, the operator's notes injected into every prompt, becomes the operator notes of
engram's own ``MEMORY.md`` (added once; a re-import does not add them again), less the lines of
Clawless's template still at its top (its title, the line saying what the file is, the ``## Notes``
heading its agent appends under), as engram's own template is no note. The template holds no HTML
comments, unlike OpenClaw's, whose comments are hints and are left out: a comment in Clawless's file
is the operator's, and Clawless sends the file to its model as it is, so it is kept. Clawless's
semantic SQLite store is derived data and is not read: engram indexes the history itself.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from engram import jsondoc
from engram.errors import ValidationError
from engram.files.memory_md import operator_notes
from engram.history.clawless_lines import field, is_exchange
from engram.history.keys import conversation_key, usable_part
from engram.importers.base import (
    Files,
    HistoryEntry,
    Plan,
    a_list,
    an_object,
    content_text,
    fail,
    json_lines,
    optional_text,
    timestamp,
)
from engram.model import make_scope

KIND = "clawless"
HISTORY = "conversation-history.jsonl"
# The MEMORY.md Clawless writes when there is none (its ``ensureMemoryFile``), at the file's top.
_TEMPLATE = re.compile(r"\A\s*# Clawless Memory[ \t]*\n\s*This file stores durable memory notes for Clawless\.[ \t]*\n"
                       r"\s*## Notes[ \t]*(?:\n|\Z)")


def looks_like_folder(files: Files) -> bool:
    return HISTORY in files


def looks_like(data: object) -> bool:
    """One exchange (a line of the history, in either spelling), or the older whole-file document
    ``{"conversations": [exchange, ...]}``."""
    if isinstance(data, Mapping) and isinstance(data.get("conversations"), list) and len(data) == 1:
        return all(is_exchange(entry) for entry in data["conversations"][:5])
    return is_exchange(data)


def read(files: Files) -> Plan:
    """``files``: the home folder's ``conversation-history.jsonl`` and/or ``MEMORY.md``."""
    plan = Plan(KIND, "clawless")
    if "MEMORY.md" in files:
        # Lines joining engram's own MEMORY.md, whose line endings are \n (it is read back as text,
        # which a re-import's "already there" check compares with): a Windows file's \r\n too.
        notes = files["MEMORY.md"].replace("\r\n", "\n").replace("\r", "\n")
        plan.operator_notes = operator_notes(_TEMPLATE.sub("", notes, count=1)) or None
    if HISTORY in files:
        plan.history = _history(files[HISTORY], HISTORY)
    if not plan.history and plan.operator_notes is None:
        raise fail("path", f"no {HISTORY} or MEMORY.md with content", "a Clawless home folder (~/.clawless)")
    return plan


def _exchanges(text: str, name: str) -> Iterator[tuple[str, dict[str, int], Mapping[str, Any]]]:
    """Each exchange of the history as ``(where, its place for metadata, item)``: the lines of the
    JSONL store (``{"line": N}``), or the entries of the older ``{"conversations": [...]}``
    document (``{"entry": N}``)."""
    try:
        whole = jsondoc.loads(text)
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, Mapping) and "conversations" in whole and not is_exchange(whole):
        for i, item in enumerate(a_list(whole["conversations"], f"{name} conversations", "a list of exchanges")):
            where = f"{name} conversations[{i}]"
            yield where, {"entry": i}, an_object(item, where, "an exchange object (userMessage, botResponse, ...)")
        return
    for n, where, item in json_lines(text, name):
        yield where, {"line": n}, item


def _key(platform: str, chat: str, where: str) -> str:
    """The conversation ``platform:chatId``. A ``chatId`` holding ``:`` is ``chat:thread``, as
    engram's ``jsonl`` history writes a thread's conversation and reads it back (``slack`` and
    ``C1:T7`` are ``slack:C1:T7``); one that still cannot be a key's parts (``a:b:c``, spaces) keeps
    its usable characters and 8 hex digits of its SHA-256 (``usable_part``), one conversation per
    id, rather than refusing the whole history: the id as written stays in the messages'
    ``metadata["clawless"]["chatId"]``. A platform that cannot be a key's channel is refused,
    naming it (``where``)."""
    try:
        conversation_key(platform, "chat")
    except ValidationError as exc:
        raise fail(where, exc.problem, exc.allowed) from None
    head, _, thread = chat.partition(":")
    try:
        return conversation_key(platform, head, thread or None)
    except ValidationError:
        return conversation_key(platform, usable_part(chat))


def _history(text: str, name: str) -> list[HistoryEntry]:
    entries: list[HistoryEntry] = []
    for where, place, item in _exchanges(text, name):
        chat_id, chat_name = field(item, "chatId")
        chat = optional_text(chat_id, f"{where}.{chat_name}") or "default"
        platform = optional_text(item.get("platform"), f"{where}.platform") or "clawless"
        key = _key(platform, chat, f"{where}.platform")
        at = timestamp(item.get("timestamp"), f"{where}.timestamp")
        if at is None:
            raise fail(f"{where}.timestamp", "is missing", "an ISO 8601 time or epoch milliseconds")
        meta = {"clawless": {"chatId": chat, "platform": platform, **place}}
        # A line engram's jsonl history wrote names its agent: the exchange is that agent's, not the
        # importing agent's (which read another agent's words). Clawless's own lines name none.
        agent = optional_text(item.get("agent"), f"{where}.agent")
        if agent is not None:
            try:
                make_scope(agent, None)
            except ValidationError as exc:
                raise fail(f"{where}.agent", exc.problem, exc.allowed) from None
        for role, field_name in (("user", "userMessage"), ("assistant", "botResponse")):
            said, spelt = field(item, field_name)
            entries.append(HistoryEntry(where, key, role, content_text(said, f"{where}.{spelt}"), at, meta,
                                        agent=agent, fields={"content": f".{spelt}", "created_at": ".timestamp"}))
    return entries
