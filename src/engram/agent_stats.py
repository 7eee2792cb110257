"""The figures one agent may see about the store: what its own view holds, never the store's totals.

``MemoryStore.stats`` answers for the whole store (every agent's memories, links and vectors, the
file's size): that is the operator's view, for whoever holds the database itself. An agent that
reaches engram through a door (an HTTP token, an MCP session, ``engram --agent``) sees only its
memories, its session's and global ones, and a count is data too: how many memories another
agent holds is not its business. ``Engram.visible_stats`` gathers these figures once, so every
door that shows stats shows the same numbers under the same name.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from engram.model import KNOWN_TYPES, Category, MemoryFilter, Scope

if TYPE_CHECKING:
    from engram.engine import Engram


@dataclass(frozen=True, slots=True)
class AgentStats:
    """What ``agent`` (in ``session``, if any) sees: ``memories`` counts its visible scopes (the
    session, the agent, global); ``by_scope`` names only this agent's scopes and global; ``links``
    join two visible memories; ``vectors`` are those of the visible memories. ``backend``,
    ``location`` and ``embedding_identity`` describe the store, not anyone's data."""

    agent: str | None
    session: str | None
    backend: str
    location: str
    memories: int
    by_category: dict[str, int]
    by_type: dict[str, int]
    by_scope: dict[str, int]
    links: int
    vectors: int
    embedding_identity: str | None

    @property
    def embedding_coverage(self) -> float | None:
        """The share of visible memories that have a vector (None when there are none)."""
        return round(self.vectors / self.memories, 4) if self.memories else None


def gather(engram: Engram, visible: MemoryFilter) -> AgentStats:
    """``engram``'s view in figures (see ``AgentStats``); ``visible`` is the filter of what it reads.

    Two passes, each over this agent's and global memories only: one count (``count_by_kind``)
    over every scope ``by_scope`` names (its other sessions too, ``sessions_of``), whose visible
    scopes' rows give the total, categories, types and vectors; and the links. A count per
    figure (and the store's whole ``stats`` for its scope names) took ~15 queries, several of them
    over every agent's memories."""
    store = engram.store
    agent = engram.scope.agent
    own = () if agent is None else (Scope(agent), *(Scope(agent, s) for s in store.sessions_of(agent)))
    counted = replace(visible, scopes=tuple(dict.fromkeys((*visible.scopes, Scope(), *own))))
    seen = set(visible.scopes)
    memories = vectors = 0
    by_category = dict.fromkeys((c.value for c in Category), 0)
    by_type = dict.fromkeys((*KNOWN_TYPES, "other"), 0)
    by_scope: dict[str, int] = {}
    for kind in store.count_by_kind(counted):
        label = str(kind.scope)
        by_scope[label] = by_scope.get(label, 0) + kind.memories
        if kind.scope in seen:
            memories += kind.memories
            vectors += kind.vectors
            by_category[kind.category] = by_category.get(kind.category, 0) + kind.memories
            by_type[kind.type if kind.type in KNOWN_TYPES else "other"] += kind.memories
    return AgentStats(
        agent=agent, session=engram.scope.session, backend=store.name, location=store.location(),
        memories=memories, by_category=by_category, by_type={t: n for t, n in by_type.items() if n},
        by_scope=dict(sorted(by_scope.items())), links=store.count_links(visible), vectors=vectors,
        embedding_identity=store.vector_identity(),
    )
