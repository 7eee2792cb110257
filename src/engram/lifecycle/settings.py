"""Lifecycle settings (``[lifecycle]`` in the config file, ``ENGRAM_LIFECYCLE__...`` in the environment).

Defaults follow the references: PtrClaw's hygiene (7 days, 30 idle days, 5% survival), the PHP
entity's strengthening (+0.05 capped at 1.0) and decay rule (importance < 0.3, 30 days, never
recalled), ClawCode's retention (session 30d, agent 90d, global unlimited) and daily backups.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import Field, field_validator

from engram import jsondoc
from engram.settings_section import UNLIMITED, SettingsSection

# Types no deleting job touches by default. ``summary``: the condensed past, kept on purpose.
# ``item``: a framework store's data (LangGraph's ``BaseStore`` items), which that framework keeps
# until it is deleted or its own TTL ends; hygiene's 30 idle days would drop an app's records.
PROTECTED_TYPES = ("summary", "item")


class StrengthenSettings(SettingsSection):
    """What a (non-background) recall does to the memories it returns."""

    enabled: bool = True
    importance_boost: float = Field(0.05, ge=0.0, le=1.0)
    importance_cap: float = Field(1.0, ge=0.0, le=1.0)


class HygieneSettings(SettingsSection):
    enabled: bool = True
    # Conversation entries older than this (seconds) are purged. 0 disables it.
    max_age_s: float = Field(7 * 86400, ge=0)
    # Knowledge entries idle longer than this are purged unless they win the survival roll. 0 disables.
    knowledge_max_idle_days: float = Field(30, ge=0)
    knowledge_survival_chance: float = Field(0.05, ge=0.0, le=1.0)
    # Types never decayed by hygiene (PROTECTED_TYPES).
    protected_types: list[str] = Field(default_factory=lambda: list(PROTECTED_TYPES))


class DecaySettings(SettingsSection):
    """The PHP entity's rule: importance below ``max_importance``, older than ``min_age_days``,
    never recalled -> removed. Core memories are never touched."""

    enabled: bool = True
    max_importance: float = Field(0.3, ge=0.0, le=1.0)
    min_age_days: float = Field(30, ge=0)
    protected_types: list[str] = Field(default_factory=lambda: list(PROTECTED_TYPES))


_DAYS_ALLOWED = 'allowed: a number of days, 0 or more, or "unlimited"'


class RetentionSettings(SettingsSection):
    """Per-scope expiry in days (None = unlimited), measured from the last write (``updated``) or
    the last access (``accessed``). Core memories and protected types are exempt."""

    enabled: bool = True
    # None reads "unlimited" where settings are shown (``config show``), as a config file writes it.
    session_days: float | None = Field(30, ge=0, json_schema_extra={"none_is": UNLIMITED})
    agent_days: float | None = Field(90, ge=0, json_schema_extra={"none_is": UNLIMITED})
    global_days: float | None = Field(None, ge=0, json_schema_extra={"none_is": UNLIMITED})
    basis: Literal["updated", "accessed"] = "updated"
    protected_types: list[str] = Field(default_factory=lambda: list(PROTECTED_TYPES))

    @field_validator("session_days", "agent_days", "global_days", mode="before")
    @classmethod
    def _unlimited(cls, value: Any) -> Any:
        # "Unlimited" has to be writable where null is not: TOML has no null, and a variable's
        # "none" was refused as "not a valid number" (0 is no way out: it expires at once).
        if isinstance(value, str):
            word = value.strip().lower()
            if word in ("unlimited", "none", "never", "null"):
                return None
            try:
                number = float(word)
            except ValueError:
                raise ValueError(f"{jsondoc.shown(value)} is not a number of days ({_DAYS_ALLOWED})") from None
        else:
            number = value
        # Refused here rather than by ``ge=0``, whose refusal could not name "unlimited" as allowed
        # (-inf is left to every section's rule: not a finite number).
        if isinstance(number, int | float) and not isinstance(number, bool) and -math.inf < number < 0:
            shown = value.strip() if isinstance(value, str) else jsondoc.shown(value)
            raise ValueError(f"{shown} is out of range ({_DAYS_ALLOWED})")
        return value


class SummarySettings(SettingsSection):
    enabled: bool = True
    daily: bool = True
    weekly: bool = True
    # How far back `maintain` looks for periods without a summary.
    lookback_days: int = Field(14, ge=1, le=3660)
    # The extractive fallback keeps this many source memories (most important first).
    extractive_items: int = Field(8, ge=1, le=100)
    max_chars: int = Field(2000, ge=100, le=100_000)
    importance: float = Field(0.7, ge=0.0, le=1.0)


class ConsolidationSettings(SettingsSection):
    enabled: bool = True
    # Cosine similarity at or above which two memories of one scope are near-duplicates.
    threshold: float = Field(0.95, ge=0.0, le=1.0)


class BackupSettings(SettingsSection):
    enabled: bool = True
    # Folder for backups; empty means ``backups/`` beside the database. With ``per_agent_databases``
    # each agent's go into a subfolder of it (``backends.sqlite.backups_for``).
    folder: str | None = None
    keep: int = Field(7, ge=1, le=1000)
    # Automatic backup before migrations, bulk forgets and imports.
    before_risky: bool = True
    # ``quick`` (PRAGMA quick_check, O(pages)) or ``full`` (integrity_check) at start-up; ``off``.
    startup_check: Literal["quick", "full", "off"] = "quick"


class ScheduleSettings(SettingsSection):
    """How often each ``maintain`` job is due (seconds). 0 means: every run."""

    hygiene_s: float = Field(86400, ge=0)
    decay_s: float = Field(86400, ge=0)
    retention_s: float = Field(86400, ge=0)
    summaries_s: float = Field(86400, ge=0)
    consolidate_s: float = Field(7 * 86400, ge=0)
    backup_s: float = Field(86400, ge=0)
    vacuum_s: float = Field(30 * 86400, ge=0)


class LifecycleSettings(SettingsSection):
    strengthen: StrengthenSettings = Field(default_factory=StrengthenSettings)
    hygiene: HygieneSettings = Field(default_factory=HygieneSettings)
    decay: DecaySettings = Field(default_factory=DecaySettings)
    retention: RetentionSettings = Field(default_factory=RetentionSettings)
    summaries: SummarySettings = Field(default_factory=SummarySettings)
    consolidation: ConsolidationSettings = Field(default_factory=ConsolidationSettings)
    backup: BackupSettings = Field(default_factory=BackupSettings)
    schedule: ScheduleSettings = Field(default_factory=ScheduleSettings)
    audit: bool = True
    # Recalls in the audit trail too (one row each: query, ids, scores), at most audit_max_reads of them.
    audit_reads: bool = True
    audit_max_reads: int = Field(10_000, ge=1, le=10_000_000)
    # Latency samples kept per metric (recall, embedding) for percentiles.
    metric_samples: int = Field(1000, ge=10, le=100_000)
