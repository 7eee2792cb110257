"""`engram maintain` shows how far it is: the pass reports each job and the counts of the jobs that
go through memories (embedding those without a vector, consolidation, summaries); the CLI draws
them on stderr, leaving stdout (and --json) as it was."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest
from typer.testing import CliRunner

from engram.engine import Engram
from engram.errors import ValidationError
from engram.interfaces.cli import render
from engram.interfaces.cli.app import app
from engram.lifecycle import JOBS
from engram.lifecycle.scheduler import Maintenance
from engram.lifecycle.settings import LifecycleSettings

from .conftest import DAY


def _counts(calls: list[tuple[str, int, int]]) -> dict[str, list[tuple[int, int]]]:
    by_phase: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for phase, done, total in calls:
        by_phase[phase].append((done, total))
    return by_phase


def _rising_to_the_total(reports: list[tuple[int, int]]) -> None:
    counted = [(done, total) for done, total in reports if total]
    assert counted, reports
    dones = [done for done, _ in counted]
    assert dones == sorted(dones)
    assert counted[-1][0] == counted[-1][1]  # ends at its total


def test_a_pass_reports_each_job_and_the_counts_of_the_long_ones(make_engram, embedder, clock):
    engram = make_engram("sqlite", embedder=embedder)
    engram.remember_many([{"content": f"the user waters tomato plant number {i} every morning"} for i in range(700)]
                         + [{"content": "the user likes green tea"}, {"content": "the user likes green tea!"}])
    stored = engram.store.stats().memories
    engram.store.clear_vectors()  # left without vectors, as after a crash: the pass embeds them first
    clock.advance(2 * DAY)  # the day they were stored has ended: there is something to summarise
    calls: list[tuple[str, int, int]] = []
    report = Maintenance(engram, LifecycleSettings()).run(force=True, progress=lambda *call: calls.append(call))
    phases = _counts(calls)
    assert [r.job for r in report.ran][0] == "vectors"
    for job in ("hygiene", "decay", "retention"):  # (backup and vacuum: the CLI test's SQLite file)
        assert (0, 0) in phases[job]  # named as it starts (no count to tell)
    _rising_to_the_total(phases["vectors"])
    assert phases["vectors"][-1] == (stored, stored)
    _rising_to_the_total(phases["consolidate: comparing"])
    assert phases["consolidate: comparing"][-1] == (stored, stored)
    assert len(phases["consolidate: comparing"]) > 2  # told per block of rows, not only at the end
    _rising_to_the_total(phases["consolidate: merging"])
    _rising_to_the_total(phases["summaries"])


@pytest.fixture
def stderr_is_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rich draws a bar only on a terminal: stderr's console made one (stdout's left as it is)."""
    monkeypatch.setitem(render._consoles, "errors", render._clean_console(stderr=True, force_terminal=True))


def _store(home) -> None:  # noqa: ANN001
    with Engram.from_settings(home=home, embeddings={"provider": "none"}) as engram:
        engram.remember_many([{"content": f"note {i} about the garden"} for i in range(30)])


def test_the_cli_draws_the_pass_on_stderr_and_keeps_stdout(tmp_path, stderr_is_a_terminal):
    _store(tmp_path)
    args = ["--home", str(tmp_path), "maintain", "--force", "-j", "consolidate"]
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    # (a short pass is drawn as it ends: its last phase and count)
    assert "consolidate: comparing" in result.stderr and "30/30" in result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "maintaining the whole store: every agent and global"
    assert lines[-1] == "consolidate: removed 0"
    assert "comparing" not in result.stdout and "━" not in result.stdout

    as_json = CliRunner().invoke(app, ["--json", *args], catch_exceptions=False)
    assert as_json.exit_code == 0, as_json.output
    assert [r["job"] for r in json.loads(as_json.stdout)["ran"]] == ["consolidate"]
    assert "comparing" not in as_json.stderr  # --json: no bar at all


def test_only_names_its_jobs_as_a_collection_and_one_name_alone_is_refused_naming_only(tmp_path):
    """``run(only="hygiene")`` was read letter by letter and refused as ``job: unknown job "h"``, a
    mistake nobody made: a name alone (or a number) is refused naming ``only`` and what it takes;
    a list, tuple or set of names runs those jobs, in the pass's order."""
    with Engram.from_settings(home=tmp_path, embeddings={"provider": "none"}) as engram:
        engram.remember("the user likes green tea")
        maintenance = Maintenance(engram, LifecycleSettings())
        for bad, shown in (("hygiene", '"hygiene" (str)'), (5, "5 (int)")):
            with pytest.raises(ValidationError) as err:
                maintenance.run(only=bad, force=True)  # type: ignore[arg-type]
            assert err.value.field == "only" and shown in str(err.value) and ", ".join(JOBS) in str(err.value)
        for only in (["decay", "hygiene"], ("hygiene", "decay"), {"decay", "hygiene"}):
            assert [r.job for r in maintenance.run(only=only, force=True).ran] == ["hygiene", "decay"]
