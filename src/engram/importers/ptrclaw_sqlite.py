"""PtrClaw's SQLite memory (``~/.ptrclaw/memory.db``, its ``sqlite`` backend).

Tables (PtrClaw's "SqliteMemory" schema): ``memories`` (``id``, ``key``, ``content``,
``category``, ``timestamp`` in epoch seconds, ``session_id``, ``embedding``, ``last_accessed``)
and ``memory_links`` (``from_key``, ``to_key``: each link stored in both directions). Mapping,
as engram reads PtrClaw's JSON snapshots: each row is one memory with its key, content and
category (``core``, ``knowledge``, ``conversation``; a conversation entry's type is
``conversation``, as written; any other category, which PtrClaw reads as knowledge (``Core`` too), is knowledge, its
name kept in ``metadata["ptrclaw"]["category"]`` and named in a warning), created and updated at
its ``timestamp``, last accessed at ``last_accessed`` (0 is never); a non-empty ``session_id`` is
kept as ``metadata["session_id"]`` and PtrClaw's id as ``metadata["ptrclaw"]["id"]``. Links join
the memories they name by key; a link naming a key the table does not hold is reported and left
out. Embeddings are not read: the configured embedder makes engram's own.
"""

from __future__ import annotations

from pathlib import Path

from engram import jsondoc
from engram.db.foreign import PTRCLAW
from engram.importers.base import Plan, Record, fail, timestamp
from engram.importers.sqlite_source import open_readonly, optional_text, rows, text
from engram.model import Category
from engram.snapshot import ptrclaw_category
from engram.text import counted

KIND = PTRCLAW


def read(path: Path) -> Plan:
    """The plan of the PtrClaw database at ``path``; raises ``SnapshotError`` naming the table,
    row and column of a malformed value, before anything is imported."""
    plan = Plan(KIND, "ptrclaw")
    with open_readonly(path) as conn:
        others: dict[str, int] = {}  # each category PtrClaw reads as knowledge, and its rows
        for where, row in rows(conn, "memories", ("key", "content", "category", "timestamp"),
                               ("id", "session_id", "last_accessed"), kind=KIND):
            record, own = _record(where, row)
            if own is not None:
                others[own] = others.get(own, 0) + 1
            plan.records.append(record)
        for own, n in others.items():
            plan.warnings.append(f"memories: {counted(n, 'row')} of category {jsondoc.shown(own)} imported as knowledge,"
                                 f" as PtrClaw reads {'it' if n == 1 else 'them'}"
                                 " (the category is kept in metadata.ptrclaw.category)")
        keys = {r.source_id for r in plan.records}
        for where, row in rows(conn, "memory_links", ("from_key", "to_key"), kind=KIND):
            ends = (text(row["from_key"], f"{where}.from_key"), text(row["to_key"], f"{where}.to_key"))
            absent = [end for end in ends if end not in keys]
            if absent:
                plan.warnings.append(f"{where}: no memory has the key {absent[0]!r}; link not imported")
            elif ends[0] != ends[1]:
                plan.links.append(ends)
    return plan


def _record(where: str, row: dict) -> tuple[Record, str | None]:
    """The row's memory, and its category's own name when that is none of engram's."""
    key = text(row["key"], f"{where}.key", empty=False)
    named = text(row["category"], f"{where}.category")
    category, own = ptrclaw_category(named)  # as PtrClaw reads it: "Core" is knowledge, its own name kept
    at = timestamp(_integer(row["timestamp"], f"{where}.timestamp"), f"{where}.timestamp")
    seen = row.get("last_accessed")
    metadata: dict = {}
    session = optional_text(row.get("session_id"), f"{where}.session_id")
    if session:
        metadata["session_id"] = session  # PtrClaw's session scoping, as its snapshots keep it
    if row.get("id") is not None:
        metadata["ptrclaw"] = {"id": text(row["id"], f"{where}.id")}
    if own is not None:
        metadata.setdefault("ptrclaw", {})["category"] = own
    return Record(
        source_id=key,
        where=where,
        content=text(row["content"], f"{where}.content"),
        key=key,
        category=category,
        type="conversation" if category is Category.CONVERSATION else "learned",
        metadata=metadata,
        created_at=at,
        updated_at=at,
        last_accessed=timestamp(_integer(seen, f"{where}.last_accessed"), f"{where}.last_accessed") if seen else None,
        id_field="key",
    ), own


def _integer(value: object, where: str) -> int | float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise fail(where, f"got {jsondoc.shown(value)}"[:200], "seconds since the epoch (an INTEGER)")
    return value
