"""Trims, compactions and appends racing on one conversation lose nothing on PostgreSQL
(tests/history_races.py): two processes, and two threads, on one database."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from engram.history.postgres import PostgresHistoryStore
from tests.history_races import SCENARIOS


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.__name__)
@pytest.mark.parametrize("mode", ["process", "thread"])
def test_removals_racing_on_one_conversation_lose_nothing(scenario: Callable[..., None], mode: str,
                                                           pg_url: str) -> None:
    scenario(lambda: PostgresHistoryStore.open(pg_url), mode)
