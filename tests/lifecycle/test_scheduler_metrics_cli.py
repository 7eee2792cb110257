"""`engram maintain` scheduling (due jobs once, idempotent, last runs stored), metrics, and the CLI."""

from __future__ import annotations

import json
import random

import pytest
from typer.testing import CliRunner

from engram.config import load_settings
from engram.engine import Engram
from engram.errors import ValidationError
from engram.interfaces.cli.app import app
from engram.lifecycle.scheduler import JOBS, Maintenance
from engram.lifecycle.settings import LifecycleSettings
from engram.metrics import Metrics
from engram.root import maintenance_for
from tests.lifecycle.conftest import remember_at

DAY = 86400.0


def test_due_jobs_run_once_and_again_when_their_interval_passes(make_engram, clock):
    engram = make_engram("inmemory")
    remember_at(engram, clock.t - 8 * DAY, "old chat", key="c", category="conversation")
    maintenance = Maintenance(engram, LifecycleSettings(), rng=random.Random(1))
    first = maintenance.run()
    assert [r.job for r in first.ran] == ["summaries", "hygiene", "decay", "retention", "consolidate"]
    assert first.skipped == {"backup": "not a SQLite store", "vacuum": "not a SQLite store"}
    assert [m.key for m in first.ran[1].removed] == ["c"]
    second = maintenance.run()
    assert second.ran == [] and set(second.skipped.values()) <= {"not due", "not a SQLite store"}
    clock.advance(DAY)
    third = maintenance.run()
    assert [r.job for r in third.ran] == ["summaries", "hygiene", "decay", "retention"]  # consolidate is weekly
    assert maintenance.last_runs()["hygiene"] == clock.t


def test_only_and_force_and_unknown_jobs(make_engram):
    maintenance = Maintenance(make_engram("inmemory"), LifecycleSettings())
    maintenance.run(only=["decay"])
    assert [r.job for r in maintenance.run(only=["decay"], force=True).ran] == ["decay"]
    with pytest.raises(ValidationError) as err:
        maintenance.run(only=["defrag"])
    assert err.value.field == "job"


def test_sqlite_maintenance_backs_up_first_and_persists_state(tmp_path):
    settings = load_settings(home=tmp_path)
    engram = Engram.from_settings(settings)
    engram.remember("a fact", key="f")
    report = maintenance_for(engram, settings).run()
    assert [r.job for r in report.ran] == list(JOBS)
    state = json.loads((tmp_path / "memory.db.maintenance.json").read_text())
    assert set(state["last_run"]) == set(JOBS) and "backup" in state["last_result"]
    engram.close()
    again = Engram.from_settings(settings)
    assert maintenance_for(again, settings).run().ran == []  # last runs were read back
    again.close()
    assert (tmp_path / "backups").is_dir() and any((tmp_path / "backups").iterdir())


def test_metrics_percentiles_and_persistence(tmp_path):
    path = tmp_path / "m.json"
    metrics = Metrics(path, samples=5)
    for ms in (1, 2, 3, 4, 100, 5):
        metrics.record("recall", ms / 1000)
    (summary,) = metrics.summary()
    assert summary.count == 5 and summary.p50_ms == pytest.approx(4.0) and summary.max_ms == pytest.approx(100.0)
    metrics.save()
    reloaded = Metrics(path, samples=5).summary()[0]
    assert reloaded.count == 5 and reloaded.p50_ms == pytest.approx(4.0)


def test_unsaved_metric_samples_stay_at_the_cap_in_a_process_that_never_saves(tmp_path):
    # `engram mcp` runs no maintenance, so nothing saves until it exits: the samples waiting to be
    # saved must not grow with every recall of a weeks-long session. Saving keeps the last ones.
    path = tmp_path / "m.json"
    metrics = Metrics(path, samples=5)
    for i in range(10_000):
        metrics.record("recall", i / 1000)
    assert [len(pending) for pending in metrics._new.values()] == [5]
    metrics.save()
    assert json.loads(path.read_text())["latency_s"]["recall"] == [9.995, 9.996, 9.997, 9.998, 9.999]


def test_recall_and_embedding_latency_recorded(make_engram, embedder):
    engram = make_engram("sqlite", embedder=embedder)
    engram.remember("measure me")
    engram.recall("measure")
    names = {s.name: s.count for s in engram.metrics.summary()}
    assert names["recall"] == 1 and names["embedding"] == 2  # one document, one query


def run_cli(home, *args):  # noqa: ANN001, ANN002, ANN201
    result = CliRunner().invoke(app, ["--home", str(home), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_cli_end_to_end(tmp_path):
    run_cli(tmp_path, "remember", "the user likes green tea", "--key", "tea")
    run_cli(tmp_path, "recall", "tea")
    run_cli(tmp_path, "forget", "tea")
    audit = json.loads(run_cli(tmp_path, "--json", "audit"))
    assert [(a["action"], a["origin"]) for a in audit] == [("forgotten", "cli"), ("recalled", "cli"), ("stored", "cli")]
    assert audit[0]["detail"]["content"] == "the user likes green tea"
    made = json.loads(run_cli(tmp_path, "--json", "backup"))
    listed = json.loads(run_cli(tmp_path, "--json", "backup", "--list"))
    assert made["path"] in [b["path"] for b in listed]
    ran = json.loads(run_cli(tmp_path, "--json", "maintain"))
    assert [r["job"] for r in ran["ran"]] == list(JOBS)
    assert json.loads(run_cli(tmp_path, "--json", "maintain"))["ran"] == []
    stats = json.loads(run_cli(tmp_path, "--json", "stats"))
    assert any(item["name"] == "recall" for item in stats["latency"])
    assert json.loads(run_cli(tmp_path, "--json", "vacuum"))["after_bytes"] > 0
    assert json.loads(run_cli(tmp_path, "--json", "summaries")) == []
    run_cli(tmp_path, "remember", "after the backup", "--key", "later")
    restored = json.loads(run_cli(tmp_path, "--json", "restore", made["path"], "--yes"))
    assert restored["restored"] == made["path"]
    assert json.loads(run_cli(tmp_path, "--json", "count"))["count"] == 0


@pytest.mark.parametrize("kind", ["sqlite", "jsonfile", "inmemory"])
def test_maintenance_heals_memories_left_without_a_vector(make_engram, embedder, kind):
    """A crash between storing a memory and embedding it leaves it without a vector; the next
    maintenance pass (which `engram serve` also runs in the background) embeds it."""
    engram = make_engram(kind, embedder=embedder)
    for text in ("the cat sleeps on the warm windowsill", "tomatoes ripen in late summer", "the bus leaves at nine"):
        engram.remember(text)
    engram.store.clear_vectors()  # as after a crash before the vectors were written
    assert len(engram.store.missing_vectors()) == 3
    report = Maintenance(engram, LifecycleSettings()).run(only=["hygiene"])
    assert engram.store.missing_vectors() == []
    assert any(r.job == "vectors" and "3" in r.line() for r in report.ran)
    hit = engram.recall("cat windowsill", mode="vector").hits[0]  # found by its vector alone
    assert hit.memory.content.startswith("the cat")


def test_summaries_make_says_why_nothing_was_made_today(tmp_path):
    # Only ended periods are summarised: telling a user who just ran --make to run --make was no help.
    run_cli(tmp_path, "remember", "stored today, summarised once the day ends")
    out = " ".join(run_cli(tmp_path, "summaries", "--make", "--period", "daily").split())
    assert "no ended period holds memories" in out
    assert "summaries --make" not in out


def test_a_carried_schedule_keeps_each_jobs_later_run_store_wide_and_per_agent(make_engram, tmp_path):
    from engram.lifecycle.scheduler import carry_schedule

    source, target = tmp_path / "memory.db.maintenance.json", tmp_path / "state" / "postgres-x.maintenance.json"
    assert carry_schedule(source, target) is False and not target.exists()  # nothing to carry
    source.write_text(json.dumps({
        "last_run": {"hygiene": 100.0, "decay": 100.0, "defrag": 5.0}, "last_result": {"hygiene": "hygiene: ok"},
        "agents": {"alice": {"last_run": {"hygiene": 300.0}}, "bob": "not a record"},
    }))
    target.parent.mkdir()
    target.write_text(json.dumps({"last_run": {"decay": 200.0}, "last_result": {"decay": "decay: newer"},
                                  "agents": {"alice": {"last_run": {"hygiene": 250.0, "decay": 250.0}}}}))
    assert carry_schedule(source, target) is True
    assert carry_schedule(source, target) is True  # twice: nothing moves back
    merged = json.loads(target.read_text())
    assert merged["last_run"] == {"hygiene": 100.0, "decay": 200.0}  # an unknown job is not carried
    assert merged["last_result"] == {"hygiene": "hygiene: ok", "decay": "decay: newer"}
    assert merged["agents"] == {"alice": {"last_run": {"hygiene": 300.0, "decay": 250.0}}}
    # The scheduler reads the carried file as its own.
    engram = make_engram("inmemory")
    alice = Maintenance(engram.for_agent("alice"), LifecycleSettings(), state_path=target, agent="alice")
    assert alice.last_runs() == {"hygiene": 300.0, "decay": 250.0}


def test_summaries_run_before_hygiene_so_a_period_keeps_the_conversation_it_expires(make_engram, clock):
    # Hygiene ran first and expired week-old conversation entries before the summary of their day
    # was made: a pass after a few days away summarised nothing of them.
    engram = make_engram("sqlite")
    day = (clock.t // DAY) * DAY - 8 * DAY
    remember_at(engram, day + 60, "we agreed the launch moves to june", category="conversation")
    report = Maintenance(engram, LifecycleSettings(), rng=random.Random(1)).run()
    assert [m.content for r in report.ran if r.job == "hygiene" for m in r.removed] == [
        "we agreed the launch moves to june"]
    (summary,) = [m for m in engram.list() if m.type == "summary" and m.metadata["period_type"] == "daily"]
    assert "launch moves to june" in summary.content and summary.metadata["source_memory_count"] == 1
