"""``engram migrate`` with ``per_agent_databases``: every agent's SQLite file and the shared one go
into one PostgreSQL database, one after another, each verified against its own rows; audit
trails numbered from 1 in each file do not land on one another; a memory two files hold
differently is reported, never overwritten."""

from __future__ import annotations

import dataclasses
import json
import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from engram.audit import AuditQuery, PostgresAuditLog
from engram.auth import PostgresTokenStore
from engram.config import Settings, load_settings
from engram.db.postgres import PgDatabase
from engram.engine import Engram
from engram.history.postgres import PostgresHistoryStore
from engram.model import Memory, Message, Role, Scope
from engram.root import migrate_to_postgres, open_history, open_tokens
from engram.store.postgres import PostgresMemoryStore
from engram.store.sqlite import SqliteMemoryStore

ENGRAM = [sys.executable, "-c", "from engram.interfaces.cli.app import main; main()"]


def _per_agent(home: Path, agent: str) -> Settings:
    return load_settings(home=home, agent=agent, per_agent_databases=True, files={"enabled": False})


def _home(tmp_path: Path) -> tuple[Path, str]:
    """A home used first with one shared file, then with per-agent databases: what each holds."""
    home = tmp_path / "home"
    shared = load_settings(home=home, agent="alice", files={"enabled": False})
    engram = Engram.from_settings(shared)
    try:
        engram.remember("alice's old laptop runs Python 3.11", key="laptop")
        history = open_history(shared, "alice")
        history.append("web:0", "user", "a chat from before the switch")
        history.close()
    finally:
        engram.close()
    for agent in ("alice", "bob"):
        settings = _per_agent(home, agent)
        engram = Engram.from_settings(settings)
        try:
            engram.remember(f"{agent} drinks tea", key="drink")  # one key, two scopes
            engram.remember(f"{agent} deploys on fridays", key="deploy")
            history = open_history(settings, agent)
            history.append("web:1", "user", f"hello from {agent}")  # one conversation key, two agents
            history.close()
        finally:
            engram.close()
    tokens = open_tokens(_per_agent(home, "alice"))  # home/auth.db with per-agent databases
    token, _ = tokens.create("bob", "laptop")
    tokens.close()
    return home, token


def _run(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ENGRAM_HOME": str(home), "ENGRAM_PER_AGENT_DATABASES": "true",
           "ENGRAM_FILES__ENABLED": "false", "COLUMNS": "200"}
    return subprocess.run([*ENGRAM, *args], env=env, capture_output=True, text=True, timeout=600)


def test_migrate_copies_every_agents_database_and_the_shared_files_into_one_database(pg_url: str, tmp_path: Path) -> None:
    home, token = _home(tmp_path)
    run = _run(home, "--json", "-a", "alice", "migrate", "--to", pg_url)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    files = [Path(f["source"]).relative_to(home).as_posix() for f in report["files"]]
    assert files == ["agents/alice/memory.db", "agents/bob/memory.db", "memory.db", "auth.db"]
    assert report["verified"] is True and all(f["verified"] for f in report["files"])
    by_file = {Path(f["source"]).relative_to(home).as_posix(): f for f in report["files"]}
    # Each file verified against its own rows, not the table's.
    assert by_file["agents/bob/memory.db"]["tables"]["memories"]["target"] == 2
    assert by_file["memory.db"]["tables"]["history_messages"]["target"] == 1
    audit = [by_file[f]["tables"]["audit_log"]["source"] for f in ("agents/alice/memory.db", "agents/bob/memory.db",
                                                                    "memory.db")]
    assert by_file["agents/bob/memory.db"]["audit_offset"] == audit[0]  # numbered after alice's
    assert by_file["auth.db"]["tables"]["api_tokens"]["copied"] == 1

    db = PgDatabase.connect(pg_url)
    try:
        store = PostgresMemoryStore(db)
        for agent in ("alice", "bob"):
            mine = {m.key: m.content for m in Engram(store, agent=agent).list()}
            wanted = {"drink": f"{agent} drinks tea", "deploy": f"{agent} deploys on fridays"}
            if agent == "alice":
                wanted["laptop"] = "alice's old laptop runs Python 3.11"
            assert mine == wanted  # each agent's memories keep their scope
        history = PostgresHistoryStore(db, owns_db=False)
        alice, bob = history.for_agent("alice"), history.for_agent("bob")
        assert [m.content for m in alice.get_all("web:0")] == ["a chat from before the switch"]
        assert [m.content for m in alice.get_all("web:1")] == ["hello from alice"]
        assert [m.content for m in bob.get_all("web:1")] == ["hello from bob"]
        assert bob.get_all("web:0") == []
        trail = PostgresAuditLog(db).query(AuditQuery(limit=100))
        assert len(trail) == sum(audit) and len({entry.seq for entry in trail}) == sum(audit)
    finally:
        db.close()

    again = _run(home, "--json", "migrate", "--to", pg_url)  # run again (to resume): nothing copied, all verified
    assert again.returncode == 0, again.stderr
    rerun = json.loads(again.stdout)
    assert rerun["verified"] and all(t["copied"] == 0 for f in rerun["files"] for t in f["tables"].values())
    db = PgDatabase.connect(pg_url)
    try:
        assert PostgresTokenStore(db).verify(token).agent == "bob"  # issued on SQLite, works on PostgreSQL
    finally:
        db.close()


def test_files_migrated_one_at_a_time_each_verify_into_a_database_holding_the_others(pg_url: str, tmp_path: Path) -> None:
    home, _ = _home(tmp_path)
    settings = _per_agent(home, "alice")
    for path in (home / "agents" / "alice" / "memory.db", home / "agents" / "bob" / "memory.db", home / "memory.db"):
        report = migrate_to_postgres(settings, path, pg_url)
        assert report.verified, (path, {n: t for n, t in report.tables.items() if not t.verified})
        assert report.tables["memories"].copied == report.tables["memories"].source
    run = _run(home, "--json", "migrate", "--from", str(home / "agents" / "bob" / "memory.db"), "--to", pg_url)
    assert run.returncode == 0, run.stderr
    again = json.loads(run.stdout)  # verified before: not read into the target again
    assert again["already_copied"] and again["verified"] and again["tables"] == {}


def _run_shared(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI as it ran before per_agent_databases was switched on (the docs' way over: export)."""
    env = {**os.environ, "ENGRAM_HOME": str(home), "ENGRAM_PER_AGENT_DATABASES": "false",
           "ENGRAM_FILES__ENABLED": "false", "COLUMNS": "200"}
    return subprocess.run([*ENGRAM, *args], env=env, capture_output=True, text=True, timeout=600)


def test_a_memory_brought_over_and_changed_since_keeps_the_agents_copy_and_the_old_content(
        pg_url: str, tmp_path: Path) -> None:
    home, _ = _home(tmp_path)
    moved = tmp_path / "alice.json"
    for run in (_run_shared(home, "-a", "alice", "export", str(moved)), _run(home, "-a", "alice", "import", str(moved))):
        assert run.returncode == 0, run.stderr
    old = "alice's old laptop runs Python 3.11"
    engram = Engram.from_settings(_per_agent(home, "alice"))
    try:
        memory_id = engram.get("laptop").id
        engram.remember("alice's laptop runs Python 3.12 now", key="laptop")  # changed in her own file since
        engram.recall("laptop python")  # and strengthened by a recall
    finally:
        engram.close()

    run = _run(home, "--json", "migrate", "--to", pg_url)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["verified"] is True
    shared = next(f for f in report["files"] if Path(f["source"]) == home / "memory.db")
    assert shared["verified"] and shared["refused"] is None
    assert shared["resolved"] == [f"memory {memory_id} (key 'laptop', agent 'alice'): kept the copy in {report['target']}"
                                  " (newer); this file's content kept as a version"]
    # Verified on what it copied: the shared file's copy of the memory is left out and counted as kept there.
    assert shared["tables"]["memories"] == {**shared["tables"]["memories"], "source": 0, "target": 0, "resolved": 1}
    # ... and only there: not also "already there" (skipped), which counts rows the target held as the file does.
    assert (shared["tables"]["memories"]["copied"], shared["tables"]["memories"]["skipped"]) == (0, 0)
    assert (shared["tables"]["memory_vectors"]["skipped"], shared["tables"]["memory_vectors"]["resolved"]) == (0, 1)
    db = PgDatabase.connect(pg_url)
    try:
        alice = Engram(PostgresMemoryStore(db), agent="alice")
        assert alice.get("laptop").content == "alice's laptop runs Python 3.12 now"
        assert alice.get("laptop").recall_count >= 1
        assert [v.content for v in alice.versions(memory_id)] == [old]  # the older content is not lost
    finally:
        db.close()
    again = _run(home, "--json", "migrate", "--to", pg_url)  # resumable: the same decision, nothing copied twice
    assert again.returncode == 0, again.stderr
    rerun = json.loads(again.stdout)
    assert rerun["verified"] and all(t["copied"] == 0 for f in rerun["files"] for t in f["tables"].values())
    db = PgDatabase.connect(pg_url)
    try:
        assert [v.content for v in Engram(PostgresMemoryStore(db), agent="alice").versions(memory_id)] == [old]
    finally:
        db.close()


def _two_copies(home: Path, in_agents_file: Memory, in_shared_file: Memory) -> None:
    for path, memory in ((home / "agents" / "alice" / "memory.db", in_agents_file), (home / "memory.db", in_shared_file)):
        store = SqliteMemoryStore(path)
        store.import_memories([memory])
        store.close()


def test_a_newer_copy_in_the_shared_file_replaces_the_agents_and_keeps_its_content_as_a_version(
        pg_url: str, tmp_path: Path) -> None:
    home, _ = _home(tmp_path)
    brought = Memory(id="m-shared", key="wifi", content="the wifi password is hunter2", scope=Scope("alice"),
                     created_at=1.7e9, updated_at=1.7e9, recall_count=4, last_accessed=1.85e9,  # recalled in her file
                     importance=0.9)
    _two_copies(home, brought, dataclasses.replace(brought, content="the wifi password is swordfish", updated_at=1.8e9,
                                                   recall_count=1, last_accessed=1.81e9, importance=0.3))

    run = _run(home, "--json", "migrate", "--to", pg_url)
    assert run.returncode == 0, run.stdout + run.stderr
    shared = next(f for f in json.loads(run.stdout)["files"] if Path(f["source"]) == home / "memory.db")
    assert shared["verified"] and shared["tables"]["memories"]["target"] == 2  # laptop and wifi, verified as they landed
    assert shared["resolved"][0].startswith("memory m-shared (key 'wifi', agent 'alice'): this file's copy replaced the one in")
    db = PgDatabase.connect(pg_url)
    try:
        alice = Engram(PostgresMemoryStore(db), agent="alice")
        assert alice.get("wifi").content == "the wifi password is swordfish"
        # The recalls made of the copy it replaced are not lost: the larger count, the later access;
        # the importance is the edited (newer) copy's, as the edit may have set it.
        wifi = alice.get("wifi")
        assert (wifi.recall_count, wifi.last_accessed, wifi.importance) == (4, 1.85e9, 0.3)
        assert [(v.content, v.replaced_at) for v in alice.versions("m-shared")] == [("the wifi password is hunter2", 1.8e9)]
    finally:
        db.close()


@pytest.mark.parametrize("newer_in", ["shared file", "agent's file"])
def test_two_copies_of_one_memory_land_with_the_earlier_arrival(pg_url: str, tmp_path: Path, newer_in: str) -> None:
    # Whichever copy is kept (the newer edit), the home held the memory since the first arrival:
    # the later arrival would give retention and hygiene a younger memory than it is.
    home, _ = _home(tmp_path)
    older = Memory(id="m-shared", key="wifi", content="the wifi password is hunter2", scope=Scope("alice"),
                   created_at=1.7e9, updated_at=1.7e9, received_at=1.71e9)
    newer = dataclasses.replace(older, content="the wifi password is swordfish", updated_at=1.8e9, received_at=1.79e9)
    # The agent's file lands first: its copy is replaced by the shared file's newer one, or kept over its older one.
    in_agents_file, in_shared_file = (older, newer) if newer_in == "shared file" else (newer, older)
    if newer_in == "agent's file":  # the newer copy arrived first there, the older one later in the shared file
        in_agents_file = dataclasses.replace(in_agents_file, received_at=1.71e9)
        in_shared_file = dataclasses.replace(in_shared_file, received_at=1.79e9)
    _two_copies(home, in_agents_file, in_shared_file)

    run = _run(home, "--json", "migrate", "--to", pg_url)
    assert run.returncode == 0, run.stdout + run.stderr
    shared = next(f for f in json.loads(run.stdout)["files"] if Path(f["source"]) == home / "memory.db")
    assert shared["verified"] and len(shared["resolved"]) == 1, shared
    db = PgDatabase.connect(pg_url)
    try:
        wifi = Engram(PostgresMemoryStore(db), agent="alice").get("wifi")
        assert (wifi.content, wifi.received_at) == ("the wifi password is swordfish", 1.71e9)
    finally:
        db.close()


def test_the_same_memory_id_in_another_scope_still_refuses_the_file(pg_url: str, tmp_path: Path) -> None:
    home, _ = _home(tmp_path)
    brought = Memory(id="m-shared", key="wifi", content="the wifi password is hunter2", scope=Scope("alice"),
                     created_at=1.7e9, updated_at=1.7e9)
    _two_copies(home, brought, dataclasses.replace(brought, scope=Scope("bob"), updated_at=1.8e9))

    run = _run(home, "migrate", "--to", pg_url)
    assert run.returncode != 0
    said = " ".join((run.stdout + run.stderr).split())
    assert "memory m-shared is agent 'alice''s (key 'wifi') there, agent 'bob''s (key 'wifi') here" in said
    assert f"{home / 'memory.db'}: to:" in said  # named with its file
    assert "resolve each (a memory: forget or re-key it on one side, `engram export`/`import` to merge) and run again" in said
    db = PgDatabase.connect(pg_url)
    try:
        alice = Engram(PostgresMemoryStore(db), agent="alice")
        assert alice.get("wifi").content == "the wifi password is hunter2"  # the first copy stands
        assert "laptop" not in {m.key for m in alice.list()}  # nothing of the refused file was copied
        assert Engram(PostgresMemoryStore(db), agent="bob").get("drink").content == "bob drinks tea"
    finally:
        db.close()


def test_a_conversation_in_the_shared_file_and_the_agents_reads_in_time_order_after_migrate(
        pg_url: str, tmp_path: Path) -> None:
    home, _ = _home(tmp_path)  # alice's web:1 in her own file: "hello from alice", numbered from 1
    shared = load_settings(home=home, agent="alice", files={"enabled": False})
    history = open_history(shared, "alice")  # the same conversation, written before the switch
    history.append("web:1", "user", "before the switch")
    history.append("web:1", "assistant", "noted, before the switch")
    history.set_summary("web:1", "older talk about laptops")
    history.close()
    history = open_history(_per_agent(home, "alice"), "alice")
    history.set_summary("web:1", "newer talk about tea")
    history.close()
    # The shared file's messages are older than the agent's own (written after the switch).
    with closing(sqlite3.connect(home / "memory.db")) as conn, conn:
        conn.execute("UPDATE history_messages SET created_at = created_at - 1000 WHERE conversation = 'web:1:'")

    run = _run(home, "--json", "migrate", "--to", pg_url)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["verified"] is True
    by_file = {Path(f["source"]).relative_to(home).as_posix(): f for f in report["files"]}
    assert by_file["memory.db"]["resolved"] == [
        "conversation 'web:1:' of agent 'alice': this file's 2 older messages placed before the ones there (time order)",
        "conversation 'web:1:' of agent 'alice': this file's summary joined before the one there"]
    assert by_file["memory.db"]["tables"]["history_messages"] == {
        **by_file["memory.db"]["tables"]["history_messages"], "source": 3, "copied": 3, "target": 3}
    again = _run(home, "--json", "migrate", "--to", pg_url)  # resumed: the same numbering, nothing copied twice
    assert again.returncode == 0, again.stderr
    rerun = json.loads(again.stdout)
    assert rerun["verified"] and all(t["copied"] == 0 for f in rerun["files"] for t in f["tables"].values())
    db = PgDatabase.connect(pg_url)
    try:
        alice = PostgresHistoryStore(db, owns_db=False).for_agent("alice")
        wanted = ["before the switch", "noted, before the switch", "hello from alice"]
        assert [m.content for m in alice.get_all("web:1")] == wanted
        assert alice.get_summary("web:1") == "older talk about laptops\n\nnewer talk about tea"
        alice.append("web:1", Message(Role.USER, "after the migration"))  # appended after, undone from the end
        assert [m.content for m in alice.get_recent("web:1", 2)] == ["hello from alice", "after the migration"]
        assert alice.pop_newest("web:1").content == "after the migration"
        assert alice.discard("web:1", 0, 1) == 1  # compaction removes the oldest first
        assert [m.content for m in alice.get_all("web:1")] == wanted[1:]
    finally:
        db.close()


def test_a_conversation_whose_messages_interleave_in_time_is_merged_in_time_order(pg_url: str, tmp_path: Path) -> None:
    home, _ = _home(tmp_path)
    history = open_history(load_settings(home=home, agent="alice", files={"enabled": False}), "alice")
    history.append("web:1", "user", "written in the shared file after the agent's own began")
    history.close()

    run = _run(home, "--json", "migrate", "--to", pg_url)
    assert run.returncode == 0, run.stderr + run.stdout
    shared = next(f for f in json.loads(run.stdout)["files"] if f["source"].endswith(f"home{os.sep}memory.db"))
    assert shared["verified"] and shared["resolved"] == [
        f"conversation 'web:1:' of agent 'alice': this file's 1 message not in {shared['target']} merged in time"
        " order with its 1 (0 of those renumbered after them)"]
    db = PgDatabase.connect(pg_url)
    try:
        alice = PostgresHistoryStore(db, owns_db=False).for_agent("alice")
        assert [m.content for m in alice.get_all("web:1")] == [
            "hello from alice", "written in the shared file after the agent's own began"]
        assert [m.content for m in alice.get_all("web:0")] == ["a chat from before the switch"]
    finally:
        db.close()


def test_a_snapshot_entry_given_another_agents_id_migrates_with_every_file(pg_url: str, tmp_path: Path) -> None:
    """alice imports a snapshot entry of her own scope whose id bob's database holds: it gets an id
    of its own (``engram.snapshot.load_into``), so ``engram migrate`` copies both agents' files into
    the one table. Before, alice's file kept bob's id and bob's file was refused as a clash."""
    home = tmp_path / "home"
    with Engram.from_settings(_per_agent(home, "bob")) as bob:
        taken = bob.remember("bob deploys on fridays").memory.id
    snapshot = tmp_path / "alice.json"
    snapshot.write_text(json.dumps({"format": "engram-snapshot", "version": 1, "memories": [
        {"id": taken, "scope": "agent:alice", "content": "alice waters the plants on sundays"}]}))
    imported = _run(home, "-a", "alice", "import", str(snapshot))
    assert imported.returncode == 0, imported.stderr
    run = _run(home, "--json", "-a", "alice", "migrate", "--to", pg_url)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert [f["refused"] for f in report["files"]] == [None, None]
    assert report["verified"] is True and all(f["verified"] for f in report["files"])
    db = PgDatabase.connect(pg_url)
    try:
        rows = sorted((m.scope.agent, m.content, m.id == taken) for m in PostgresMemoryStore(db).iter_all())
    finally:
        db.close()
    assert rows == [("alice", "alice waters the plants on sundays", False), ("bob", "bob deploys on fridays", True)]
