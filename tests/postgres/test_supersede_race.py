"""Supersedes racing the opposite ways on PostgreSQL (two engines, each with its own connection
pool on one database, as two hosts would be) never leave a cycle: the store reads the chain inside
the write's transaction, after the supersede lock, so one is stored and the other refused. As in
``tests/unit/test_supersede_race.py``, a barrier holds each engine right before its store write."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from engram.config import load_settings
from engram.engine import Engram
from engram.errors import ValidationError
from tests.unit.test_supersede_race import held_before_the_write, race, successors


def opened(pg_url: str, home: Path) -> Engram:
    return Engram.from_settings(load_settings(home=home, database_url=pg_url, embeddings={"provider": "none"},
                                              files={"enabled": False}))


def test_two_engines_cannot_supersede_each_others_way_on_postgres(pg_url: str, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    with opened(pg_url, tmp_path / "a") as first, opened(pg_url, tmp_path / "b") as second:
        first.remember("The team deploys on Tuesdays", key="deploy-old")
        first.remember("The team deploys on Thursdays", key="deploy-new")
        barrier = threading.Barrier(2)
        held_before_the_write(first, barrier, monkeypatch)
        held_before_the_write(second, barrier, monkeypatch)
        errors = race([lambda: first.supersede("deploy-old", "deploy-new"),
                       lambda: second.supersede("deploy-new", "deploy-old")])
        assert [type(e) for e in errors].count(ValidationError) == 1 and errors.count(None) == 1, errors
        assert successors(second, "deploy-old", "deploy-new") in (
            {"deploy-old": "deploy-new", "deploy-new": None}, {"deploy-old": None, "deploy-new": "deploy-old"})
        assert len(first.recall("when does the team deploy").hits) == 1


def test_a_cycle_through_a_chain_is_refused_when_raced_on_postgres(pg_url: str, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    with opened(pg_url, tmp_path / "a") as first, opened(pg_url, tmp_path / "b") as second:
        for day in ("Mondays", "Tuesdays", "Fridays"):
            first.remember(f"The team deploys on {day}", key=f"deploy-{day.lower()}")
        first.supersede("deploy-mondays", "deploy-tuesdays")
        for _ in range(5):  # the rows each write locks differ: a few rounds, undone between them
            barrier = threading.Barrier(2)
            held_before_the_write(first, barrier, monkeypatch)
            held_before_the_write(second, barrier, monkeypatch)
            errors = race([lambda: first.supersede("deploy-tuesdays", "deploy-fridays"),
                           lambda: second.supersede("deploy-fridays", "deploy-mondays")])
            assert [type(e) for e in errors].count(ValidationError) == 1 and errors.count(None) == 1, errors
            assert len(first.recall("when does the team deploy").hits) == 1
            monkeypatch.undo()
            for key in ("deploy-tuesdays", "deploy-fridays"):
                first.store.set_superseded(first.get(key).id, None)
