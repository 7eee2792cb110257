"""An import keeps the source's times, and the lifecycle jobs count age from the later of those and
the memory's arrival in this store (``received_at``): a year of memories brought from another
system survives the maintenance run right after the import (``engram serve`` runs due jobs at
start), and goes once a job's limit has passed counted from the arrival. On a real SQLite file,
each job run with an explicit ``now``."""

from __future__ import annotations

import json
import logging
import random
from typing import Any

import pytest

from engram.engine import Engram
from engram.ids import key_from_content
from engram.lifecycle import consolidate, decay, hygiene, retention
from engram.lifecycle.settings import ConsolidationSettings, DecaySettings, HygieneSettings, RetentionSettings
from engram.model import Memory
from engram.store.sqlite import SqliteMemoryStore
from tests.lifecycle.conftest import DAY, T0, remember_at

# Created and last changed about two years before the clock (T0 is 2027-01-15).
OLD = [{"id": "a1", "memory": "User likes green tea", "user_id": "alice",
        "created_at": "2025-01-01T00:00:00Z", "updated_at": "2025-02-01T00:00:00Z"},
       {"id": "a2", "memory": "User walks to work", "user_id": "alice",
        "created_at": "2025-01-01T00:00:00Z", "updated_at": "2025-02-01T00:00:00Z"}]
JAN_1_2025, FEB_1_2025 = 1735689600.0, 1738368000.0
FAINT = DecaySettings(max_importance=0.6)  # mem0's memories come with importance 0.5
NO_SURVIVAL = HygieneSettings(knowledge_survival_chance=0.0)


def removed(engram, now: float) -> dict[str, list[str]]:
    """What each job removes at ``now``: retention by either basis, hygiene with no survival, decay."""
    runs = {
        "retention (accessed)": retention.run(engram, RetentionSettings(basis="accessed"), now=now),
        "retention": retention.run(engram, RetentionSettings(), now=now),
        "hygiene": hygiene.run(engram, NO_SURVIVAL, now=now, rng=random.Random(0)),
        "decay": decay.run(engram, FAINT, now=now),
    }
    return {job: sorted(m.content for m in report.removed) for job, report in runs.items() if report.removed}


def imported(engram) -> list[Memory]:
    return sorted(engram.for_agent("alice").list(limit=10), key=lambda m: m.content)


def test_a_year_of_mem0_memories_survives_the_run_right_after_import_and_goes_once_past_the_limit(
        make_engram, clock):
    engram = make_engram("sqlite")
    assert engram.import_from(json.dumps(OLD), "mem0").imported == 2
    memories = imported(engram)
    # The source's times kept exactly; the arrival is this store's clock.
    assert {(m.created_at, m.updated_at, m.received_at) for m in memories} == {(JAN_1_2025, FEB_1_2025, T0)}
    assert removed(engram, T0) == {}  # the run right after the import
    assert removed(engram, T0 + 30 * DAY) == {}  # idle and decay limits reached, not passed ("older than" is strict)
    assert len(imported(engram)) == 2

    # Past hygiene's 30 idle days counted from the arrival: purged (survival chance 0).
    assert removed(engram, T0 + 30 * DAY + 1) == {"hygiene": ["User likes green tea", "User walks to work"]}


@pytest.mark.parametrize("job, now", [
    ("retention", T0 + 90 * DAY + 1),  # an agent's memories are kept 90 days from their last write here
    ("decay", T0 + 30 * DAY + 1),  # faint and never recalled, over 30 days here
])
def test_each_job_removes_them_once_its_limit_has_passed_from_the_arrival(make_engram, clock, job, now):
    engram = make_engram("sqlite")
    engram.import_from(json.dumps(OLD), "mem0")
    if job == "retention":
        assert retention.run(engram, RetentionSettings(), now=now - 1).removed == ()
        report = retention.run(engram, RetentionSettings(), now=now)
    else:
        assert decay.run(engram, FAINT, now=now - 1).removed == ()
        report = decay.run(engram, FAINT, now=now)
    assert sorted(m.content for m in report.removed) == ["User likes green tea", "User walks to work"]
    assert imported(engram) == []


def test_a_sources_old_access_time_is_no_idleness_here(make_engram, clock):
    # PtrClaw's file keeps when each entry was last used: a year before its arrival, it is not idle yet.
    engram = make_engram("sqlite")
    document = [{"key": "tea", "content": "User likes green tea", "category": "knowledge",
                 "timestamp": JAN_1_2025, "last_accessed": FEB_1_2025}]
    assert engram.import_snapshot(json.dumps(document)).imported == 1
    (memory,) = engram.list()
    assert (memory.last_accessed, memory.received_at) == (FEB_1_2025, T0)
    assert hygiene.run(engram, NO_SURVIVAL, now=T0 + 30 * DAY, rng=random.Random(0)).removed == ()
    assert [m.key for m in hygiene.run(engram, NO_SURVIVAL, now=T0 + 30 * DAY + 1, rng=random.Random(0)).removed] == [
        "tea"]


def test_an_older_snapshots_conversation_and_faint_memories_arrive_now(make_engram, clock):
    # A snapshot written before arrivals were kept: its entries arrive when imported.
    engram = make_engram("sqlite")
    old = {"created_at": JAN_1_2025, "updated_at": JAN_1_2025, "scope": "global"}
    document = {"format": "engram-snapshot", "version": 1, "memories": [
        {"key": "chat", "content": "We talked about tea", "category": "conversation", **old},
        {"key": "faint", "content": "A faint fact", "importance": 0.1, **old}]}
    assert engram.import_snapshot(json.dumps(document)).imported == 2
    assert {m.received_at for m in engram.list()} == {T0}
    assert hygiene.run(engram, NO_SURVIVAL, now=T0 + 7 * DAY, rng=random.Random(0)).removed == ()
    assert decay.run(engram, DecaySettings(), now=T0 + 7 * DAY).removed == ()
    report = hygiene.run(engram, NO_SURVIVAL, now=T0 + 7 * DAY + 1, rng=random.Random(0))
    assert [m.key for m in report.removed] == ["chat"]  # conversation past 7 days (max_age_s) from its arrival
    assert [m.key for m in decay.run(engram, DecaySettings(), now=T0 + 30 * DAY + 1).removed] == ["faint"]


def test_a_refresh_is_a_write_here_and_keeps_the_first_arrival(make_engram, clock):
    # mem0 rewrote an item in place since the first import: the re-import brings its text. The change
    # is stamped with this store's clock (never the source's older time), so the memory counts as
    # written now; its arrival stays the first import's.
    engram = make_engram("sqlite")
    engram.import_from(json.dumps(OLD), "mem0")
    clock.advance(100 * DAY)  # past the 90 days of retention from the arrival
    rewritten = [{**OLD[0], "memory": "User likes green tea, no sugar", "updated_at": "2025-03-01T00:00:00Z"}, OLD[1]]
    summary = engram.import_from(json.dumps(rewritten), "mem0")
    assert (summary.imported, summary.updated) == (0, 1)
    tea = imported(engram)[0]
    assert (tea.content, tea.created_at, tea.updated_at, tea.received_at) == (
        "User likes green tea, no sugar", JAN_1_2025, clock.t, T0)
    report = retention.run(engram, RetentionSettings(), now=clock.t)
    assert [m.content for m in report.removed] == ["User walks to work"]  # unchanged: 100 days since it arrived
    assert [m.content for m in imported(engram)] == ["User likes green tea, no sugar"]


def test_a_copy_imported_now_merged_into_an_older_memory_gives_it_its_arrival(make_engram, clock, embedder):
    # Consolidation kept the survivor's own arrival: a chat imported today, merged into the same
    # chat held here for 5 days, went at the hygiene run right after, 7 days (max_age_s) being past
    # for the older copy. The survivor now arrives when the latest of the group did.
    engram = make_engram("sqlite", embedder=embedder)
    held = remember_at(engram, T0 - 5 * DAY, "We talked about green tea with Ann", category="conversation",
                       importance=0.8).memory
    document = {"format": "engram-snapshot", "version": 1, "memories": [
        {"content": "With Ann we talked about green tea", "category": "conversation",
         "created_at": JAN_1_2025, "updated_at": JAN_1_2025}]}  # no key: one engram derives, so it may merge away
    assert engram.import_snapshot(json.dumps(document)).imported == 1
    (copy,) = [m for m in engram.list() if m.id != held.id]
    assert (held.received_at, copy.received_at) == (T0 - 5 * DAY, T0)
    clock.advance(3 * DAY)
    report = consolidate.run(engram, ConsolidationSettings(threshold=0.95), now=clock.t)
    assert [m.id for m in report.removed] == [copy.id]
    (survivor,) = engram.store.get_many([held.id])
    # Its times are its own and the group's last write; its arrival is the import's.
    assert (survivor.created_at, survivor.updated_at, survivor.received_at) == (T0 - 5 * DAY, T0 - 5 * DAY, T0)
    assert hygiene.run(engram, NO_SURVIVAL, now=clock.t, rng=random.Random(0)).removed == ()
    assert hygiene.run(engram, NO_SURVIVAL, now=T0 + 7 * DAY, rng=random.Random(0)).removed == ()
    assert [m.id for m in hygiene.run(engram, NO_SURVIVAL, now=T0 + 7 * DAY + 1, rng=random.Random(0)).removed] == [
        held.id]  # 7 days after the import arrived, as the imported copy alone would have gone


def test_a_fact_learned_elsewhere_merged_into_an_older_one_is_kept_for_retention_from_its_arrival(
        make_engram, clock, embedder):
    # ``remember(..., created_at=old)``: learned long ago elsewhere, arriving now. Merged into the same
    # fact held here for 80 days, retention (90 days from the last write here) purged it 10 days later.
    engram = make_engram("sqlite", embedder=embedder)
    held = remember_at(engram, T0 - 80 * DAY, "The user is allergic to peanuts", importance=0.8).memory
    learned = engram.remember("the user is allergic to peanuts!", created_at=T0 - 400 * DAY).memory
    assert learned.received_at == T0
    clock.advance(20 * DAY)
    assert [m.id for m in consolidate.run(engram, ConsolidationSettings(threshold=0.95), now=clock.t).removed] == [
        learned.id]
    assert engram.store.get_many([held.id])[0].received_at == T0
    assert retention.run(engram, RetentionSettings(), now=clock.t).removed == ()
    assert retention.run(engram, RetentionSettings(), now=T0 + 90 * DAY).removed == ()
    assert [m.id for m in retention.run(engram, RetentionSettings(), now=T0 + 90 * DAY + 1).removed] == [held.id]


def test_a_merge_never_makes_a_survivor_arrive_earlier(make_engram, clock, embedder):
    # The survivor arrived last: it keeps its arrival; a member whose arrival is unknown (stored
    # before engram kept arrivals) counts for nothing.
    engram = make_engram("sqlite", embedder=embedder)
    older = remember_at(engram, T0 - 50 * DAY, "The office is closed on Fridays").memory
    text = "On Fridays the office is closed"
    engram.store.import_memories([Memory(id="unknown", key=key_from_content(text), content=text, scope=older.scope,
                                         created_at=T0 - 60 * DAY, updated_at=T0 - 60 * DAY)])
    engram.embed_missing()
    survivor = engram.remember("Closed on Fridays: the office is", importance=0.9).memory
    report = consolidate.run(engram, ConsolidationSettings(threshold=0.95), now=clock.t)
    assert sorted(m.id for m in report.removed) == sorted([older.id, "unknown"])
    assert engram.store.get_many([survivor.id])[0].received_at == T0


def test_a_survivor_of_unknown_arrival_takes_the_groups_and_a_group_of_unknown_ones_stays_unknown(
        make_engram, clock, embedder):
    engram = make_engram("sqlite", embedder=embedder)

    def before_arrivals(memory_id: str, text: str, importance: float) -> Memory:
        # Stored before engram kept arrivals: received_at None.
        return Memory(id=memory_id, key=key_from_content(text), content=text, scope=engram.scope, importance=importance,
                      created_at=T0 - 60 * DAY, updated_at=T0 - 60 * DAY)

    engram.store.import_memories([
        before_arrivals("tea", "The user drinks green tea", 0.9),
        before_arrivals("bus", "The user takes the bus to work", 0.9),
        before_arrivals("bus-copy", "To work the user takes the bus", 0.5)])
    engram.embed_missing()
    arrived = engram.remember("Green tea the user drinks").memory
    report = consolidate.run(engram, ConsolidationSettings(threshold=0.95), now=clock.t)
    assert sorted(m.id for m in report.removed) == sorted([arrived.id, "bus-copy"])
    assert {m.id: m.received_at for m in engram.store.get_many(["tea", "bus"])} == {"tea": T0, "bus": None}


class _BeforeRaiseReceivedAt(SqliteMemoryStore):
    """A real SQLite store that, like a plug-in written before it, has no ``raise_received_at``."""

    def __getattribute__(self, name: str) -> Any:
        if name == "raise_received_at":
            raise AttributeError(name)
        return super().__getattribute__(name)


def test_a_store_that_cannot_raise_an_arrival_leaves_such_a_group_unmerged(tmp_path, clock, embedder, caplog):
    store = _BeforeRaiseReceivedAt(tmp_path / "memory.db")
    assert not hasattr(store, "raise_received_at")
    engram = Engram(store, clock=clock, embedder=embedder)
    held = remember_at(engram, T0 - 80 * DAY, "The user is allergic to peanuts", importance=0.8).memory
    learned = engram.remember("Peanuts the user is allergic to", created_at=T0 - 400 * DAY).memory
    # Merged, the fact that arrived now would take the survivor's older arrival: left as they are.
    with caplog.at_level(logging.WARNING, logger="engram.lifecycle.consolidate"):
        assert consolidate.run(engram, ConsolidationSettings(threshold=0.95), now=clock.t).removed == ()
    assert "has no raise_received_at" in caplog.text
    assert {m.id: m.received_at for m in store.get_many([held.id, learned.id])} == {held.id: T0 - 80 * DAY,
                                                                                    learned.id: T0}
    # A group whose survivor arrived last loses no arrival: merged as before.
    kept = engram.remember("The user owns a red bicycle", importance=0.9).memory
    older = remember_at(engram, T0 - 10 * DAY, "A red bicycle the user owns").memory
    assert [m.id for m in consolidate.run(engram, ConsolidationSettings(threshold=0.95), now=clock.t).removed] == [
        older.id]
    assert store.get_many([kept.id])[0].received_at == T0
    engram.close()
