"""What a view of the engine writes to and reads: the scope a write goes to, the filters a caller passes,
and the links it is shown.

An ``Engram`` acts for one agent and optionally one session (``engine``). ``_Scoping`` turns what a
call says into what the store is asked: ``scope=`` into the one scope a write goes to
(``_write_scope``: never another agent's), ``Filters`` into a ``MemoryFilter`` over the visible
scopes, its times read as the audit trail reads them (``_filter``), and the memories it hands out
into those with links it may read (``_shown``, ``_reaching``: the rule is ``engram.visibility``'s).
``Filters``, ``ScopeChoice`` and ``one_selector`` live here, not in ``engine`` (which re-exports
them: ``from engram.engine import Filters`` stays their public name), because every part of the
engine uses them and a part importing ``engine`` would be an import cycle.

The engine's methods are grouped by concern into mixin classes (this one, ``remembering``,
``updating``, ``reads``, ``recalling``, ``links``, ``forgetting``, ``transfer``, ``reindexing``,
``reports``, ``conversations``), composed by ``engine.Engram``. Mixins rather than module functions
the methods delegate to: a method moves as it was, keeping its name, signature and docstring on
``Engram`` (where ``help()``, the docs and every caller find them) with no wrapper repeating each
signature. A mixin is a part of ``Engram``, never used alone: its methods read the attributes
``Engram.__init__`` sets (``store``, ``scope``, ``clock``, ``time``, ``writes``, ...) and call each
other across the parts, as they did in one class.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from engram import jsondoc
from engram.errors import ValidationError
from engram.model import Category, Layer, Memory, MemoryFilter, Scope, make_filter
from engram.visibility import narrow_links, reaching

ScopeChoice = Literal["global", "agent", "session"] | Scope


def one_selector(field: str, selectors: Mapping[str, object]) -> str:
    """The name of the one selector given (not None) in ``selectors`` (name -> value, in the order
    an error lists them). Raises ``ValidationError`` on ``field`` unless exactly one is given,
    naming the selectors as ``selectors`` does: ``forget`` checks its own arguments with it, and
    an interface whose parameters are named otherwise checks them with it first, so its callers
    read their own names (MCP's ``memory_id``, ``older_than_days``), not ``ref``/``older_than_s``."""
    chosen = [name for name, value in selectors.items() if value is not None]
    if len(chosen) != 1:
        raise ValidationError(field, f"got {', '.join(chosen) or 'no selector'}",
                              f"exactly one of {', '.join(selectors)}")
    return chosen[0]


@dataclass(frozen=True, slots=True)
class Filters:
    """List/recall filters as a user passes them (validated into a ``MemoryFilter``): ``metadata``
    keeps values whose text form equals the one given (``{"n": 5}`` and ``{"n": "5"}`` both match a
    stored 5 or "5"); ``where`` states conditions on the metadata in mem0's filter language, types
    kept (``engram.where``: comparisons, lists, substrings, ``*``, ``AND``/``OR``/``NOT``)."""

    category: str | Category | Sequence[str | Category] | None = None
    type: str | Sequence[str] | None = None
    layer: str | Layer | Sequence[str | Layer] | None = None
    tags: str | Iterable[str] | None = None
    # The memory's related entity, case ignored (Unicode full case folding): "alice" finds "Alice".
    related_entity: str | None = None
    # key = value by text form: the shorthand of ``where`` equality that text doors (--meta k=v) mean.
    metadata: Mapping[str, Any] | None = None
    # Conditions on the metadata beyond key = value: comparisons, lists, substrings, AND/OR/NOT
    # (``engram.where`` states the language, mem0's), or their JSON text as the CLI and HTTP pass it.
    where: Mapping[str, Any] | str | None = None
    # Created in [since, until]: epoch seconds, ISO 8601 (no offset: in ``time.zone``) or a time
    # phrase as the audit trail reads them ("yesterday", "last week"; ``until`` keeps its whole day).
    since: float | str | None = None
    until: float | str | None = None
    include_superseded: bool = False
    # Time (engram.temporal): event time in [happened_from, happened_before); facts valid at
    # ``as_of``; memories as they were recorded at ``known_at``. Epoch seconds, ISO 8601 text or a
    # phrase, which stands for its start (``as_of="yesterday"``: yesterday at midnight).
    happened_from: float | str | None = None
    happened_before: float | str | None = None
    as_of: float | str | None = None
    known_at: float | str | None = None


class _Scoping:
    """``Engram``'s scopes and filters: what a write goes to, what a read asks, what a view is shown."""

    def _write_scope(self, choice: ScopeChoice | None) -> Scope:
        if isinstance(choice, Scope):
            # A view acts for one agent: another agent's memories are reached through its own view.
            if choice.agent is not None and choice.agent != self.scope.agent:
                raise ValidationError("scope", f"{choice} is another agent's than this view's ({self.scope.agent})",
                                      "global, this agent or one of its sessions; for_agent(...) opens another")
            return choice
        if choice in (None, "agent"):
            return Scope(self.scope.agent)
        if choice == "global":
            return Scope()
        if choice == "session":
            if self.scope.session is None:
                raise ValidationError("scope", "no session was named", "a session first: engram --session ID, the "
                                      "X-Engram-Session header, or session=... in Python")
            return self.scope
        raise ValidationError("scope", f"unknown scope {jsondoc.shown(choice)}", ["global", "agent", "session"])

    def _filter(self, filters: Filters | None = None, *, scope: ScopeChoice | None = None) -> MemoryFilter:
        filters = filters or Filters()
        scopes = self.scope.visible() if scope is None else (self._write_scope(scope),)
        now = self.clock()
        # Read as the audit trail's window is: epoch, ISO 8601 in the user's zone, or a phrase
        # (an end counts its whole day or phrase; an instant, as_of and known_at, is its start).
        since, until = self.time.window(filters.since, filters.until, now=now)
        return make_filter(
            scopes,
            category=filters.category, type=filters.type, layer=filters.layer, tags=filters.tags,
            related_entity=filters.related_entity, metadata=filters.metadata, since=since,
            until=until, include_superseded=filters.include_superseded,
            happened_from=self.time.instant(filters.happened_from, "happened_from"),
            happened_before=self.time.instant(filters.happened_before, "happened_before"),
            valid_at=self.time.bound(filters.as_of, "as_of", now=now),
            known_at=self.time.bound(filters.known_at, "known_at", now=now),
            where=filters.where,
        )

    def _reaching(self, memories: Sequence[Memory]) -> MemoryFilter:
        """What this view reads, widened to the scopes of ``memories`` it reaches by id (its agent's
        other sessions): the filter an id check of them, or of their links, reads with."""
        return reaching(self.scope, self._readable, memories)

    def _shown(self, memories: Sequence[Memory]) -> list[Memory]:
        """``memories`` as this view may see them: ``links`` only to memories it may read (one of
        another session of its agent, reached by id, shown as that session shows it)."""
        return narrow_links(self.store, memories, self._reaching(memories))
