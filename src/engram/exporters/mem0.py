"""engram -> mem0: the ``{"results": [...]}`` document mem0's ``get_all()`` returns.

Each memory becomes ``{id, memory, hash, metadata, categories, created_at, updated_at, user_id,
run_id, engram}``: the id mem0 gave it when it came from mem0 (its source is ``mem0``: what the
import kept in ``metadata["mem0"]``), else engram's; the metadata is the memory's own, all of it,
as mem0 had it (the import's provenance left out, an own ``metadata["mem0"]`` put back; an own
``metadata["engram"]`` is the memory's like any other key), so mem0 -> engram -> mem0 gives it back
unchanged; the hash is the MD5 of the text, as mem0 computes it; tags are categories; the agent is
the user (and ``agent_id`` when the memory came with one), the session the run (for a memory the
mem0 facade made, its ``user_id``/``agent_id``/``run_id``, ``actor_id`` and ``role`` as the facade keeps
them, out of the metadata: ``compat.mem0.mem0_fields``); mem0's other fields
the import kept (``app_id``, the platform's ``owner``, ``organization``, ``structured_attributes``,
``expiration_date``, ``immutable``, ...: ``KEPT``) are given back as they came, and only those (what engram
keeps there for the next import, the digest and tags it brought, is engram's); engram's own fields
(key, category, type, importance, links, related entity, search context and source) travel in the
item's ``engram`` entry, outside the user's metadata, so nothing is lost and nothing of the user's is
overwritten.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from engram.compat.mem0 import mem0_fields
from engram.engine import Engram
from engram.exporters import visible
from engram.importers.base import exported_source
from engram.importers.mem0 import ENGRAM_ENTRY, KEPT, KIND, PROMOTED, mem0_metadata
from engram.model import Memory
from engram.temporal.instants import python_isoformat


def dump(engram: Engram) -> str:
    return json.dumps({"results": [_item(m) for m in visible(engram)]}, ensure_ascii=False, indent=1)


def _item(memory: Memory) -> dict[str, Any]:
    metadata, origin = mem0_metadata(memory)
    # A memory the mem0 facade made keeps mem0's ids (and actor_id, role) at the top of its metadata,
    # where the facade filters on them: they are the item's own fields, as mem0 gives them, and not
    # its metadata (which the facade's import refuses ids in, and engram import would keep as the user's).
    facade = mem0_fields(memory)
    if facade is not None:
        metadata = facade[1]
    else:
        # Imported from mem0 into another agent than its owner's (``--into-agent``): the ids engram
        # import put at the top of the metadata are mem0's item fields, given below from the origin.
        metadata = {k: v for k, v in metadata.items() if not (k in PROMOTED and k in origin and str(origin[k]) == str(v))}
    item: dict[str, Any] = {
        "id": origin.get("id") or memory.id,
        "memory": memory.content,
        "hash": hashlib.md5(memory.content.encode()).hexdigest(),  # noqa: S324 - mem0's content hash, not security
        "metadata": metadata,
        "categories": list(memory.tags),
        "created_at": python_isoformat(memory.created_at),
        "updated_at": python_isoformat(memory.updated_at),
    }
    if facade is None:
        item["user_id"] = origin.get("user_id") or memory.scope.agent
    if facade is None and origin.get("agent_id"):
        item["agent_id"] = origin["agent_id"]
    # The rest of mem0's fields the import kept as it found them (app, the platform's owner,
    # organization, structured_attributes, expiry, ...), so mem0 -> engram -> mem0 keeps them; the
    # ids, hash and run come from the memory as it is now (above, below).
    for field in KEPT:
        if field in origin and field not in ("id", "hash", "user_id", "agent_id", "run_id"):
            item[field] = origin[field]
    if memory.scope.session:  # an import before mem0's run was kept in the metadata made it a session
        item["run_id"] = memory.scope.session
    elif facade is None and origin.get("run_id"):
        item["run_id"] = origin["run_id"]
    item.update(facade[0] if facade is not None else {})  # the facade's ids, as they stand
    # The memory's source in engram (``exported_source``); none for one from mem0 itself, nor a missing one.
    source = exported_source(memory, KIND, origin)
    item[ENGRAM_ENTRY] = {"id": memory.id, "key": memory.key, "category": memory.category.value, "type": memory.type,
                          "importance": memory.importance, "scope": str(memory.scope), "links": list(memory.links),
                          "related_entity": memory.related_entity, "search_context": memory.search_context,
                          **({"source": source} if source else {})}
    return item
