"""``when="since Monday"`` is the phrase the docs list, not a memory named "Monday" to look up;
``when="since the launch"`` still bounds the range by the memory that names the launch."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from engram import Engram
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
