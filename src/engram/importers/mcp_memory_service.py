"""mcp-memory-service (doobidoo): the JSON its exporter writes for sync between machines.

``{"export_metadata": {"source_machine", "export_timestamp", ...}, "memories": [{"content",
"content_hash", "tags", "memory_type", "metadata", "created_at", "updated_at", "created_at_iso",
"updated_at_iso"}, ...]}``. The content hash is the source identity (the service deduplicates by
it too), the memory's id fixed by it alone (not by its creation time, which the service may change
under the same hash), and is kept, with the source machine, under ``metadata["mcp_memory_service"]`` (a memory's
own ``mcp_memory_service`` metadata is kept there as ``metadata["mcp_memory_service"]["own"]``, with
a warning); tags (a list, or its comma-separated text) and the memory type carry over; the float
times are kept (the ISO ones are used when the floats are missing). An ``agent_id`` names the
engram agent. The service updates a memory's tags and metadata in place, under the same hash, with
a later ``updated_at``: every record is marked ``refresh``, dated by it (else ``created_at``), so a
re-import of a later export brings the new tags (a tag added in engram stays), metadata (a key the
service no longer gives removed) and memory type to the memory, as mem0's updates are brought,
unless it changed in engram after the service's change (``apply._changes``); the same or an older
export changes nothing.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from engram import jsondoc
from engram.importers.base import (
    Plan,
    Record,
    agent_name,
    content_text,
    fail,
    metadata,
    tags,
    timestamp,
    type_word,
    with_provenance,
    wrong_type,
)

KIND = "mcp-memory-service"
ENTRY = "mcp_memory_service"  # the memory's metadata entry holding the service's hash (``with_provenance``)


def looks_like(data: Any) -> bool:
    return isinstance(data, Mapping) and isinstance(data.get("export_metadata"), Mapping) and isinstance(
        data.get("memories"), list)


def read(text: str) -> Plan:
    try:
        data = jsondoc.loads(text)
    except json.JSONDecodeError as exc:
        raise fail(f"line {exc.lineno}", f"malformed JSON: {exc.msg} (column {exc.colno})",
                   "an mcp-memory-service export") from None
    if not looks_like(data):
        raise fail("document", "no export_metadata and memories list", '{"export_metadata": {...}, "memories": [...]}')
    machine = data["export_metadata"].get("source_machine")
    plan = Plan(KIND, "mcp-memory-service", entry=ENTRY)
    for i, item in enumerate(data["memories"]):
        where = f"memories[{i}]"
        if not isinstance(item, Mapping):
            raise wrong_type(where, item, "a JSON object per memory")
        content = content_text(item.get("content"), f"{where}.content")
        # Without the service's hash, the text's stands in for it: of the text without the
        # whitespace around it (as the service hashes it, and as imports before the content
        # was kept byte for byte made it), so a re-import finds what an earlier one stored.
        content_hash = item.get("content_hash") or hashlib.sha256(content.strip().encode()).hexdigest()
        if not isinstance(content_hash, str):
            raise wrong_type(f"{where}.content_hash", content_hash, "text")
        named = {"created_at": ".created_at", "updated_at": ".updated_at"}  # the field each time was read from
        created = timestamp(item.get("created_at"), f"{where}.created_at")
        if created is None:
            created, named["created_at"] = timestamp(item.get("created_at_iso"), f"{where}.created_at_iso"), ".created_at_iso"
        updated = timestamp(item.get("updated_at"), f"{where}.updated_at")
        if updated is None:
            updated, named["updated_at"] = timestamp(item.get("updated_at_iso"), f"{where}.updated_at_iso"), ".updated_at_iso"
        kept = {"content_hash": content_hash, "memory_type": item.get("memory_type"), "source_machine": machine}
        plan.records.append(Record(
            source_id=content_hash, where=where, content=content,
            type=type_word(item.get("memory_type"), "learned"),
            tags=tags(item.get("tags"), f"{where}.tags"),
            metadata=with_provenance(metadata(item.get("metadata"), f"{where}.metadata"), ENTRY,
                                     {k: v for k, v in kept.items() if v is not None}, where, plan.warnings),
            created_at=created, updated_at=updated,
            agent=agent_name(item.get("agent_id"), f"{where}.agent_id", "agent"),
            id_field="content_hash" if item.get("content_hash") else "content",
            # The content hash alone is the memory's identity, as it is the service's: the service
            # may move a memory's creation under the same hash (its update_memory_metadata with
            # preserve_timestamps=False), and a re-import of that export must find what the first made.
            time_in_id=False,
            # An earlier build's id held the creation time, which the service may have moved since:
            # the memory it made is found by the hash it keeps (``apply._kept_as``).
            kept_as="content_hash", type_kept_as="memory_type",  # the service changes the type in place too
            fields={"key": ".content", **named},  # the key is made from the text
            # The service changes a memory's tags, type and metadata in place under its hash, and
            # dates the change (its update_memory_metadata sets updated_at): a later export brings
            # the tags and metadata to the memory an earlier import made, as mem0's updates are
            # brought (apply._changes: not when the memory changed in engram after the service did).
            refresh=True, changed_at=updated if updated is not None else created,
        ))
    return plan
