"""``created_at`` is record time, when engram learned a memory, so a new memory is never created
later than now: every later change is stamped with the engine's clock, and one made after a
``remember(created_at=<the future>)`` stored an ``updated_at`` before the ``created_at``. A time a
few minutes ahead (another machine's clock running fast) is now; one further ahead is refused,
naming the field, storing nothing. Past times (what an import or a memory file brings) are kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.engine import Engram
from engram.errors import ValidationError
from engram.store.sqlite import SqliteMemoryStore
from engram.testing.fakes import FakeClock

DAY = 86400.0


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def mem(tmp_path: Path, clock: FakeClock) -> Engram:
    engram = Engram(SqliteMemoryStore(tmp_path / "memory.db"), agent="alice", clock=clock)
    engram.remember("already stored", key="kept")
    yield engram
    engram.close()


def _unchanged(mem: Engram) -> None:
    assert [m.key for m in mem.list()] == ["kept"] and mem.get("kept").content == "already stored"


def test_a_created_at_later_than_now_is_refused_naming_it(mem: Engram, clock: FakeClock) -> None:
    from engram.model import CREATED_AT_LEEWAY_S  # (imported here: the other tests run without it)

    for ahead in (DAY, CREATED_AT_LEEWAY_S + 1):
        with pytest.raises(ValidationError) as refused:
            mem.remember("planned for next week", created_at=clock.now + ahead)
        assert refused.value.field == "created_at"
        assert "later than now" in refused.value.problem and "valid_from" in str(refused.value.allowed)
        _unchanged(mem)
    with pytest.raises(ValidationError) as refused:  # ISO 8601 text the same way
        mem.remember("planned for next year", created_at="2999-01-01T00:00:00Z")
    assert refused.value.field == "created_at"
    with pytest.raises(ValidationError) as refused:  # refused at once, nothing queued
        mem.remember_soon("planned", created_at=clock.now + DAY)
    assert refused.value.field == "created_at"
    with pytest.raises(ValidationError) as refused:
        mem.remember_many([{"content": "fine"}, {"content": "planned", "created_at": clock.now + DAY}])
    assert refused.value.field == "items[1].created_at"
    _unchanged(mem)
    # A fact that will hold in the future is valid time, which may be anywhere.
    future = mem.remember("The office moves on 2999-01-01", valid_from=clock.now + 30 * DAY).memory
    assert future.created_at == clock.now and future.valid_from == clock.now + 30 * DAY


def test_a_created_at_a_few_minutes_ahead_is_now_and_a_later_update_never_precedes_it(
        mem: Engram, clock: FakeClock) -> None:
    made = mem.remember("noted on a laptop whose clock runs fast", created_at=clock.now + 120).memory
    assert made.created_at == made.updated_at == clock.now
    clock.advance(10)
    updated = mem.update(made.id, content="noted on a laptop whose clock runs fast, corrected").memory
    assert updated.updated_at == clock.now and updated.created_at <= updated.updated_at
    many = mem.remember_many([{"content": "bulk, fast clock", "created_at": clock.now + 60}])[0].memory
    assert many.created_at == clock.now


def test_a_created_at_in_the_past_is_kept_exactly(mem: Engram, clock: FakeClock) -> None:
    past = clock.now - 400 * DAY
    made = mem.remember("learned long ago", created_at=past).memory
    assert (made.created_at, mem.get(made.id).created_at) == (past, past)
    assert mem.remember("learned just now", created_at=clock.now).memory.created_at == clock.now
