"""sclaw's SQLite memory (``{data_dir}/memory.db``, or ``{data_dir}/agents/<agent>/memory.db``).

Tables (sclaw's ``memory.sqlite`` module): ``facts`` (``id``, ``content``, ``source``: the session
it was extracted in, ``tags`` and ``metadata`` as JSON, ``created_at`` RFC 3339), ``messages``
(``session_id``, ``seq``, ``role``, ``content``, ``name``, ``tool_id``, ``tool_calls`` JSON,
``is_error``, ``created_at``) and ``summaries`` (``session_id``, ``summary``, ``updated_at``).
Mapping: each fact is one memory (its tags and metadata kept, so ``list --meta key=value`` finds
what ``SearchByMetadata`` did; its id and source session under ``metadata["sclaw"]``, and a fact's
own ``sclaw`` metadata under ``metadata["sclaw"]["own"]``, with a warning). sclaw replaces a fact
in place under its id, so the id alone names its memory, and a re-import brings the fact's new text
and metadata to it (unless its text was changed in engram since: kept), as Zep's rewrites are
brought; sclaw dates no change, so its tags stay as the first import gave them. Messages go
to engram's conversation history under their ``session_id``, which is already sclaw's persistence
key ``channel:chatID:threadID`` (a session id that is not one becomes ``sclaw:<id>``), in ``seq``
order at their times; a tool message answers its ``tool_id``. Each summary becomes that
conversation's history summary. A tool result whose call sclaw already trimmed away is reported
and left out: engram's history never holds an answer without its call.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engram import jsondoc
from engram.db.foreign import SCLAW
from engram.errors import ValidationError
from engram.history.keys import conversation_key, normal_key, shown_key
from engram.importers.base import (
    HistoryEntry,
    HistorySummary,
    Plan,
    Record,
    fail,
    metadata,
    tags,
    timestamp,
    with_provenance,
    wrong_value,
)
from engram.importers.sqlite_source import open_readonly, optional_text, rows, text
from engram.model import parse_tool_calls

KIND = SCLAW


def read(path: Path) -> Plan:
    """The plan of the sclaw database at ``path``; raises ``SnapshotError`` naming the table, row
    and column of a malformed value, before anything is imported."""
    plan = Plan(KIND, "sclaw")
    with open_readonly(path) as conn:
        for where, row in rows(conn, "facts", ("id", "content"), ("source", "tags", "metadata", "created_at"),
                               kind=KIND):
            plan.records.append(_fact(where, row, plan.warnings))
        messages = list(rows(conn, "messages", ("session_id", "seq", "role", "content"),
                             ("name", "tool_id", "tool_calls", "is_error", "created_at"), kind=KIND))
        plan.history = _history(messages, plan.warnings)
        for where, row in rows(conn, "summaries", ("session_id", "summary"), kind=KIND):
            summary = text(row["summary"], f"{where}.summary")
            if summary.strip():
                plan.summaries.append(HistorySummary(where, _conversation(row["session_id"], where), summary))
    return plan


def _fact(where: str, row: dict[str, Any], warnings: list[str]) -> Record:
    fact_id = text(row["id"], f"{where}.id", empty=False)
    own = metadata(_json(row.get("metadata"), f"{where}.metadata", "a JSON object"), f"{where}.metadata")
    source = optional_text(row.get("source"), f"{where}.source")
    at = timestamp(row.get("created_at"), f"{where}.created_at")
    return Record(
        source_id=fact_id,
        where=where,
        content=text(row["content"], f"{where}.content"),
        tags=tags(_tag_list(row.get("tags"), f"{where}.tags"), f"{where}.tags"),
        metadata=with_provenance(own, "sclaw", {"id": fact_id, **({"source": source} if source else {})}, where,
                                 warnings),
        created_at=at,
        updated_at=at,
        id_field="id",
        # sclaw's Index replaces a fact in place under its id (INSERT OR REPLACE), its text, tags and
        # metadata, and its created_at too when the caller gives none: the id alone is the fact's
        # identity, and a re-import brings a changed text and metadata to the memory the first one
        # made, as Zep's rewritten facts do (``apply._changes``: a text changed in engram since is kept).
        time_in_id=False, kept_as="id",  # an earlier build's id held a time sclaw may have moved: found by it
        refresh=True,
    )


def _history(messages: list[tuple[str, dict[str, Any]]], warnings: list[str]) -> list[HistoryEntry]:
    entries: list[HistoryEntry] = []
    calls: dict[str, set[str]] = {}  # the tool calls each conversation made so far
    for where, row in sorted(messages, key=lambda item: (str(item[1]["session_id"]), _seq(item[1]["seq"], item[0]))):
        key = _conversation(row["session_id"], where)
        role = text(row["role"], f"{where}.role")
        try:
            made = parse_tool_calls(_json(row.get("tool_calls"), f"{where}.tool_calls", "a JSON list of tool calls"))
        except ValidationError as exc:
            raise fail(f"{where}.{exc.field}", exc.problem, exc.allowed) from None
        answers = optional_text(row.get("tool_id"), f"{where}.tool_id") or None
        if role == "tool" and answers is not None and answers not in calls.get(key, set()):
            warnings.append(f"{where}: the tool result for {answers!r} has no call before it in {shown_key(key)} "
                            "(sclaw trimmed it); not imported")
            continue
        calls.setdefault(key, set()).update(call.id for call in made)
        at = timestamp(row.get("created_at"), f"{where}.created_at")
        if at is None:
            raise fail(f"{where}.created_at", "is missing", "an RFC 3339 time")
        name = optional_text(row.get("name"), f"{where}.name")
        kept = {"session_id": row["session_id"], "seq": row["seq"], **({"name": name} if name else {}),
                **({"is_error": True} if _flag(row.get("is_error"), f"{where}.is_error") else {})}
        entries.append(HistoryEntry(where, key, role, text(row["content"], f"{where}.content"), at,
                                    {"sclaw": kept}, tool_calls=list(made) or None,
                                    tool_call_id=answers if role == "tool" else None))
    return entries


def _flag(value: Any, where: str) -> bool:
    """sclaw's INTEGER 0/1 flag; text a program wrote there instead ('true', 'false', '1') read as
    what it says, since SQLite keeps text an INTEGER column cannot convert (and 'false' is truthy)."""
    if value is None or isinstance(value, int):
        return bool(value)
    words = {"0": False, "1": True, "false": False, "true": True}
    if isinstance(value, str) and value.strip().lower() in words:
        return words[value.strip().lower()]
    raise fail(where, f"{jsondoc.shown(value)} is not a flag", "0 or 1 (or the text true / false)")


def _conversation(session: Any, where: str) -> str:
    """sclaw's persistence key ``channel:chatID:threadID`` as engram's conversation key (the same
    form); a session id that is not one is the chat ``sclaw:<id>``."""
    session = text(session, f"{where}.session_id", empty=False)
    try:
        return normal_key(session)
    except ValidationError:
        pass
    try:
        return conversation_key("sclaw", session)
    except ValidationError as exc:
        raise fail(f"{where}.session_id", f"{jsondoc.shown(session)} is no conversation key", exc.allowed) from None


def _seq(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise fail(f"{where}.seq", f"got {value!r}"[:200], "an INTEGER")
    return value


def _json(value: Any, where: str, allowed: str) -> Any:
    """A JSON column's value (NULL and "" are absent)."""
    if value is None or value == "":
        return None
    try:
        return jsondoc.loads(text(value, where))
    except json.JSONDecodeError as exc:
        raise fail(where, f"malformed JSON: {exc.msg} (column {exc.colno})", allowed) from None


def _tag_list(value: Any, where: str) -> list[str] | None:
    found = _json(value, where, "a JSON list of tags")
    if found is not None and (not isinstance(found, list) or not all(isinstance(t, str) for t in found)):
        raise wrong_value(where, found, "a JSON list of tags")
    return found
