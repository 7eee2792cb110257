"""What the engine tells the rest of engram after each change: audit, file sync and caches listen.

Listeners run after the change is stored; a listener that fails is logged and never undoes or
fails the write (the memory is already safe in the store).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from engram.model import Memory, Scope

log = logging.getLogger("engram.events")

EventKind = Literal["stored", "updated", "forgotten", "linked", "unlinked", "imported"]


@dataclass(frozen=True, slots=True)
class MemoryEvent:
    kind: EventKind
    memories: tuple[Memory, ...]
    scope: Scope  # the scope of the Engram that made the change
    origin: str  # which interface: library, cli, mcp, http, agent, sync, maintenance
    reason: str | None = None
    at: float = 0.0


Listener = Callable[[MemoryEvent], None]


class EventBus:
    def __init__(self) -> None:
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Add a listener; returns a function that removes it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def emit(self, event: MemoryEvent) -> None:
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:  # a listener must never fail a write that already happened
                log.exception("memory event listener %r failed on %s", listener, event.kind)
