"""Hygiene (PtrClaw's ``hygiene_purge``): expire conversation entries, decay idle knowledge.

- Conversation entries whose timestamp (last write) is more than ``max_age_s`` ago are purged.
- Knowledge entries idle longer than ``knowledge_max_idle_days`` (idle since ``last_accessed``;
  a ``last_accessed`` of 0 or unset falls back to the timestamp) each roll the random source:
  ``rng.random() < knowledge_survival_chance`` survives and has ``last_accessed`` refreshed to
  now (not a recall: the count is unchanged), so chance 0.0 purges every idle entry and 1.0 keeps
  all of them. The rest are purged with their links.
- Core entries are never touched; ``protected_types`` (summaries) are skipped.
Both times are counted at the earliest from when this store received the entry (``Memory.written_here``,
``Memory.used_here``): an import keeps the source's times, and what it brought is not idle here
before it arrived. "Older than" is strict: an entry exactly at the threshold stays.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Literal

from engram.lifecycle.common import DAY, JobReport, every_memory, forget_as_maintenance
from engram.lifecycle.settings import HygieneSettings
from engram.model import Category, Memory
from engram.text import counted

if TYPE_CHECKING:
    from engram.engine import Engram


def purgeable(memory: Memory, settings: HygieneSettings, now: float) -> Literal["old", "idle"] | None:
    """Why hygiene's next run would purge ``memory``: ``"old"`` (a conversation entry past
    ``max_age_s`` since its last write), ``"idle"`` (a knowledge entry idle past
    ``knowledge_max_idle_days``: purged unless it draws survival), or None. The job's rule, and what
    an import warns of (``lifecycle.imported``)."""
    if memory.type in settings.protected_types:
        return None
    if memory.category is Category.CONVERSATION:
        old = settings.max_age_s > 0 and now - memory.written_here > settings.max_age_s
        return "old" if old else None
    if memory.category is Category.KNOWLEDGE:
        idle = settings.knowledge_max_idle_days > 0 and now - memory.used_here > settings.knowledge_max_idle_days * DAY
        return "idle" if idle else None
    return None


def run(engram: Engram, settings: HygieneSettings, *, now: float, rng: random.Random,
        agent: str | None = None) -> JobReport:
    """Purge old conversation entries and idle knowledge (see module docstring): ``agent``'s own,
    or with ``agent=None`` the whole store's."""
    memories = every_memory(engram, (Category.CONVERSATION, Category.KNOWLEDGE), agent=agent)
    expired: list[Memory] = []
    idle: list[Memory] = []
    survivors: list[str] = []
    for memory in memories:
        why = purgeable(memory, settings, now)
        if why == "old":
            expired.append(memory)
        elif why == "idle":
            if rng.random() < settings.knowledge_survival_chance:
                survivors.append(memory.id)
            else:
                idle.append(memory)
    removed = forget_as_maintenance(engram, expired, f"hygiene: conversation older than {settings.max_age_s:g}s", now)
    removed += forget_as_maintenance(
        engram, idle, f"hygiene: knowledge idle over {counted(float(settings.knowledge_max_idle_days), 'day')}", now
    )
    if survivors:
        engram.store.touch(survivors, now, recall=False)
    return JobReport("hygiene", removed, len(survivors), (f"survivors refreshed {len(survivors)}",) if survivors else ())
