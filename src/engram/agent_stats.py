"""The figures one agent may see about the store: what its own view holds, never the store's totals.

``MemoryStore.stats`` answers for the whole store (every agent's memories, links and vectors, the
file's size): that is the operator's view, for whoever holds the database itself. An agent that
reaches engram through a door (an HTTP token, an MCP session, ``engram --agent``) sees only its
memories, its sessions' and global ones, and a count is data too: how many memories another
agent holds is not its business. ``Engram.visible_stats`` gathers these figures once, so every
door that shows stats shows the same numbers under the same name.
"""

from __future__ import annotations

from dataclasses import dataclass
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
    """``engram``'s view in figures (see ``AgentStats``); ``visible`` is the filter of what it reads."""
    agent = engram.scope.agent
    kinds = engram.store.count_by_kind(visible)  # one pass for the total, categories and types
    by_category = dict.fromkeys((c.value for c in Category), 0)
    by_type = dict.fromkeys((*KNOWN_TYPES, "other"), 0)
    for (category, type_), n in kinds.items():
        by_category[category] = by_category.get(category, 0) + n
        by_type[type_ if type_ in KNOWN_TYPES else "other"] += n
    whole = engram.store.stats()  # read for its scope labels and the store's address only
    by_scope = {label: engram.count(scope=Scope.parse(label)) for label in sorted(whole.by_scope)
                if _own(label, agent)}
    return AgentStats(
        agent=agent, session=engram.scope.session, backend=whole.backend, location=whole.location,
        memories=sum(kinds.values()), by_category=by_category,
        by_type={t: n for t, n in by_type.items() if n}, by_scope={s: n for s, n in by_scope.items() if n},
        links=engram.store.count_links(visible), vectors=engram.store.count_vectors(visible),
        embedding_identity=whole.embedding_identity,
    )


def _own(label: str, agent: str | None) -> bool:
    """Whether a scope label is global or one of ``agent``'s scopes."""
    if agent is None:
        return label == "global"
    return label in ("global", f"agent:{agent}") or label.startswith(f"session:{agent}/")
