"""``engram migrate`` with ``per_agent_databases``: every agent's SQLite file and the shared one go
into one PostgreSQL database, one after another, each verified against its own rows; audit
trails numbered from 1 in each file do not land on one another; a memory two files hold
differently is reported, never overwritten."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

from engram.audit import AuditQuery, PostgresAuditLog
from engram.auth import PostgresTokenStore
from engram.config import Settings, load_settings
from engram.db.postgres import PgDatabase
from engram.engine import Engram
from engram.history.postgres import PostgresHistoryStore
from engram.model import Memory, Scope
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
    assert json.loads(run.stdout)["tables"]["memories"] == {
        **json.loads(run.stdout)["tables"]["memories"], "source": 2, "copied": 0, "skipped": 2, "target": 2}


def test_a_memory_two_files_hold_differently_is_reported_and_not_overwritten(pg_url: str, tmp_path: Path) -> None:
    home, _ = _home(tmp_path)
    alice_file = home / "agents" / "alice" / "memory.db"
    store = SqliteMemoryStore(alice_file)
    brought = Memory(id="m-shared", key="wifi", content="the wifi password is hunter2", scope=Scope("alice"),
                     created_at=1.7e9, updated_at=1.7e9)
    store.import_memories([brought])
    store.close()
    store = SqliteMemoryStore(home / "memory.db")  # the same memory, changed in the shared file since
    store.import_memories([dataclasses.replace(brought, content="the wifi password is swordfish")])
    store.close()

    run = _run(home, "migrate", "--to", pg_url)
    assert run.returncode != 0
    said = " ".join((run.stdout + run.stderr).split())
    assert "memory m-shared (key 'wifi', agent 'alice') holds other content there" in said
    assert f"{home / 'memory.db'}: to:" in said  # named with its file
    db = PgDatabase.connect(pg_url)
    try:
        alice = Engram(PostgresMemoryStore(db), agent="alice")
        assert alice.get("wifi").content == "the wifi password is hunter2"  # the first copy stands
        assert "laptop" not in {m.key for m in alice.list()}  # nothing of the refused file was copied
        assert Engram(PostgresMemoryStore(db), agent="bob").get("drink").content == "bob drinks tea"
    finally:
        db.close()
