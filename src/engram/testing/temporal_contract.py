"""The time part of the MemoryStore contract: valid time, superseding, "as of", "as known at" and
time phrases in recall. ``MemoryStoreContract`` inherits it, so it runs on every backend.

Everything runs under a fake clock in UTC, so the dates below are exact.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from engram.engine import Engram, Filters
from engram.errors import ValidationError
from engram.store.base import MemoryStore
from engram.temporal.reader import TimeReader
from engram.testing.fakes import FakeClock

DAY = 86_400.0


def at(text: str) -> float:
    """Epoch seconds of an ISO date/time in UTC."""
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


class TemporalContract:
    @pytest.fixture
    def timed(self, store: MemoryStore) -> tuple[Engram, FakeClock]:
        clock = FakeClock(at("2026-04-15T10:00:00"))  # a Wednesday
        return Engram(store, agent="alice", clock=clock, max_content_chars=500, time_reader=TimeReader("UTC")), clock

    def test_valid_time_is_open_by_default_and_explicit_values_round_trip(
        self, timed: tuple[Engram, FakeClock], make_store: Callable[[], MemoryStore], tmp_path
    ) -> None:
        mem, _ = timed
        plain = mem.remember("User likes tea").memory
        assert (plain.valid_from, plain.valid_until, plain.superseded_at) == (None, None, None)
        dated = mem.remember("Office in Lisbon", valid_from="2025-01-01", valid_until=at("2025-12-31T00:00:00")).memory
        assert (dated.valid_from, dated.valid_until) == (at("2025-01-01T00:00:00"), at("2025-12-31T00:00:00"))
        assert mem.get(dated.id).valid_from == at("2025-01-01T00:00:00")
        with pytest.raises(ValidationError) as err:
            mem.remember("Backwards", valid_from="2025-02-01", valid_until="2025-01-01")
        assert err.value.field == "valid_until"
        with pytest.raises(ValidationError) as err:
            mem.remember("Unreadable", valid_from="next tuesday-ish")
        assert err.value.field == "valid_from"
        assert mem.find("backwards") is None and mem.count() == 2
        # The new fields survive a snapshot into a fresh store of the same backend.
        from engram.testing.contracts import _fresh

        fresh_store = _fresh(make_store, tmp_path)
        fresh = Engram(fresh_store, agent="alice", clock=mem.clock)
        fresh.import_snapshot(mem.export_snapshot())
        assert fresh.get(dated.id).valid_until == at("2025-12-31T00:00:00")
        fresh_store.close()

    def test_content_stating_a_date_sets_valid_from_and_explicit_wins(self, timed: tuple[Engram, FakeClock]) -> None:
        mem, _ = timed
        stated = mem.remember("On 2026-04-12 the migration failed").memory
        assert stated.valid_from == at("2026-04-12T00:00:00")
        explicit = mem.remember("On 2026-04-12 the backup ran", valid_from="2026-04-11T22:00:00").memory
        assert explicit.valid_from == at("2026-04-11T22:00:00")
        assert mem.remember("The deadline is 2026-05-01").memory.valid_from is None

    def test_superseding_closes_validity_and_keeps_the_memory(self, timed: tuple[Engram, FakeClock]) -> None:
        mem, clock = timed
        berlin = mem.remember("User lives in Berlin", valid_from="2020-03-01").memory
        clock.advance(DAY)
        paris = mem.remember("User lives in Paris", valid_from="2024-06-01").memory
        closed = mem.supersede(berlin.key, paris.key)
        assert closed.superseded_by == paris.id
        assert closed.valid_until == at("2024-06-01T00:00:00")  # where the new fact begins
        assert closed.superseded_at == clock()
        assert [h.memory.id for h in mem.recall("where does the user live")] == [paris.id]
        assert mem.count(Filters(include_superseded=True)) == 2
        # Without a stated start, the old fact closes now.
        tea = mem.remember("User drinks tea").memory
        coffee = mem.remember("User drinks coffee").memory
        assert mem.supersede(tea.id, coffee.id).valid_until == clock()
        with pytest.raises(ValidationError):
            mem.supersede(tea.id, tea.id)

    def test_recall_as_of_a_valid_time(self, timed: tuple[Engram, FakeClock]) -> None:
        mem, clock = timed
        berlin = mem.remember("User lives in Berlin", valid_from="2020-03-01").memory
        clock.advance(DAY)
        paris = mem.remember("User lives in Paris", valid_from="2024-06-01").memory
        mem.supersede(berlin.id, paris.id)
        assert [h.memory.id for h in mem.recall("where does the user live", as_of="2022-01-01")] == [berlin.id]
        assert [h.memory.id for h in mem.recall("where does the user live", as_of="2025-01-01")] == [paris.id]
        assert mem.recall("where does the user live", as_of="2019-01-01").hits == ()
        as_of = mem.recall("user lives", as_of="2022-01-01")
        assert any("as of 2022-01-01" in note for note in as_of.notes)
        listed = mem.list(Filters(as_of="2024-06-01"))  # the old fact ends as the new begins
        assert [m.id for m in listed] == [paris.id]

    def test_recall_as_known_at_a_record_time(self, timed: tuple[Engram, FakeClock]) -> None:
        mem, clock = timed
        t0 = clock()
        mem.remember("Project uses Python 3.11", key="python-version")
        clock.advance(DAY)
        t1 = clock()
        mem.remember("Project uses Python 3.12", key="python-version")
        clock.advance(DAY)
        later = mem.remember("Project uses Rust for the parser").memory
        then = mem.recall("project uses", known_at=t0 + 60)
        assert [h.memory.content for h in then] == ["Project uses Python 3.11"]
        assert any(note.startswith("as known at") for note in then.notes)
        now = mem.recall("project uses", known_at=t1 + 60)
        assert [h.memory.content for h in now] == ["Project uses Python 3.12"]
        assert mem.recall("project uses", known_at=t0 - 60).hits == ()
        # A supersede after the record time asked about did not exist yet then.
        clock.advance(DAY)
        mem.supersede("python-version", later.id)
        assert "Project uses Python 3.12" not in [h.memory.content for h in mem.recall("project uses")]
        before_supersede = mem.recall("python", known_at=t1 + 60)
        assert [h.memory.content for h in before_supersede] == ["Project uses Python 3.12"]

    def test_time_phrases_in_the_query_and_when(self, timed: tuple[Engram, FakeClock]) -> None:
        mem, clock = timed
        clock.now = at("2026-04-07T15:00:00")  # Tuesday of last week
        last_week = mem.remember("We decided to ship the parser").memory
        clock.now = at("2026-04-14T09:00:00")  # yesterday
        yesterday = mem.remember("We decided to rename the parser").memory
        clock.now = at("2026-04-15T10:00:00")
        old_event = mem.remember("On 2026-03-02 we decided to fork the parser").memory  # stored today, happened in March
        result = mem.recall("what did we decide about the parser last week")
        assert [h.memory.id for h in result] == [last_week.id]
        assert any("2026-04-06 00:00 to 2026-04-13 00:00" in note for note in result.notes)
        assert [h.memory.id for h in mem.recall("parser", when="yesterday")] == [yesterday.id]
        assert [h.memory.id for h in mem.recall("what did we decide in March")] == [old_event.id]
        assert [h.memory.id for h in mem.recall("parser decided since Monday")] == [yesterday.id]
        assert mem.recall("two days ago").hits == ()  # Monday the 13th: nothing happened
        assert [h.memory.id for h in mem.recall("yesterday")] == [yesterday.id]
        with pytest.raises(ValidationError) as err:
            mem.recall("parser", when="the other day maybe")
        assert err.value.field == "when"
        # A phrase that leaves nothing in range falls back to any time, and says so.
        wide = mem.recall("rename parser in 2019")
        assert wide.hits[0].memory.id == yesterday.id
        assert any("nothing in that time" in note for note in wide.notes)

    def test_when_before_or_after_what_a_memory_names(self, timed: tuple[Engram, FakeClock]) -> None:
        mem, _ = timed
        launch = mem.remember("We launched the beta to the first customers", valid_from="2026-03-01").memory
        login = mem.remember("Fixed the login bug", valid_from="2026-02-01").memory
        signup = mem.remember("Fixed the signup bug", valid_from="2026-03-10").memory
        before = mem.recall("fixed bug", when="before the beta launch")
        assert [h.memory.id for h in before] == [login.id]
        assert any(launch.key in note for note in before.notes)  # the note names the memory it read
        assert [h.memory.id for h in mem.recall("fixed bug", when="after the beta launch")] == [signup.id]
        assert [h.memory.id for h in mem.recall("beta customers", when="since the beta launch")] == [launch.id]
        assert [h.memory.id for h in mem.recall("beta customers", when="after the beta launch")] == []
        assert [h.memory.id for h in mem.recall("fixed bug", when="since the beta launch")] == [signup.id]
        with pytest.raises(ValidationError) as err:
            mem.recall("fixed bug", when="before the unicorn parade")
        assert err.value.field == "when"
