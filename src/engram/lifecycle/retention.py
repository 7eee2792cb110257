"""Retention per scope (ClawCode): session memories expire after 30 days, agent memories after
90, global ones never (defaults). Age is measured from the last write (``basis = "updated"``)
or the last access (``"accessed"``), each counted here at the earliest from when this store received
the memory (``Memory.written_here``, ``Memory.used_here``: an import keeps the source's times, and a
year of memories brought in is not a year old to this store); "older than" is strict. Core memories and protected types
(summaries) are exempt: retention is for what accumulates, not for who the agent is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engram.lifecycle.common import DAY, JobReport, every_memory, forget_as_maintenance
from engram.lifecycle.settings import RetentionSettings
from engram.model import Category, Memory
from engram.text import counted

if TYPE_CHECKING:
    from engram.engine import Engram


def limit_days(memory: Memory, settings: RetentionSettings) -> float | None:
    return {"session": settings.session_days, "agent": settings.agent_days, "global": settings.global_days}[
        memory.scope.kind
    ]


def expired(memory: Memory, settings: RetentionSettings, now: float) -> bool:
    days = limit_days(memory, settings)
    if days is None or memory.category is Category.CORE or memory.type in settings.protected_types:
        return False
    since = memory.used_here if settings.basis == "accessed" else memory.written_here
    return now - since > days * DAY


def run(engram: Engram, settings: RetentionSettings, *, now: float, agent: str | None = None) -> JobReport:
    """Remove memories past their scope's retention: ``agent``'s own (its sessions and its
    scope), or with ``agent=None`` the whole store's (global included)."""
    removed: tuple[Memory, ...] = ()
    memories = every_memory(engram, agent=agent)
    for kind in ("session", "agent", "global"):
        doomed = [m for m in memories if m.scope.kind == kind and expired(m, settings, now)]
        if doomed:
            days = limit_days(doomed[0], settings)
            reason = f"retention: {kind} memories kept {counted(float(days), 'day')}"
            removed += forget_as_maintenance(engram, doomed, reason, now)
    return JobReport("retention", removed)
