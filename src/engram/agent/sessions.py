"""PtrClaw's ``SessionManager``: one agent per session id, created on first use, evicted when idle.

``get`` returns the session's agent (creating it through the factory and publishing
``created``), refreshing its last-active time; ``evict_idle`` removes sessions idle longer than
the threshold, publishing ``evicted`` before each removal. All methods hold one lock; each
session owns its agent, so nothing else is shared between sessions.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

log = logging.getLogger("engram.agent.sessions")

A = TypeVar("A")


@dataclass(frozen=True, slots=True)
class SessionEvent:
    kind: Literal["created", "evicted"]
    session_id: str
    at: float


@dataclass(slots=True)
class _Session(Generic[A]):
    agent: A
    created_at: float
    last_active: float


class SessionManager(Generic[A]):
    def __init__(
        self,
        factory: Callable[[str], A],
        *,
        idle_s: float = 3600.0,
        clock: Callable[[], float] = time.time,
        on_close: Callable[[A], None] | None = None,
    ) -> None:
        self.factory = factory
        self.idle_s = idle_s
        self.clock = clock
        self.on_close = on_close
        self._sessions: dict[str, _Session[A]] = {}
        self._listeners: list[Callable[[SessionEvent], None]] = []
        self._lock = threading.RLock()

    def subscribe(self, listener: Callable[[SessionEvent], None]) -> Callable[[], None]:
        with self._lock:
            self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _publish(self, event: SessionEvent) -> None:
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:  # a listener never breaks session handling
                log.exception("session listener failed on %s", event.kind)

    def get(self, session_id: str) -> A:
        """The agent of ``session_id``, created when new. Raises whatever the factory raises."""
        with self._lock:
            now = self.clock()
            session = self._sessions.get(session_id)
            if session is not None:
                session.last_active = now
                return session.agent
            agent = self.factory(session_id)
            self._sessions[session_id] = _Session(agent, now, now)
            self._publish(SessionEvent("created", session_id, now))
            return agent

    def evict_idle(self, max_idle_s: float | None = None) -> list[str]:
        """Remove sessions idle for longer than ``max_idle_s`` (default ``idle_s``); returns their ids."""
        threshold = self.idle_s if max_idle_s is None else max_idle_s
        with self._lock:
            now = self.clock()
            idle = [sid for sid, s in self._sessions.items() if now - s.last_active > threshold]
            for sid in idle:
                self._publish(SessionEvent("evicted", sid, now))
                session = self._sessions.pop(sid)
                if self.on_close is not None:
                    self.on_close(session.agent)
            return idle

    def __contains__(self, session_id: str) -> bool:
        with self._lock:
            return session_id in self._sessions

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)

    def ids(self) -> list[str]:
        with self._lock:
            return list(self._sessions)
