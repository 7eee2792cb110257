"""Clawless: its bridge home (``~/.clawless``), or its ``conversation-history.jsonl`` alone.

``conversation-history.jsonl`` holds one exchange per line, ``{"userMessage", "botResponse",
"chatId", "platform", "timestamp"}``. Each line becomes two messages (user, then assistant) in
engram's conversation history under the key ``platform:chatId`` (``clawless:chatId`` without a
platform), at the line's time, so Clawless's semantic recall over conversations keeps working on
them. ``MEMORY.md``, the operator's notes injected into every prompt, becomes the operator notes of
engram's own ``MEMORY.md`` (added once; a re-import does not add them again). Clawless's semantic
SQLite store is derived data and is not read: engram indexes the history itself.
"""

from __future__ import annotations

from collections.abc import Mapping

from engram.errors import ValidationError
from engram.files.memory_md import operator_notes
from engram.history.keys import conversation_key
from engram.importers.base import Files, HistoryEntry, Plan, content_text, fail, json_lines, optional_text, timestamp

KIND = "clawless"
HISTORY = "conversation-history.jsonl"


def looks_like_folder(files: Files) -> bool:
    return HISTORY in files


def looks_like(first_line: object) -> bool:
    return isinstance(first_line, Mapping) and "userMessage" in first_line and "botResponse" in first_line


def read(files: Files) -> Plan:
    """``files``: the home folder's ``conversation-history.jsonl`` and/or ``MEMORY.md``."""
    plan = Plan(KIND, "clawless")
    if "MEMORY.md" in files:
        # Lines joining engram's own MEMORY.md, whose line endings are \n (it is read back as text,
        # which a re-import's "already there" check compares with): a Windows file's \r\n too.
        notes = files["MEMORY.md"].replace("\r\n", "\n").replace("\r", "\n")
        plan.operator_notes = operator_notes(notes) or None
    if HISTORY in files:
        plan.history = _history(files[HISTORY], HISTORY)
    if not plan.history and plan.operator_notes is None:
        raise fail("path", f"no {HISTORY} or MEMORY.md with content", "a Clawless home folder (~/.clawless)")
    return plan


def _history(text: str, name: str) -> list[HistoryEntry]:
    entries: list[HistoryEntry] = []
    for n, where, item in json_lines(text, name):
        chat = optional_text(item.get("chatId"), f"{where}.chatId") or "default"
        platform = optional_text(item.get("platform"), f"{where}.platform") or "clawless"
        try:
            key = conversation_key(platform, chat)
        except ValidationError as exc:
            raise fail(f"{where}.{'platform' if 'channel' in exc.field else 'chatId'}", exc.problem, exc.allowed) from None
        at = timestamp(item.get("timestamp"), f"{where}.timestamp")
        if at is None:
            raise fail(f"{where}.timestamp", "is missing", "an ISO 8601 time or epoch milliseconds")
        meta = {"clawless": {"chatId": chat, "platform": platform, "line": n}}
        entries.append(HistoryEntry(where, key, "user", content_text(item.get("userMessage"), f"{where}.userMessage"),
                                    at, meta))
        entries.append(HistoryEntry(where, key, "assistant",
                                    content_text(item.get("botResponse"), f"{where}.botResponse"), at, meta))
    return entries
