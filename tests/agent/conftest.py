from __future__ import annotations

import pytest

from engram.engine import Engram
from engram.store.sqlite import SqliteMemoryStore


class Clock:
    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def engram(tmp_path, clock):
    with Engram(SqliteMemoryStore(tmp_path / "memory.db"), agent="tester", clock=clock) as e:
        yield e
