"""What a reader sees of a memory's links: only the linked memories it may read itself.

A link can join memories that no single reader sees both of: agent A's memory and agent B's both
link to a global one, so the global memory's stored ``links`` name a memory of each agent (files
sync and imports can also link across agents directly). Stores return every link (they are the
operator's view: file sync, exports, migration); ``Engram`` passes each memory it hands out
through ``narrow_links`` with the filter of what its view may read, so one agent never learns
another's memories, not even their ids, through any door (library, CLI, HTTP, MCP, snapshots).

Links to memories already at hand (the same answer) need no question: the reader was given them;
nor do those the caller already knows readable (recall's link expansion has just asked about
most of them). The others are checked with one ``matching_ids`` query; a memory without links
costs nothing. Recall narrows its hits itself (``search.recall``, with the scopes it searched).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from engram.model import Hit, Memory, MemoryFilter
from engram.store.base import MemoryStore

if TYPE_CHECKING:
    from engram.audit import AuditEntry


def narrow_links(
    store: MemoryStore, memories: Sequence[Memory], readable: MemoryFilter, known: Collection[str] = ()
) -> list[Memory]:
    """``memories`` (all readable through ``readable``) with ``links`` kept to readable memories;
    ``known``: ids the caller knows ``readable`` lets through."""
    at_hand = {m.id for m in memories}
    unknown = set().union(*(m.links for m in memories)).difference(at_hand, known)
    allowed = at_hand.union(known)
    if unknown:
        allowed.update(store.matching_ids(list(unknown), readable))
    return [m if allowed.issuperset(m.links) else replace(m, links=tuple(i for i in m.links if i in allowed))
            for m in memories]


def narrow_hits(
    store: MemoryStore, hits: Sequence[Hit], readable: MemoryFilter, known: Collection[str] = ()
) -> list[Hit]:
    """Recall's hits with their memories' links narrowed as ``narrow_links`` does."""
    memories = narrow_links(store, [hit.memory for hit in hits], readable, known)
    return [hit if m is hit.memory else replace(hit, memory=m) for m, hit in zip(memories, hits, strict=True)]


def narrow_audit(store: MemoryStore, entries: Sequence[AuditEntry], readable: MemoryFilter) -> list[AuditEntry]:
    """Audit entries with the links a ``forgotten`` row keeps (the memory whole, as the store gave
    it) narrowed to memories ``readable`` lets through, as the memory's own links were while it was
    stored: a global memory's row is read by every agent, and its links may name any agent's
    memories. The trail itself stays whole (the operator's record); one ``matching_ids`` query."""
    links = {n: e.detail["links"] for n, e in enumerate(entries) if e.action == "forgotten"
             and isinstance(e.detail, dict) and isinstance(e.detail.get("links"), list) and e.detail["links"]}
    if not links:
        return list(entries)
    allowed = store.matching_ids(sorted({str(i) for ids in links.values() for i in ids}), readable)
    return [e if n not in links or allowed.keys() >= set(links[n])
            else replace(e, detail={**(e.detail or {}), "links": [i for i in links[n] if i in allowed]})
            for n, e in enumerate(entries)]
