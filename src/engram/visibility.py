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

By id a view reaches more than it lists: a memory's id names one memory, and the agent holding it
is its owner, so every memory of the view's own agent, in any of its sessions, is reached by its
id (``reaches``), besides the visible scopes; never another agent's. ClawCode's agent remembers
in a session and recalls with its ``session_id``, then forgets, gets or updates by the
``memory_id`` recall gave, from a connection that names no session. A key is unique in its scope
only, so a key is still read in the visible scopes alone (``sessions_holding_key`` says where
else the agent holds it, for a not-found error that does not mislead).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from engram.errors import ValidationError
from engram.model import Hit, Memory, MemoryFilter, Scope
from engram.store.base import MemoryStore

if TYPE_CHECKING:
    from engram.audit import AuditEntry
    from engram.events import MemoryEvent


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


def narrow_event(store: MemoryStore, viewer: Scope, readable: MemoryFilter, event: MemoryEvent) -> MemoryEvent | None:
    """``event`` as a listener subscribed through a view of ``viewer`` hears it (``readable``: what
    the view reads): its memories, and their earlier states, those the view reaches by id
    (``reaches``), with links narrowed as ``narrow_links`` does; None when it names none of them.
    A view shares its engine's event bus (the audit trail and the file mirror hear every agent), so
    unnarrowed, a listener of agent A's view heard B's memories as B stored, changed and forgot
    them. A link or unlink with a memory the view may not read is not heard at all, as its audit
    row is not shown (``without_others_links``): it told A that something it cannot see was linked.
    The ``scope`` of a change another agent made (its store, update or forget of a global memory)
    is heard as ``ANOTHER_AGENT_SCOPE``, as its audit row names it (``without_others_names``)."""
    kept = [m for m in event.memories if reaches(viewer, m.scope)]
    if not kept or (event.kind in ("linked", "unlinked") and len(kept) < len(event.memories)):
        return None
    previous = [m for m in event.previous if reaches(viewer, m.scope)]
    widened = reaching(viewer, readable, [*kept, *previous])
    kept, previous = narrow_links(store, kept, widened), narrow_links(store, previous, widened)
    scope = writer_as_seen(event.scope, viewer)
    if tuple(kept) == event.memories and tuple(previous) == event.previous and scope is event.scope:
        return event
    return replace(event, memories=tuple(kept), previous=tuple(previous), scope=scope)


def without_others_links(entries: Sequence[AuditEntry], viewer: Scope) -> list[AuditEntry]:
    """``entries`` less the link and unlink rows another agent's link left on a memory ``viewer``
    reads, whose other end it may not read: a row names the other end only when its memory's scope
    sees it (``audit.entries_for``), so an empty ``with`` on a row written by another agent (or a
    global view) stands for a memory hidden from this one: its agent's, or one since erased. Shown,
    it told every agent reading a global memory that something it cannot see was linked to it, and
    when. The agent that linked (any session of it) still reads its row."""
    return [e for e in entries if not (e.action in ("linked", "unlinked") and isinstance(e.detail, dict)
                                       and e.detail.get("with") == [] and _actor_agent(e) != viewer.agent)]


# What an agent's view shows for another agent's name in an audit row (``without_others_names``).
ANOTHER_AGENT = "another agent"


# What an agent's view hears as the ``scope`` of another agent's change (``narrow_event``): the
# ``scope`` field is typed ``Scope``, so the audit's words stand in as the agent's name. Not the
# memory's own scope (global): that says the operator made the change, and a listener telling the
# operator's maintenance from an agent's writes would be misled. It says "an agent", none named,
# and can never be a real agent's: a space is not allowed in a name (``make_scope`` and
# ``Scope.parse`` refuse it, so ``for_agent(scope.agent)`` fails rather than opening an agent).
# The session is dropped with the name: a session's name can say whose it is.
ANOTHER_AGENT_SCOPE = Scope(agent=ANOTHER_AGENT)


def writer_as_seen(writer: Scope, viewer: Scope) -> Scope:
    """The scope of the view that made a change as ``viewer`` is told it: ``ANOTHER_AGENT_SCOPE``
    for another agent's (any session of it); ``writer`` itself for the viewer's own agent (any of
    its sessions), a global view's (the operator's: no name in it), or when ``viewer`` is global
    (the operator's, who sees every name, as ``without_others_names`` leaves its trail whole)."""
    if viewer.agent is None or writer.agent is None or writer.agent == viewer.agent:
        return writer
    return ANOTHER_AGENT_SCOPE


def without_others_names(entries: Sequence[AuditEntry], viewer: Scope) -> list[AuditEntry]:
    """``entries`` with another agent's name replaced by ``ANOTHER_AGENT``: the ``actor_scope`` of
    a row another agent wrote (its store, update or forget of a global memory every agent reads),
    and a move's ``from`` when the memory left another agent's scope (promoted to global). Shown,
    they told every agent reading a global memory's trail which agent wrote it and when: one agent
    learns no other agent's name or actions. The viewer's own rows (any session of its agent) keep
    theirs; a global view (the operator's, no agent) reads the trail whole, as ``stats`` does."""
    if viewer.agent is None:
        return list(entries)
    shown = []
    for e in entries:
        if _actor_agent(e) not in (None, viewer.agent):
            e = replace(e, actor_scope=ANOTHER_AGENT)
        if e.action == "moved" and isinstance(e.detail, dict) and _scope_agent(e.detail.get("from")) not in (None, viewer.agent):
            e = replace(e, detail={**e.detail, "from": ANOTHER_AGENT})
        shown.append(e)
    return shown


def _scope_agent(scope: object) -> str | None:
    """The agent of a scope as the trail writes it (``str(Scope)``); None for global or not a scope."""
    if not isinstance(scope, str):
        return None
    try:
        return Scope.parse(scope).agent
    except ValidationError:
        return None


def _actor_agent(entry: AuditEntry) -> str | None:
    """The agent whose view wrote ``entry``; None for a global view, or a scope engram did not write."""
    return _scope_agent(entry.actor_scope)


def reaches(viewer: Scope, scope: Scope) -> bool:
    """Whether a view of ``viewer`` reaches a memory stored in ``scope`` by its id: the scopes it
    sees, and every session of its own agent (see the module's docstring)."""
    return scope in viewer.visible() or (viewer.agent is not None and scope.agent == viewer.agent)


def reaching(viewer: Scope, readable: MemoryFilter, memories: Iterable[Memory]) -> MemoryFilter:
    """``readable`` (what ``viewer`` reads) widened to the scopes of ``memories`` it reaches by id
    (``reaches``): the filter an id check of those memories, or of the links they are shown,
    reads with. A memory reached in another session of the agent is so shown as that session
    shows it. ``readable`` itself when none is outside it (the common case: no new filter)."""
    extra = [m.scope for m in memories
             if isinstance(m.scope, Scope) and m.scope not in readable.scopes and reaches(viewer, m.scope)]
    if not extra:
        return readable
    return replace(readable, scopes=tuple(dict.fromkeys((*readable.scopes, *extra))))


def held_by_id(store: MemoryStore, viewer: Scope, ref: str) -> Memory | None:
    """The memory whose id is ``ref`` when ``viewer`` reaches it (``reaches``): one look-up by id,
    of the agent's other sessions' memories too. None for none, or another agent's."""
    if viewer.agent is None:  # a global view reaches global memories only: its visible scopes
        return None
    found = store.get_many([ref])
    return found[0] if found and reaches(viewer, found[0].scope) else None


# Sessions asked about at once: a filter names each scope, and SQLite bounds an expression's depth.
_SESSIONS_PER_QUERY = 200


def sessions_holding_key(store: MemoryStore, viewer: Scope, key: str, *, most: int = 3) -> list[Memory]:
    """Up to ``most`` memories of ``viewer``'s agent keyed ``key`` in sessions it does not see, in
    session order: where a key not found in the visible scopes is held, for the error to say so.
    Asked only once a look-up found nothing (a key is unique per scope, so several may answer)."""
    if viewer.agent is None:
        return []
    seen = viewer.visible()
    others = [Scope(viewer.agent, s) for s in store.sessions_of(viewer.agent) if Scope(viewer.agent, s) not in seen]
    found: list[Memory] = []
    for start in range(0, len(others), _SESSIONS_PER_QUERY):
        chunk = tuple(others[start:start + _SESSIONS_PER_QUERY])
        found += store.list(MemoryFilter(scopes=chunk, include_superseded=True, key=key), limit=most - len(found))
        if len(found) >= most:
            break
    return sorted(found, key=lambda m: m.scope.session or "")
