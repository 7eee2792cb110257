"""Hygiene: conversation expiry, idle knowledge with random survival, core untouched, edges."""

from __future__ import annotations

import random

import pytest

from engram.lifecycle import hygiene
from engram.lifecycle.settings import HygieneSettings
from tests.lifecycle.conftest import remember_at

DAY = 86400.0


class Rolls(random.Random):
    """A random source that returns the given rolls in order."""

    def __init__(self, *values: float) -> None:
        super().__init__(0)
        self.values = list(values)

    def random(self) -> float:
        return self.values.pop(0)


def ids(engram) -> set[str]:
    return {m.key for m in engram.store.iter_all()}


def test_conversation_older_than_max_age_is_purged_and_the_edge_stays(backend, make_engram, clock):
    engram = make_engram(backend)
    remember_at(engram, clock.t - 7 * DAY - 1, "old chat", key="old", category="conversation")
    remember_at(engram, clock.t - 7 * DAY, "edge chat", key="edge", category="conversation")
    remember_at(engram, clock.t - 60, "new chat", key="new", category="conversation")
    # upsert stamps updated_at with created_at on insert, so the timestamp is the given time
    report = hygiene.run(engram, HygieneSettings(knowledge_max_idle_days=0), now=clock.t, rng=Rolls())
    assert [m.key for m in report.removed] == ["old"]
    assert ids(engram) == {"edge", "new"}


def test_core_is_never_touched(backend, make_engram, clock):
    engram = make_engram(backend)
    remember_at(engram, clock.t - 400 * DAY, "I am a helpful agent", key="soul", category="core")
    engram.store.touch([engram.get("soul").id], 0.0, recall=False)
    hygiene.run(engram, HygieneSettings(max_age_s=1, knowledge_max_idle_days=1, knowledge_survival_chance=0.0),
                now=clock.t, rng=Rolls())
    assert ids(engram) == {"soul"}


@pytest.mark.parametrize("chance, roll, survives", [
    (0.0, 0.0, False),     # chance 0.0: even the lowest roll loses
    (1.0, 0.999999, True),  # chance 1.0: every roll survives
    (0.05, 0.049, True),
    (0.05, 0.05, False),    # exactly at the chance loses (roll < chance survives)
])
def test_idle_knowledge_survival_roll(backend, make_engram, clock, chance, roll, survives):
    engram = make_engram(backend)
    remember_at(engram, clock.t - 31 * DAY, "idle fact", key="idle")  # last used when it was stored
    report = hygiene.run(engram, HygieneSettings(knowledge_survival_chance=chance), now=clock.t, rng=Rolls(roll))
    if survives:
        kept = engram.get("idle")
        assert kept.last_accessed == clock.t  # refreshed to now
        assert kept.recall_count == 0  # a survival is not a recall
        assert report.changed == 1
    else:
        assert engram.find("idle") is None
        assert [r.key for r in report.removed] == ["idle"]


def test_idle_threshold_edge_and_last_accessed_zero_fallback(backend, make_engram, clock):
    engram = make_engram(backend)
    remember_at(engram, clock.t - 30 * DAY, "edge fact", key="edge")  # exactly 30 days idle: stays
    zero = remember_at(engram, clock.t - 40 * DAY, "zero fact", key="zero").memory
    engram.store.touch([zero.id], 0.0, recall=False)  # last_accessed 0 -> falls back to the timestamp (40d)
    zero_recent = remember_at(engram, clock.t - 2 * DAY, "zero recent", key="zero-recent").memory
    engram.store.touch([zero_recent.id], 0.0, recall=False)
    report = hygiene.run(engram, HygieneSettings(knowledge_survival_chance=0.0), now=clock.t, rng=Rolls(0.5, 0.5))
    assert [m.key for m in report.removed] == ["zero"]
    assert ids(engram) == {"edge", "zero-recent"}


def test_summaries_are_protected_and_disabled_rules_do_nothing(backend, make_engram, clock):
    engram = make_engram(backend)
    remember_at(engram, clock.t - 90 * DAY, "a summary", key="s", type="summary")
    remember_at(engram, clock.t - 90 * DAY, "old chat", key="c", category="conversation")
    report = hygiene.run(engram, HygieneSettings(max_age_s=0, knowledge_max_idle_days=0), now=clock.t, rng=Rolls())
    assert report.removed == () and ids(engram) == {"s", "c"}


def test_forgetting_is_audited_with_the_reason(make_engram, clock):
    from engram.audit import AuditQuery

    engram = make_engram("sqlite")
    remember_at(engram, clock.t - 8 * DAY, "old chat", key="old", category="conversation")
    hygiene.run(engram, HygieneSettings(), now=clock.t, rng=Rolls())
    (entry,) = engram.backend.audit_log().query(AuditQuery(action="forgotten"))
    assert entry.origin == "maintenance" and entry.reason.startswith("hygiene: conversation")
    assert entry.detail["content"] == "old chat"
