"""What every lifecycle job shares: its report, the walk over the store, the forget with an event.

Jobs act on the memories of one agent (``agent="alice"``: its own scope and its sessions) or,
when no agent is given, on the whole store behind an ``Engram`` (every agent and global: an
operator's run). An agent's run never touches global memories: other agents see them, so one
agent's upkeep must not delete or merge them. Jobs take ``now`` and a random source from the
caller so tests are exact, and report what they did; removals go through
``forget_as_maintenance`` so the audit trail records each one with the job's reason.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from engram.events import MemoryEvent
from engram.model import Category, Memory

if TYPE_CHECKING:
    from engram.engine import Engram

DAY = 86400.0


@dataclass(frozen=True, slots=True)
class JobReport:
    job: str
    removed: tuple[Memory, ...] = ()
    changed: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)

    def line(self) -> str:
        parts = [f"{self.job}:"]
        if self.job in ("hygiene", "decay", "retention", "consolidate"):
            parts.append(f"removed {len(self.removed)}")
        if self.changed:
            parts.append(f"changed {self.changed}")
        parts.extend(self.notes)
        return parts[0] + " " + ", ".join(parts[1:])


# Events a job announces together (``announced_together``): the memory folder then settles each file
# once for them all, not once per change (consolidation's whole file settled per merge took 584 s at
# 10,000 memories, ``bench/consolidate.py``). Bounded, so a process killed part-way has told the
# audit trail of all but the last few; 400 is 200 merges (two events each) or 400 summaries.
ANNOUNCED_TOGETHER = 400


@contextlib.contextmanager
def announced_together(engram: Engram) -> Iterator[Callable[[MemoryEvent], None]]:
    """A function a job hands each event of its changes to, instead of emitting it: the events go to
    the listeners ``ANNOUNCED_TOGETHER`` at a time, in one ``emit_all`` each, and what is held when the
    block ends is announced then, also when it raises (those changes are stored)."""
    held: list[MemoryEvent] = []

    def tell() -> None:
        batch = tuple(held)
        held.clear()
        engram.events.emit_all(batch)

    def announce(event: MemoryEvent) -> None:
        held.append(event)
        if len(held) >= ANNOUNCED_TOGETHER:
            tell()

    try:
        yield announce
    finally:
        tell()


def every_memory(engram: Engram, categories: Iterable[Category] = (), *, agent: str | None = None) -> list[Memory]:
    """Every memory a job may change, superseded included, optionally by category: ``agent``'s own
    (its scope and its sessions), or with ``agent=None`` every memory in the store (all scopes)."""
    wanted = set(categories)
    return [m for m in engram.store.iter_all()
            if (not wanted or m.category in wanted) and (agent is None or m.scope.agent == agent)]


def forget_as_maintenance(engram: Engram, memories: Sequence[Memory], reason: str, now: float,
                          announce: Callable[[MemoryEvent], None] | None = None) -> tuple[Memory, ...]:
    """Delete ``memories`` and emit one ``forgotten`` event from origin ``maintenance`` (or hand
    it to ``announce``, for a job that announces its changes together: ``consolidate``)."""
    if not memories:
        return ()
    removed = engram.store.delete([m.id for m in memories])
    if removed:
        (announce or engram.events.emit)(MemoryEvent("forgotten", tuple(removed), engram.scope, "maintenance", reason, now))
    return tuple(removed)
