"""An import keeps the source's times, and retention, hygiene and decay measure age from them: a
year of memories brought from mem0 is past the default retention at once, and the next daily run
(``engram serve`` runs due jobs at start) deleted it silently. Every import door now warns, counting
the imported memories the next run would delete and naming the setting that keeps them; through the
CLI against a real SQLite file, as a user runs it."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from tests.cli_in_process import cli_output

OLD = [{"id": "a1", "memory": "User likes green tea", "user_id": "alice",
        "created_at": "2025-01-01T00:00:00Z", "updated_at": "2025-02-01T00:00:00Z"},
       {"id": "a2", "memory": "User walks to work", "user_id": "alice",
        "created_at": "2025-01-01T00:00:00Z", "updated_at": "2025-02-01T00:00:00Z"}]
KEEP = {"ENGRAM_LIFECYCLE__RETENTION__AGENT_DAYS": "unlimited", "ENGRAM_LIFECYCLE__HYGIENE__KNOWLEDGE_MAX_IDLE_DAYS": "0"}


def _import(home: Path, path: Path, *agent: str, env: dict[str, str] | None = None) -> dict:
    return json.loads(cli_output(home, "--json", *agent, "import", str(path), env=env))


def test_mem0_import_names_what_the_next_run_deletes_and_the_settings_keep_it(tmp_path: Path) -> None:
    source = tmp_path / "m.json"
    source.write_text(json.dumps(OLD))
    home = tmp_path / "home"
    warnings = _import(home, source)["warnings"]
    retention = [w for w in warnings if "retention" in w]
    hygiene = [w for w in warnings if "hygiene" in w]
    assert len(retention) == 1 and retention[0].startswith("2 imported memories in agent scope would be deleted"), warnings
    assert "lifecycle.retention.agent_days" in retention[0] and "90 days" in retention[0]
    assert len(hygiene) == 1 and "lifecycle.hygiene.knowledge_max_idle_days" in hygiene[0], warnings
    # What it warns of is what the run does: retention deletes both.
    assert "retention: removed 2" in cli_output(home, "maintain", "--job", "retention", "--force")
    assert json.loads(cli_output(home, "--json", "-a", "alice", "list")) == []

    # With the settings it names, the same import warns of nothing and the run keeps them, times as the source gave.
    kept = tmp_path / "kept"
    assert _import(kept, source, env=KEEP)["warnings"] == []
    for job in ("retention", "hygiene", "decay"):
        assert f"{job}: removed 0" in cli_output(kept, "maintain", "--job", job, "--force", env=KEEP)
    listed = json.loads(cli_output(kept, "--json", "-a", "alice", "list"))
    assert len(listed) == 2 and {m["created_at"] for m in listed} == {1735689600.0}, listed


def test_recent_memories_import_without_a_warning(tmp_path: Path) -> None:
    source = tmp_path / "m.json"
    source.write_text(json.dumps([{k: v for k, v in m.items() if not k.endswith("_at")} for m in OLD]))
    assert _import(tmp_path / "home", source)["warnings"] == []


def test_snapshot_import_warns_and_keeps_the_times_exactly(tmp_path: Path) -> None:
    source = tmp_path / "m.json"
    source.write_text(json.dumps(OLD))
    first = tmp_path / "first"
    _import(first, source, env=KEEP)
    snapshot = tmp_path / "s.json"
    cli_output(first, "-a", "alice", "export", str(snapshot))
    second = tmp_path / "second"
    warnings = _import(second, snapshot, "-a", "bob")["warnings"]
    assert any(w.startswith("2 imported memories in agent scope") and "lifecycle.retention.agent_days" in w
               for w in warnings), warnings
    # A second import skips both: nothing new, nothing to warn of.
    assert _import(second, snapshot, "-a", "bob")["warnings"] == []
    exported = {m["key"]: (m["created_at"], m["updated_at"]) for m in json.loads(snapshot.read_text())["memories"]}
    again = tmp_path / "again.json"
    cli_output(second, "-a", "bob", "export", str(again))
    assert {m["key"]: (m["created_at"], m["updated_at"]) for m in json.loads(again.read_text())["memories"]} == exported


def test_the_mem0_facades_import_logs_the_warning(isolated_home: Path, caplog: pytest.LogCaptureFixture) -> None:
    from engram.compat.mem0 import Memory

    mem = Memory()
    try:
        with caplog.at_level(logging.WARNING, logger="engram.compat.mem0"):
            assert mem.import_mem0(json.dumps(OLD)) == {"imported": 2, "skipped": 0, "forgotten": 0}
        assert any(r.getMessage().startswith("mem0 import: 2 imported memories in agent scope would be deleted")
                   and "lifecycle.retention.agent_days" in r.getMessage() for r in caplog.records), caplog.records
    finally:
        mem.close()


def test_hygiene_and_decay_are_named_for_what_they_would_delete(tmp_path: Path) -> None:
    # A snapshot's global memories (no retention by default): a conversation one past hygiene's 7 days,
    # and a knowledge one of low importance created over 30 days ago, which decay removes (and hygiene, idle).
    old = {"created_at": 1735689600.0, "updated_at": 1735689600.0, "scope": "global"}
    source = tmp_path / "s.json"
    source.write_text(json.dumps({"format": "engram-snapshot", "version": 1, "memories": [
        {"key": "chat", "content": "We talked about tea", "category": "conversation", **old},
        {"key": "faint", "content": "A faint fact", "importance": 0.1, **old}]}))
    home = tmp_path / "home"
    warnings = _import(home, source)["warnings"]
    assert [w.split(":")[0] for w in warnings] == [
        "1 imported conversation memory would be deleted by the next hygiene run",
        "1 imported knowledge memory would be deleted by the next hygiene run (each survives with chance 0.05)",
        "1 imported memory would be deleted by the next decay run"], warnings
    assert "lifecycle.hygiene.max_age_s" in warnings[0] and "lifecycle.decay.enabled" in warnings[2]
    assert "decay: removed 1" in cli_output(home, "maintain", "--job", "decay", "--force")
