"""An import keeps the source's times, and retention, hygiene and decay count age from the later of
those and the memory's arrival in this store: what an import brings from another system arrives now
and is at risk of nothing at the next run (tests/lifecycle/test_imported_arrival.py pins the jobs).
engram's own snapshot carries each memory's arrival in the store it was taken from (a restore is a
move), so a snapshot of memories kept there past this store's limits would be deleted by the next
daily run (``engram serve`` runs due jobs at start): its import warns, counting them and naming the
setting that keeps them. Through the CLI against a real SQLite file, as a user runs it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_in_process import cli_output

OLD = [{"id": "a1", "memory": "User likes green tea", "user_id": "alice",
        "created_at": "2025-01-01T00:00:00Z", "updated_at": "2025-02-01T00:00:00Z"},
       {"id": "a2", "memory": "User walks to work", "user_id": "alice",
        "created_at": "2025-01-01T00:00:00Z", "updated_at": "2025-02-01T00:00:00Z"}]
KEEP = {"ENGRAM_LIFECYCLE__RETENTION__AGENT_DAYS": "unlimited", "ENGRAM_LIFECYCLE__HYGIENE__KNOWLEDGE_MAX_IDLE_DAYS": "0"}
JAN_1_2025 = 1735689600.0


def _import(home: Path, path: Path, *agent: str, env: dict[str, str] | None = None) -> dict:
    return json.loads(cli_output(home, "--json", *agent, "import", str(path), env=env))


def test_a_year_of_mem0_memories_imports_without_a_warning_and_the_next_run_keeps_them(tmp_path: Path) -> None:
    source = tmp_path / "m.json"
    source.write_text(json.dumps(OLD))
    home = tmp_path / "home"
    assert _import(home, source)["warnings"] == []
    for job in ("retention", "hygiene", "decay"):
        assert f"{job}: removed 0" in cli_output(home, "maintain", "--job", job, "--force")
    listed = json.loads(cli_output(home, "--json", "-a", "alice", "list"))
    assert len(listed) == 2 and {m["created_at"] for m in listed} == {JAN_1_2025}, listed  # the source's times


def test_a_snapshot_carrying_old_arrivals_warns_and_the_run_deletes_them(tmp_path: Path) -> None:
    source = tmp_path / "m.json"
    source.write_text(json.dumps(OLD))
    first = tmp_path / "first"
    _import(first, source)
    snapshot = tmp_path / "s.json"
    cli_output(first, "-a", "alice", "export", str(snapshot))
    document = json.loads(snapshot.read_text())
    assert {m["received_at"] > JAN_1_2025 for m in document["memories"]} == {True}  # arrived at the first import
    # As if taken from a store that had kept them since 2025 (its retention unlimited).
    for memory in document["memories"]:
        memory["received_at"] = JAN_1_2025
    snapshot.write_text(json.dumps(document))
    second = tmp_path / "second"
    warnings = _import(second, snapshot, "-a", "bob")["warnings"]
    retention = [w for w in warnings if "retention" in w]
    hygiene = [w for w in warnings if "hygiene" in w]
    assert len(retention) == 1 and retention[0].startswith("2 imported memories in agent scope would be deleted"), warnings
    assert "lifecycle.retention.agent_days" in retention[0] and "90 days" in retention[0]
    assert len(hygiene) == 1 and "lifecycle.hygiene.knowledge_max_idle_days" in hygiene[0], warnings
    # A second import skips both: nothing new, nothing to warn of.
    assert _import(second, snapshot, "-a", "bob")["warnings"] == []
    # What it warns of is what the run does: retention deletes both.
    assert "retention: removed 2" in cli_output(second, "maintain", "--job", "retention", "--force")
    assert json.loads(cli_output(second, "--json", "-a", "bob", "list")) == []

    # With the settings it names, the same import warns of nothing and the run keeps them, times as carried.
    kept = tmp_path / "kept"
    assert _import(kept, snapshot, "-a", "bob", env=KEEP)["warnings"] == []
    for job in ("retention", "hygiene", "decay"):
        assert f"{job}: removed 0" in cli_output(kept, "maintain", "--job", job, "--force", env=KEEP)
    again = tmp_path / "again.json"
    cli_output(kept, "-a", "bob", "export", str(again))
    exported = {m["key"]: (m["created_at"], m["updated_at"], m["received_at"]) for m in document["memories"]}
    assert {m["key"]: (m["created_at"], m["updated_at"], m["received_at"])
            for m in json.loads(again.read_text())["memories"]} == exported


def test_hygiene_and_decay_are_named_for_what_they_would_delete(tmp_path: Path) -> None:
    # A snapshot's global memories (no retention by default) that arrived in their store in 2025: a
    # conversation one past hygiene's 7 days, and a knowledge one of low importance there over 30 days,
    # which decay removes (and hygiene, idle). Without the arrival (an older snapshot) they arrive now.
    old = {"created_at": JAN_1_2025, "updated_at": JAN_1_2025, "scope": "global"}
    entries = [{"key": "chat", "content": "We talked about tea", "category": "conversation", **old},
               {"key": "faint", "content": "A faint fact", "importance": 0.1, **old}]
    older = tmp_path / "older.json"
    older.write_text(json.dumps({"format": "engram-snapshot", "version": 1, "memories": entries}))
    assert _import(tmp_path / "fresh", older)["warnings"] == []
    source = tmp_path / "s.json"
    source.write_text(json.dumps({"format": "engram-snapshot", "version": 1,
                                  "memories": [{**e, "received_at": JAN_1_2025} for e in entries]}))
    home = tmp_path / "home"
    warnings = _import(home, source)["warnings"]
    assert [w.split(":")[0] for w in warnings] == [
        "1 imported conversation memory would be deleted by the next hygiene run",
        "1 imported knowledge memory would be deleted by the next hygiene run (each survives with chance 0.05)",
        "1 imported memory would be deleted by the next decay run"], warnings
    assert "lifecycle.hygiene.max_age_s" in warnings[0] and "lifecycle.decay.enabled" in warnings[2]
    assert "decay: removed 1" in cli_output(home, "maintain", "--job", "decay", "--force")
