"""``when="since Monday"`` is the phrase the docs list, not a memory named "Monday" to look up;
``when="since the launch"`` still bounds the range by the memory that names the launch."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from engram import Engram, Filters
from engram.errors import ValidationError
from engram.store.sqlite import SqliteMemoryStore
from engram.temporal.reader import TimeReader


def _at(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


NOW = _at("2026-04-15T10:00")  # a Wednesday


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Engram]:
    engine = Engram(SqliteMemoryStore(tmp_path / "memory.db"), agent="alice", clock=lambda: NOW,
                    time_reader=TimeReader("UTC"))
    engine.remember("Decided to ship the parser", valid_from="2026-04-14")
    engine.remember("Decided to drop the old parser", valid_from="2026-03-20")
    engine.remember("The launch of version 2", valid_from="2026-04-01")
    yield engine
    engine.close()


@pytest.mark.parametrize(("when", "start"), [
    ("since Monday", "2026-04-13T00:00"), ("since March", "2026-03-01T00:00"),
    ("since  last week", "2026-04-06T00:00"), ("Since 2026-04-10", "2026-04-10T00:00"),
])
def test_since_a_phrase_is_that_phrase(mem: Engram, when: str, start: str) -> None:
    result = mem.recall("decided parser", when=when)
    assert result.hits and all(h.memory.event_time >= _at(start) for h in result.hits), result.notes
    assert any(note.startswith("time: ") for note in result.notes)


def test_since_words_of_a_memory_still_anchor_on_it(mem: Engram) -> None:
    result = mem.recall("decided parser", when="since the launch")
    assert [h.memory.content for h in result.hits] == ["Decided to ship the parser"]
    assert any("the time of" in note for note in result.notes)
    with pytest.raises(ValidationError, match="when"):
        mem.recall("decided", when="since the coronation")


def test_hour_and_minute_phrases_count_whole_clock_hours_and_minutes(tmp_path: Path) -> None:
    """``until="2 hours ago"`` keeps the whole clock hour 2 hours back, as ``until="2 days ago"``
    keeps that whole day; ``when`` and ``since`` read the same phrases."""
    now = [_at("2026-04-15T08:20:30")]
    engine = Engram(SqliteMemoryStore(tmp_path / "memory.db"), agent="alice", clock=lambda: now[0],
                    time_reader=TimeReader("UTC"))
    try:
        engine.remember("early note about the parser", key="early")
        now[0] = _at("2026-04-15T09:45:10")
        engine.remember("later note about the parser", key="later")
        now[0] = _at("2026-04-15T10:00:05")

        def keys(**window: str) -> list[str]:
            return sorted(m.key for m in engine.list(Filters(**window)))

        assert keys(until="2 hours ago") == ["early"]  # 08:00-09:00, all of it
        assert keys(until="an hour ago") == keys(since="2 hours ago") == ["early", "later"]
        assert keys(since="an hour ago") == keys(since="15 minutes ago") == ["later"]
        assert keys(until="15 minutes ago") == ["early", "later"]  # 09:45:00-09:46:00, whole minute
        assert keys(until="16 minutes ago") == ["early"]
        assert keys(since="half an hour ago") == ["later"] and keys(since="10 minutes ago") == []
        found = engine.recall("parser", when="2 hours ago")
        assert [h.memory.key for h in found.hits] == ["early"], found.notes
        assert [h.memory.key for h in engine.recall("note about the parser an hour ago").hits] == ["later"]
        with pytest.raises(ValidationError, match="until"):
            engine.list(Filters(since="an hour ago", until="2 hours ago"))
    finally:
        engine.close()
