"""What the engine tells of its store: figures (``stats`` for the operator, ``visible_stats`` for
this view) and the audit trail (``audit_trail``, ``audit_of``, ``forgotten``), narrowed to what this
view may read.

The trail is ``engram.audit``'s (``backend.audit_log()``), loaded on use; here its queries are
bounded to this view's scopes, widened to a memory's own scope when its id reaches it in another
session of this view's agent (``_audit_reach``), and a forgotten memory's links narrowed as every
memory's are (``visibility.narrow_audit``). The figures are ``store.stats`` and ``engram.agent_stats``'s.

A part of ``Engram``: a mixin composed in ``engine`` (``scoping`` says why the engine is built from mixins).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING

from engram import jsondoc
from engram.errors import ValidationError
from engram.model import MemoryFilter, parse_ref
from engram.store.base import StoreStats
from engram.visibility import held_by_id, narrow_audit, without_others_links, without_others_names

if TYPE_CHECKING:
    from engram.agent_stats import AgentStats
    from engram.audit import AuditEntry


class _Reporting:
    """``Engram``'s figures and audit trail."""

    def stats(self) -> StoreStats:
        """The whole store's figures, every agent's memories included: the operator's view (an
        agent's door shows ``visible_stats``)."""
        self.writes.refuse_when_closed("read")
        return self.store.stats()

    def visible_stats(self) -> AgentStats:
        """The figures of what this view may read: its memories by category, type and scope, the
        links among them and their vectors; never another agent's (see ``engram.agent_stats``)."""
        self.writes.refuse_when_closed("read")
        from engram import agent_stats

        return agent_stats.gather(self, self._filter())

    def audit_trail(
        self, limit: int = 50, *, action: str | None = None, origin: str | None = None,
        since: float | str | None = None, until: float | str | None = None, memory: str | None = None,
    ) -> list[AuditEntry]:
        """The audit entries about memories this view reads (its scopes and global), newest first.
        ``since``/``until`` bound the time at both ends, inclusive: epoch seconds, ISO 8601 (a time
        without an offset in ``time.zone``) or a phrase as ``recall(when=...)`` reads it
        ("yesterday", "last week": ``since`` takes its start, ``until`` its end). ``action``,
        ``origin`` and ``memory`` (id or key) narrow it; a row another agent wrote (about a global
        memory) names it ``"another agent"`` (``visibility.without_others_names``); a ``memory`` id of another session of this
        view's agent, which the id reaches (``get``), reads that memory's scope too (``_audit_reach``).
        A ``forgotten`` entry keeps the memory
        whole, its links kept to memories this view may read (``visibility.narrow_audit``); a link row
        another agent's link left on a global memory, naming nothing this view may read, is left out
        (``visibility.without_others_links``), and ``limit`` counts the rows shown. Raises ``ValidationError`` naming the
        field (an unknown action, an unreadable time, ``until`` before ``since``)."""
        self.writes.refuse_when_closed("read")
        from engram.audit import MAX_QUERY_LIMIT, AuditQuery, validate_query

        start, end = self.time.window(since, until, now=self.clock())
        if memory is not None:  # checked as every lookup's: a NUL or an empty string matched nothing, unsaid
            memory = parse_ref(memory, "memory")
        readable = self._audit_reach(memory)
        scopes = tuple(str(scope) for scope in readable.scopes)
        query = validate_query(AuditQuery(
            action=action, origin=origin, since=start, until=end, memory=memory, limit=limit, scopes=scopes))
        wanted = query.limit
        while True:
            found = self.backend.audit_log().query(query)
            # Another agent's link rows about global memories are left out (``without_others_links``);
            # asked again for more when they left fewer than ``limit``: rare, and the trail is newest first.
            entries = without_others_links(found, self.scope)[:wanted]
            if len(entries) == wanted or len(found) < query.limit or query.limit >= MAX_QUERY_LIMIT:
                break
            query = replace(query, limit=min(MAX_QUERY_LIMIT, query.limit * 4))
        # A forget keeps the memory whole, links to other agents' memories too: shown as its links are;
        # another agent's name (the writer of a global memory) is not shown (``without_others_names``).
        return without_others_names(narrow_audit(self.store, entries, readable), self.scope)

    def _audit_reach(self, memory_id: str | None) -> MemoryFilter:
        """What an audit about ``memory_id`` reads: this view's scopes, and the memory's own when the
        id reaches it in another session of this view's agent (as ``get`` does), never another
        agent's. A memory no longer stored is reached by no id, so its rows are its visible scopes'."""
        if memory_id is None:
            return self._readable
        held = held_by_id(self.store, self.scope, memory_id)
        return self._readable if held is None else self._reaching([held])

    def audit_of(self, memory_id: str, *, every_agent: bool = False) -> list[AuditEntry]:
        """What the audit trail records about the memory with this id (its store or import, updates,
        links and forget), oldest first, whether it is still stored or not: change rows are never
        pruned, so this is its whole record but for what was done while ``lifecycle.audit`` was off.
        Narrowed, as ``audit_trail``, to memories of the scopes this view reads (and the memory's own,
        in another session of this view's agent, when the id reaches it as ``get`` does), unless
        ``every_agent``: the operator's reach (as ``stats``), for an application that answers for
        every agent's memories itself (the mem0 facade's ``history`` takes any owner's id): only
        then are other agents' names shown (``visibility.without_others_names``). Taken
        on any engine, a view of one agent included, as ``stats`` and ``for_agent`` are: an
        ``Engram`` in a program is the operator's, and an agent's doors (HTTP, MCP, the CLI's
        ``--agent``, the framework adapters given a view) never pass it. Raises
        ``ValidationError`` naming ``memory`` for an id that is not a non-empty string,
        ``StorageError`` when the trail cannot be read."""
        self.writes.refuse_when_closed("read")
        from engram.audit import MAX_QUERY_LIMIT, AuditQuery

        if not isinstance(memory_id, str) or not memory_id:
            raise ValidationError("memory", f"{jsondoc.shown(memory_id)} is not a memory id", "a memory's id")
        readable = None if every_agent else self._audit_reach(memory_id)
        scopes = None if readable is None else tuple(str(scope) for scope in readable.scopes)
        # The query matches a key too: an id is asked for, so rows about a memory keyed so are not its.
        rows = [row for row in self.backend.audit_log().query(
            AuditQuery(memory=memory_id, limit=MAX_QUERY_LIMIT, scopes=scopes)) if row.memory_id == memory_id]
        # Newest first as every trail answers (in the order written: rows of one instant included,
        # where the in-process trail numbers none), so reversed is oldest first.
        rows.reverse()
        if readable is None:
            return rows
        return without_others_names(narrow_audit(self.store, without_others_links(rows, self.scope), readable), self.scope)

    def forgotten(self, ids: Iterable[tuple[str, str | None]]) -> set[tuple[str, str | None]]:
        """Of ``ids`` (each a memory id with the agent it belongs to, None for global), the pairs
        the audit trail records as forgotten from a scope this view may read (its own and global,
        as recall reads them), whether or not a memory with that id is stored again since. It
        answers for this view's agent and global only: a pair naming another agent, or an id
        forgotten from a scope this view does not read, is never in the answer, so one agent learns
        nothing of another's memories. One query for the whole batch. A forget made while
        ``lifecycle.audit`` was off left no record, so it is not among them. Raises
        ``StorageError`` when the trail cannot be read."""
        self.writes.refuse_when_closed("read")
        from engram.audit import forgotten_from

        mine = [(memory_id, agent) for memory_id, agent in ids if agent is None or agent == self.scope.agent]
        return forgotten_from(self.backend.audit_log(), mine, scopes={str(scope) for scope in self.scope.visible()})
