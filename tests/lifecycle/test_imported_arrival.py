"""An import keeps the source's times, and the lifecycle jobs count age from the later of those and
the memory's arrival in this store (``received_at``): a year of memories brought from another
system survives the maintenance run right after the import (``engram serve`` runs due jobs at
start), and goes once a job's limit has passed counted from the arrival. On a real SQLite file,
each job run with an explicit ``now``."""

from __future__ import annotations

import json
import random

import pytest

from engram.lifecycle import decay, hygiene, retention
from engram.lifecycle.settings import DecaySettings, HygieneSettings, RetentionSettings
from engram.model import Memory
from tests.lifecycle.conftest import DAY, T0

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
