"""What the engine tells the rest of engram after each change: audit, file sync and caches listen.

Listeners run after the change is stored; a listener that fails is logged and never undoes or
fails the write (the memory is already safe in the store). Concurrent ``remember`` calls are
stored as one batch by the single writer (``engram.writes``), which announces the batch's events
together: a listener subscribed with ``subscribe_batches`` gets them in one call (the file mirror
writes each file once for all of them, the audit trail inserts their rows in one transaction);
one subscribed with ``subscribe`` gets them one at a time.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from engram.model import Memory, Scope

log = logging.getLogger("engram.events")

EventKind = Literal["stored", "updated", "forgotten", "linked", "unlinked", "imported", "moved"]


@dataclass(frozen=True, slots=True)
class MemoryEvent:
    kind: EventKind
    memories: tuple[Memory, ...]
    # The scope of the Engram that made the change; heard through another agent's view (``Engram.subscribe``)
    # as ``visibility.ANOTHER_AGENT_SCOPE``, so one agent never learns another's name.
    scope: Scope
    origin: str  # which interface: library, cli, mcp, http, agent, sync, maintenance
    reason: str | None = None
    at: float = 0.0
    # For ``updated``: the memories as they were before the change, where known (matched by id),
    # so a listener can tell what changed (the audit trail names the fields). For ``moved`` (a
    # memory given another scope in place, ``MemoryStore.move``): each memory in its old scope.
    previous: tuple[Memory, ...] = ()

    def before(self, memory: Memory) -> Memory | None:
        """``memory`` as it was before this change, or None when not known."""
        return next((old for old in self.previous if old.id == memory.id), None)


@dataclass(frozen=True, slots=True)
class ReadEvent:
    """A recall: what was asked and what came back (ClawCode audits "all memory access", reads too).
    Kept apart from ``MemoryEvent`` so listeners to changes (file sync, caches) never see reads."""

    query: str
    hits: tuple[tuple[str, str, float], ...]  # (id, key, score) best first
    mode: str
    scope: Scope
    origin: str
    at: float = 0.0


Listener = Callable[[MemoryEvent], None]
BatchListener = Callable[[Sequence[MemoryEvent]], None]
ReadListener = Callable[[ReadEvent], None]


@dataclass(frozen=True, slots=True, eq=False)
class _Subscription:
    call: Callable[..., None]
    batches: bool  # called with a sequence of events, not one event


class EventBus:
    def __init__(self) -> None:
        self._listeners: list[_Subscription] = []  # in the order they subscribed
        self._readers: list[ReadListener] = []

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Add a listener called with each event; returns a function that removes it."""
        return self._add(_Subscription(listener, batches=False))

    def subscribe_batches(self, listener: BatchListener) -> Callable[[], None]:
        """Add a listener called once with the events announced together (a write batch's; a
        single change's as a batch of one); returns a function that removes it."""
        return self._add(_Subscription(listener, batches=True))

    def _add(self, subscription: _Subscription) -> Callable[[], None]:
        self._listeners.append(subscription)
        return lambda: self._listeners.remove(subscription) if subscription in self._listeners else None

    def emit(self, event: MemoryEvent) -> None:
        self.emit_all((event,))

    def emit_all(self, events: Sequence[MemoryEvent]) -> None:
        """Tell every listener about ``events`` (changes already stored), in order."""
        if not events:
            return
        for subscription in list(self._listeners):
            if subscription.batches:
                _tell(subscription.call, events, events)
            else:
                for event in events:
                    _tell(subscription.call, event, (event,))

    @property
    def has_readers(self) -> bool:
        """Whether anyone listens to reads (the engine builds no ``ReadEvent`` otherwise)."""
        return bool(self._readers)

    def subscribe_reads(self, listener: ReadListener) -> Callable[[], None]:
        """Add a listener to recalls; returns a function that removes it."""
        self._readers.append(listener)
        return lambda: self._readers.remove(listener) if listener in self._readers else None

    def emit_read(self, event: ReadEvent) -> None:
        for listener in list(self._readers):
            try:
                listener(event)
            except Exception:  # a failed read trail must never fail the recall
                log.exception("read listener %r failed", listener)


def _tell(listener: Callable[..., None], argument: object, events: Sequence[MemoryEvent]) -> None:
    try:
        listener(argument)
    except Exception:  # a listener must never fail a write that already happened
        log.exception("memory event listener %r failed on %s", listener, ", ".join(dict.fromkeys(e.kind for e in events)))
