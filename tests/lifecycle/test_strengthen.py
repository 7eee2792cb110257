"""Recall strengthening through MemoryStore.touch on every backend, and background recalls."""

from __future__ import annotations

import pytest

from engram.lifecycle.decay import strengthen
from engram.lifecycle.settings import StrengthenSettings
from engram.store.disabled import DisabledMemoryStore

DAY = 86400.0


def test_recall_strengthens_count_time_and_importance(backend, make_engram, clock):
    engram = make_engram(backend)
    stored = engram.remember("the deploy key lives in vault", importance=0.5).memory
    clock.advance(DAY)
    assert engram.recall("deploy vault").hits
    after = engram.get(stored.id)
    assert after.recall_count == 1
    assert after.last_accessed == clock.t
    assert after.importance == pytest.approx(0.55)


def test_importance_is_capped_and_never_lowered(backend, make_engram):
    engram = make_engram(backend)
    near = engram.remember("near the top of importance", importance=0.98).memory
    engram.recall("importance top")
    assert engram.get(near.id).importance == pytest.approx(1.0)
    engram.recall("importance top")
    assert engram.get(near.id).importance == pytest.approx(1.0)
    # A cap below the current importance keeps it where it is.
    engram.strengthen = StrengthenSettings(importance_cap=0.5)
    engram.recall("importance top")
    assert engram.get(near.id).importance == pytest.approx(1.0)
    assert engram.get(near.id).recall_count == 3


def test_background_recall_does_not_strengthen(backend, make_engram, clock):
    engram = make_engram(backend)
    stored = engram.remember("quarterly report numbers", importance=0.4).memory
    created_access = engram.get(stored.id).last_accessed
    clock.advance(DAY)
    assert engram.recall("quarterly report", background=True).hits
    after = engram.get(stored.id)
    assert (after.recall_count, after.importance, after.last_accessed) == (0, 0.4, created_access)


def test_boost_is_configurable_and_can_be_disabled(backend, make_engram):
    engram = make_engram(backend, strengthen=StrengthenSettings(importance_boost=0.2))
    a = engram.remember("alpha fact about rivers", importance=0.5).memory
    engram.recall("rivers")
    assert engram.get(a.id).importance == pytest.approx(0.7)
    engram.strengthen = StrengthenSettings(enabled=False)
    engram.recall("rivers")
    assert engram.get(a.id).importance == pytest.approx(0.7)
    assert engram.get(a.id).recall_count == 2


def test_touch_without_recall_only_refreshes_last_accessed(backend, make_engram, clock):
    engram = make_engram(backend)
    m = engram.remember("a knowledge entry").memory
    engram.store.touch([m.id], clock.t + 5, recall=False)
    after = engram.get(m.id)
    assert (after.last_accessed, after.recall_count, after.importance) == (clock.t + 5, 0, 0.5)


def test_strengthen_helper_applies_the_same_rule(backend, make_engram, clock):
    engram = make_engram(backend)
    m = engram.remember("helper strengthened entry", importance=0.3).memory
    strengthen(engram, [m], StrengthenSettings(), now=clock.t)
    assert engram.get(m.id).importance == pytest.approx(0.35)


def test_disabled_store_accepts_the_new_touch():
    DisabledMemoryStore().touch(["x"], 1.0, importance_boost=0.05, importance_cap=1.0)


def test_a_boosted_importance_is_rounded_not_drifting(backend, make_engram):
    # 0.7 + 0.1 is 0.7999999999999999 in binary floating point: printed at every door (`--json`,
    # HTTP) after a recall. Boosts are rounded now, and an unboosted touch keeps the value given.
    engram = make_engram(backend, strengthen=StrengthenSettings(importance_boost=0.1))
    m = engram.remember("a fact about glaciers", importance=0.7).memory
    engram.recall("glaciers")
    assert engram.get(m.id).importance == 0.8
    for _ in range(3):
        engram.recall("glaciers")
    assert engram.get(m.id).importance == 1.0
    precise = engram.remember("a fact about fjords", importance=0.1234567891234).memory
    engram.store.touch([precise.id], 1.0, recall=True, importance_boost=0.0)
    assert engram.get(precise.id).importance == 0.1234567891234
