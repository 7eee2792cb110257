"""Importance: recall strengthening and the PHP entity's decay rule.

Strengthening happens in ``Engram.recall`` (through ``MemoryStore.touch``): each returned memory
gets recall count +1, ``last_accessed`` now and importance + ``importance_boost`` capped at
``importance_cap`` - never for a background recall (``recall(..., background=True)``), which a
maintenance job uses so that looking does not count as remembering. ``strengthen`` is the same
rule for callers that already hold memories.

Decay (``run``): a memory with importance below ``max_importance`` (strictly), created more than
``min_age_days`` ago (strictly) and never recalled is removed. Its age is counted from when this
store received it when that is later (``Memory.held_here_since``): an import keeps the source's
creation time, and a memory brought in has had no chance to be recalled here before. Core memories and protected types
are never removed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from engram.lifecycle.common import DAY, JobReport, every_memory, forget_as_maintenance
from engram.lifecycle.settings import DecaySettings, StrengthenSettings
from engram.model import Category, Memory
from engram.text import counted

if TYPE_CHECKING:
    from engram.engine import Engram


def decays(memory: Memory, settings: DecaySettings, now: float) -> bool:
    """Whether the decay rule removes ``memory`` at ``now``."""
    return (
        memory.category is not Category.CORE
        and memory.type not in settings.protected_types
        and memory.importance < settings.max_importance
        and now - memory.held_here_since > settings.min_age_days * DAY
        and memory.recall_count == 0
    )


def run(engram: Engram, settings: DecaySettings, *, now: float, agent: str | None = None) -> JobReport:
    """Remove every memory the decay rule selects: ``agent``'s own, or with ``agent=None`` the whole store's."""
    doomed = [m for m in every_memory(engram, agent=agent) if decays(m, settings, now)]
    reason = (f"decay: importance < {settings.max_importance:g}, older than {counted(float(settings.min_age_days), 'day')},"
              " never recalled")
    return JobReport("decay", forget_as_maintenance(engram, doomed, reason, now))


def strengthen(engram: Engram, memories: Sequence[Memory], settings: StrengthenSettings, *, now: float) -> None:
    """Record a recall of ``memories`` (the rule ``Engram.recall`` applies)."""
    boost = settings.importance_boost if settings.enabled else 0.0
    engram.store.touch([m.id for m in memories], now, importance_boost=boost, importance_cap=settings.importance_cap)
