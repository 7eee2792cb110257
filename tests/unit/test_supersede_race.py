"""Two supersedes racing the opposite ways (A by B in one engine, B by A in another, both on one
real SQLite file) never leave a cycle: the store checks the chain in the write's own transaction,
so exactly one of them is stored and the other is refused, naming both keys. A barrier holds each
engine right before its store write, where the check used to run alone: both have read the
memories and neither has written yet. Through a chain of three too, and in two processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from engram.engine import Engram
from engram.errors import ValidationError


def opened(home: Path) -> Engram:
    return Engram.from_settings(home=home, embeddings={"provider": "none"}, files={"enabled": False})


def held_before_the_write(engram: Engram, barrier: threading.Barrier, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hold ``engram``'s store write until the other engine reaches its own."""
    write = engram.store.set_superseded

    def gated(*args: Any, **kwargs: Any) -> bool:
        barrier.wait(timeout=30)
        return write(*args, **kwargs)

    monkeypatch.setattr(engram.store, "set_superseded", gated)


def race(calls: list[Callable[[], Any]]) -> list[BaseException | None]:
    """Run ``calls`` at once on threads of their own; each one's error, None where it returned."""
    errors: list[BaseException | None] = [None] * len(calls)

    def run(i: int) -> None:
        try:
            calls[i]()
        except BaseException as exc:  # noqa: BLE001 - the test looks at every outcome
            errors[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return errors


def successors(engram: Engram, *keys: str) -> dict[str, str | None]:
    """Each memory's successor, by key (None: it holds)."""
    key_of = {engram.get(key).id: key for key in keys}
    return {key: key_of.get(engram.get(key).superseded_by or "") for key in keys}


def check_opposite_ways(first: Engram, second: Engram, monkeypatch: pytest.MonkeyPatch) -> None:
    """A by B in ``first`` and B by A in ``second``, both held right before their write: one is
    stored, the other refused naming both keys, and recall finds the one that holds."""
    first.remember("The team deploys on Tuesdays", key="deploy-old")
    first.remember("The team deploys on Thursdays", key="deploy-new")
    barrier = threading.Barrier(2)
    held_before_the_write(first, barrier, monkeypatch)
    held_before_the_write(second, barrier, monkeypatch)
    errors = race([lambda: first.supersede("deploy-old", "deploy-new"),
                   lambda: second.supersede("deploy-new", "deploy-old")])
    refused = [e for e in errors if e is not None]
    assert len(refused) == 1 and isinstance(refused[0], ValidationError), errors
    assert refused[0].field == "supersede" and "is itself superseded by" in str(refused[0])
    after = successors(second, "deploy-old", "deploy-new")
    # One holds: exactly one of the two points at the other, and recall still finds it.
    assert after in ({"deploy-old": "deploy-new", "deploy-new": None},
                     {"deploy-old": None, "deploy-new": "deploy-old"}), after
    assert len(first.recall("when does the team deploy").hits) == 1


def check_chain(first: Engram, second: Engram, monkeypatch: pytest.MonkeyPatch, rounds: int = 1) -> None:
    """mondays -> tuesdays stored, then tuesdays -> fridays and fridays -> mondays at once (a loop
    of three): one is refused. ``rounds`` times, undone between them (on PostgreSQL the rows each
    write locks differ from round to round)."""
    for day in ("Mondays", "Tuesdays", "Fridays"):
        first.remember(f"The team deploys on {day}", key=f"deploy-{day.lower()}")
    first.supersede("deploy-mondays", "deploy-tuesdays")
    for _ in range(rounds):
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


def test_two_engines_on_one_file_cannot_supersede_each_others_way(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    with opened(tmp_path) as first, opened(tmp_path) as second:
        check_opposite_ways(first, second, monkeypatch)


def test_a_cycle_through_a_chain_is_refused_when_raced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with opened(tmp_path) as first, opened(tmp_path) as second:
        check_chain(first, second, monkeypatch)


WORKER = """
import json, sys, time
from engram.engine import Engram
from engram.errors import ValidationError
home, old, new, start_at = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
with Engram.from_settings(home=home, embeddings={"provider": "none"}, files={"enabled": False}) as engram:
    real = engram.store.set_superseded
    def gated(*args, **kwargs):
        # Both processes have read the two memories; both write at the same moment.
        time.sleep(max(0.0, start_at - time.time()))
        return real(*args, **kwargs)
    engram.store.set_superseded = gated
    try:
        engram.supersede(old, new)
        print(json.dumps("stored"))
    except ValidationError as exc:
        print(json.dumps(exc.field))
"""


def test_two_processes_on_one_file_cannot_supersede_each_others_way(tmp_path: Path) -> None:
    with opened(tmp_path) as engram:
        engram.remember("The team deploys on Tuesdays", key="deploy-old")
        engram.remember("The team deploys on Thursdays", key="deploy-new")
    start_at = time.time() + 4.0  # interpreter start-up takes a second or two on a busy machine
    env = {**os.environ}
    env.pop("ENGRAM_HOME", None)
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, str(tmp_path), old, new, str(start_at)],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for old, new in (("deploy-old", "deploy-new"), ("deploy-new", "deploy-old"))]
    outcomes = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        outcomes.append(json.loads(out))
    assert sorted(outcomes) == ["stored", "supersede"], outcomes
    with opened(tmp_path) as engram:
        after = successors(engram, "deploy-old", "deploy-new")
        assert after in ({"deploy-old": "deploy-new", "deploy-new": None},
                         {"deploy-old": None, "deploy-new": "deploy-old"}), after
        assert len(engram.recall("when does the team deploy").hits) == 1
