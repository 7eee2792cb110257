"""Supersedes racing the opposite ways on PostgreSQL (two engines, each with its own connection
pool on one database, as two hosts would be) never leave a cycle: the store reads the chain inside
the write's transaction, after the supersede lock, so one is stored and the other refused. As in
``tests/unit/test_supersede_race.py``, a barrier holds each engine right before its store write."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.config import load_settings
from engram.engine import Engram
from tests.unit.test_supersede_race import check_chain, check_opposite_ways


def opened(pg_url: str, home: Path) -> Engram:
    return Engram.from_settings(load_settings(home=home, database_url=pg_url, embeddings={"provider": "none"},
                                              files={"enabled": False}))


def test_two_engines_cannot_supersede_each_others_way_on_postgres(pg_url: str, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    with opened(pg_url, tmp_path / "a") as first, opened(pg_url, tmp_path / "b") as second:
        check_opposite_ways(first, second, monkeypatch)


def test_a_cycle_through_a_chain_is_refused_when_raced_on_postgres(pg_url: str, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    with opened(pg_url, tmp_path / "a") as first, opened(pg_url, tmp_path / "b") as second:
        check_chain(first, second, monkeypatch, rounds=5)
