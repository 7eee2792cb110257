"""What the next maintenance run would delete of memories an import of engram's snapshot just stored.

Retention, hygiene and decay count a memory's age from the later of its own times and when this
store received it (``Memory.received_at``), so what an import brings from another system arrives now
and is at risk of nothing at the next run. engram's own snapshot is the exception: it carries each
memory's arrival in the store it was taken from (a restore is a move of the same memories), so a
snapshot of memories that store kept past this store's limits (its retention was longer, or the
snapshot is old) would be deleted by the next daily run (``engram serve`` runs due jobs at start).
The import says so, with the counts and the settings that keep them, instead of the memories
vanishing silently.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from engram.lifecycle import decay, hygiene, retention
from engram.lifecycle.settings import LifecycleSettings
from engram.model import Memory
from engram.text import counted

if TYPE_CHECKING:
    from engram.engine import Engram


def at_risk(memories: Sequence[Memory], settings: LifecycleSettings, now: float) -> list[str]:
    """One warning per enabled job that would remove some of ``memories`` at its next run, counting
    them and naming the setting that keeps them; none when nothing is at risk."""
    warnings: list[str] = []
    kept = settings.retention
    if kept.enabled:
        for kind in ("session", "agent", "global"):
            doomed = [m for m in memories if m.scope.kind == kind and retention.expired(m, kept, now)]
            if doomed:
                days = retention.limit_days(doomed[0], kept)
                basis = "last change" if kept.basis == "updated" else "last access"
                warnings.append(
                    f"{counted(len(doomed), 'imported memory')} in {kind} scope would be deleted by the next retention"
                    f" run: past the {kind} retention of {counted(float(days or 0), 'day')} from the {basis}, measured"
                    f" from the snapshot's times, which its import keeps; set lifecycle.retention.{kind}_days to a longer"
                    f' limit or "unlimited" (ENGRAM_LIFECYCLE__RETENTION__{kind.upper()}_DAYS) to keep them')
    clean = settings.hygiene
    if clean.enabled:
        why = [hygiene.purgeable(m, clean, now) for m in memories]
        old = [m for m, reason in zip(memories, why, strict=True) if reason == "old"]
        idle = [m for m, reason in zip(memories, why, strict=True) if reason == "idle"]
        if old:
            warnings.append(
                f"{counted(len(old), 'imported conversation memory')} would be deleted by the next hygiene run: older"
                f" than {clean.max_age_s:g} s, measured from the snapshot's times, which its import keeps; set"
                " lifecycle.hygiene.max_age_s to 0 (ENGRAM_LIFECYCLE__HYGIENE__MAX_AGE_S) to keep them")
        if idle:
            warnings.append(
                f"{counted(len(idle), 'imported knowledge memory')} would be deleted by the next hygiene run (each"
                f" survives with chance {clean.knowledge_survival_chance:g}): idle over"
                f" {counted(float(clean.knowledge_max_idle_days), 'day')}, measured from the snapshot's times, which its"
                " import keeps; set lifecycle.hygiene.knowledge_max_idle_days to 0"
                " (ENGRAM_LIFECYCLE__HYGIENE__KNOWLEDGE_MAX_IDLE_DAYS) to keep them")
    fade = settings.decay
    if fade.enabled:
        faded = [m for m in memories if decay.decays(m, fade, now)]
        if faded:
            warnings.append(
                f"{counted(len(faded), 'imported memory')} would be deleted by the next decay run: importance below"
                f" {fade.max_importance:g}, never recalled, created over {counted(float(fade.min_age_days), 'day')}"
                " ago by the snapshot's times, which its import keeps; set lifecycle.decay.enabled to false"
                " (ENGRAM_LIFECYCLE__DECAY__ENABLED) or lifecycle.decay.min_age_days to a longer age to keep them")
    return warnings


def import_warnings(engram: Engram, memories: Sequence[Memory], now: float) -> list[str]:
    """``at_risk`` under ``engram``'s lifecycle settings, for the memories an import of engram's
    snapshot stored (as stored: their arrival carried or given); none for a bare engine (built
    without settings: no maintenance is scheduled for it)."""
    settings = engram.settings
    return [] if settings is None or not memories else at_risk(memories, settings.lifecycle, now)
