"""mcp-memory-service's own database: the ``sqlite_vec.db`` its default SQLite-vec backend keeps.

Its ``memories`` table holds one row per memory: ``content_hash`` (unique: the service's identity of
a memory, as in its JSON export), ``content``, ``tags`` (one text, the tags joined by commas),
``memory_type``, ``metadata`` (a JSON object as text), ``created_at`` / ``updated_at`` (REAL seconds
since the epoch) beside ``created_at_iso`` / ``updated_at_iso``, and in newer versions
``deleted_at`` (a deleted memory stays as a tombstone until purged), ``last_accessed`` (INTEGER
seconds), ``superseded_by``, ``parent_id``, ``version`` and ``confidence``. The vectors are in
``memory_embeddings``, a sqlite-vec ``vec0`` virtual table, never opened here (engram's embedder
makes its own; Python's ``sqlite3`` may not load the extension), nor is the FTS table. Newer
versions keep links between memories in ``memory_graph`` (``source_hash``, ``target_hash``,
``relationship_type``, ...: the associations its consolidation finds, and typed edges): each joins
the two memories it names, when both are imported (engram links carry no type).

Each row that is not a tombstone becomes the memory the JSON export's item becomes
(``mcp_memory_service.read``): the plan's kind is that reader's, so the same memory imported once
from the export and once from the database is one memory, skipped the second time unless the
service changed its tags or metadata since (a later ``updated_at``): then they are brought to it,
as from a later export. Tombstones are
counted in a warning, not imported: the service no longer shows them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from engram.db.foreign import columns_by_table
from engram.importers import mcp_memory_service
from engram.importers.base import Plan, Record, metadata, tags, timestamp, type_word, with_provenance
from engram.importers.sqlite_source import open_readonly, optional_text, rows, text
from engram.text import counted

_NEEDED = ("content_hash", "content", "tags", "memory_type", "metadata", "created_at")
_OPTIONAL = ("updated_at", "created_at_iso", "updated_at_iso", "deleted_at", "last_accessed", "superseded_by",
             "parent_id", "version", "confidence")
# Columns of newer versions kept, when set, beside the hash in metadata["mcp_memory_service"].
_KEPT = ("superseded_by", "parent_id", "version", "confidence")


def read(path: Path) -> Plan:
    """The plan of the mcp-memory-service database at ``path``; raises ``SnapshotError`` naming the
    table, row and column of a malformed value, before anything is imported."""
    plan = Plan(mcp_memory_service.KIND, "mcp-memory-service", entry=mcp_memory_service.ENTRY)
    deleted = 0
    with open_readonly(path) as conn:
        for where, row in rows(conn, "memories", _NEEDED, _OPTIONAL, kind=mcp_memory_service.KIND):
            if row.get("deleted_at") is not None:
                deleted += 1
                continue
            plan.records.append(_record(where, row, plan.warnings))
        if {"source_hash", "target_hash"} <= columns_by_table(conn).get("memory_graph", set()):
            _links(plan, rows(conn, "memory_graph", ("source_hash", "target_hash"), kind=mcp_memory_service.KIND))
    if deleted:
        plan.warnings.append(f"memories: {counted(deleted, 'deleted memory')} (deleted_at set: mcp-memory-service"
                             " keeps them until purged and shows them no more) not imported")
    return plan


def _links(plan: Plan, edges: Iterator[tuple[str, dict[str, Any]]]) -> None:
    """Each edge between two imported memories as a link (once a pair: the service may keep both
    directions, and several types); the others, naming a deleted or purged memory, counted."""
    imported = {r.source_id for r in plan.records}
    pairs: set[frozenset[str]] = set()
    absent = 0
    for where, row in edges:
        ends = (text(row["source_hash"], f"{where}.source_hash"), text(row["target_hash"], f"{where}.target_hash"))
        if not all(end in imported for end in ends):
            absent += 1
        elif ends[0] != ends[1] and frozenset(ends) not in pairs:
            pairs.add(frozenset(ends))
            plan.links.append(ends)
    if absent:
        plan.warnings.append(f"memory_graph: {counted(absent, 'link')} to a memory not imported (deleted in the service)"
                             " not imported")


def _record(where: str, row: dict[str, Any], warnings: list[str]) -> Record:
    content_hash = text(row["content_hash"], f"{where}.content_hash", empty=False)
    kept: dict[str, Any] = {"content_hash": content_hash}
    memory_type = optional_text(row["memory_type"], f"{where}.memory_type")
    if memory_type:
        kept["memory_type"] = memory_type
    kept.update({c: row[c] for c in _KEPT if row.get(c) is not None})
    named = {"created_at": ".created_at", "updated_at": ".updated_at"}  # the column each time was read from
    created = timestamp(row["created_at"], f"{where}.created_at")
    if created is None:
        created, named["created_at"] = timestamp(row.get("created_at_iso"), f"{where}.created_at_iso"), ".created_at_iso"
    updated = timestamp(row.get("updated_at"), f"{where}.updated_at")
    if updated is None:
        updated, named["updated_at"] = timestamp(row.get("updated_at_iso"), f"{where}.updated_at_iso"), ".updated_at_iso"
    seen = row.get("last_accessed")
    return Record(
        source_id=content_hash, where=where,
        content=text(row["content"], f"{where}.content", empty=False),
        type=type_word(memory_type, "learned"),
        tags=tags(_tag_list(optional_text(row["tags"], f"{where}.tags")), f"{where}.tags"),
        metadata=with_provenance(metadata(optional_text(row["metadata"], f"{where}.metadata") or None, f"{where}.metadata"),
                                 mcp_memory_service.ENTRY, kept, where, warnings),
        created_at=created, updated_at=updated,
        last_accessed=timestamp(seen, f"{where}.last_accessed") if seen else None,  # 0 or NULL: never
        # The hash alone, as the export's (mcp_memory_service.read), an earlier build's id found by it.
        id_field="content_hash", time_in_id=False, kept_as="content_hash", type_kept_as="memory_type",
        fields={"key": ".content", **named},  # the key is made from the text, as from the export's
        # Changed in place under the hash, dated by updated_at: brought as the export's are.
        refresh=True, changed_at=updated if updated is not None else created,
    )


def _tag_list(value: str) -> str | list[Any]:
    """The service writes its tags joined by commas; a JSON list (as some tools writing into its
    table do) is read as the list it is."""
    if value.lstrip().startswith("["):
        try:
            listed = json.loads(value)
        except json.JSONDecodeError:
            return value
        if isinstance(listed, list):
            return listed
    return value
