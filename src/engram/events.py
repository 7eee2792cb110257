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
ReadListener = Callable[[ReadEvent], None]


class EventBus:
    def __init__(self) -> None:
        self._listeners: list[Listener] = []
        self._readers: list[ReadListener] = []

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
