"""``engram migrate`` run again after the SQLite file was used since its copy (memories remembered
and forgotten there, each leaving audit entries): the file is copied again, the audit entries
already copied are not copied twice, the new ones are numbered after everything the database's
trail holds (another agent's file copied after this one, entries written on PostgreSQL), the copy
verifies, and a third run skips the file."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from contextlib import closing
from pathlib import Path

from engram.audit import AuditQuery, PostgresAuditLog, SqliteAuditLog
from engram.config import Settings, load_settings
from engram.db.postgres import PgDatabase
from engram.db.sqlite import Database
from engram.engine import Engram
from engram.store.postgres import PostgresMemoryStore
from tests.postgres.test_migrate_per_agent import ENGRAM, _home, _per_agent, _run

_AUDIT = "at, action, origin, reason, actor_scope, memory_id, memory_key, memory_scope, detail"


def _file_trail(path: Path) -> list[tuple[object, ...]]:
    """The file's audit entries, in order, without their numbers."""
    with closing(sqlite3.connect(path)) as conn:
        return [tuple(row) for row in conn.execute(f"SELECT {_AUDIT} FROM audit_log ORDER BY seq")]


def _target_trail(pg_url: str) -> dict[int, tuple[object, ...]]:
    """The database's audit entries by number, in the file's terms (detail as the JSON text it was written as)."""
    db = PgDatabase.connect(pg_url)
    try:
        entries = PostgresAuditLog(db).query(AuditQuery(limit=1000))
    finally:
        db.close()
    return {e.seq: (e.at, e.action, e.origin, e.reason, e.actor_scope, e.memory_id, e.memory_key, e.memory_scope,
                    e.detail) for e in entries}


def _without_detail(rows: list[tuple[object, ...]]) -> list[tuple[object, ...]]:
    return [row[:-1] for row in rows]


def _use_sqlite(settings: Settings) -> None:
    """What a user who kept using SQLite after the copy does: remember two memories, forget one."""
    engram = Engram.from_settings(settings)
    try:
        engram.remember(f"{settings.agent} writes Rust now", key="lang")
        engram.remember(f"{settings.agent} has a cat", key="pet")
        assert [m.key for m in engram.forget("pet")] == ["pet"]
    finally:
        engram.close()


def _run_single(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI in a home of one shared file (``per_agent_databases`` off)."""
    env = {**os.environ, "ENGRAM_HOME": str(home), "ENGRAM_FILES__ENABLED": "false", "COLUMNS": "200"}
    env.pop("ENGRAM_PER_AGENT_DATABASES", None)
    return subprocess.run([*ENGRAM, *args], env=env, capture_output=True, text=True, timeout=600)


def _single_file_copied(home: Path, pg_url: str) -> tuple[Settings, Settings]:
    """A home of one shared file where alice remembered what she drinks and when she deploys,
    copied once into PostgreSQL: alice's settings on the file and on the database."""
    on_sqlite = load_settings(home=home, agent="alice", files={"enabled": False})
    with Engram.from_settings(on_sqlite) as engram:
        engram.remember("alice drinks green tea", key="drink")
        engram.remember("alice deploys on fridays", key="deploy")
    copied = _run_single(home, "migrate", "--to", pg_url)
    assert copied.returncode == 0, copied.stderr
    return on_sqlite, load_settings(home=home / "on-postgres", agent="alice", database_url=pg_url, files={"enabled": False})


def _keys(pg_url: str, agent: str) -> list[str]:
    db = PgDatabase.connect(pg_url)
    try:
        return sorted(m.key for m in Engram(PostgresMemoryStore(db), agent=agent).list())
    finally:
        db.close()


def _assert_trail_copied_once(pg_url: str, before: dict[int, tuple[object, ...]], file_rows: list[tuple[object, ...]],
                              new: int) -> None:
    """Every entry of the file is in the database's trail exactly once, the ``new`` ones (the file's
    last) numbered after every entry the trail held before this run, which are all unchanged."""
    after = _target_trail(pg_url)
    assert {seq: after[seq] for seq in before} == before  # nothing there renumbered or rewritten
    held = _without_detail(list(after.values()))
    for row in _without_detail(file_rows):
        assert held.count(row) == 1, row
    added = sorted(set(after) - set(before))
    assert len(added) == new
    assert min(added) > max(before)
    assert _without_detail([after[seq] for seq in added]) == _without_detail(file_rows[-new:])


def test_an_agents_file_used_since_its_copy_is_copied_again_its_new_audit_entries_after_the_others(
        pg_url: str, tmp_path: Path) -> None:
    home, _ = _home(tmp_path)
    first = _run(home, "--json", "migrate", "--to", pg_url)  # alice's file, then bob's: bob's entries follow alice's
    assert first.returncode == 0, first.stderr
    alice_file = home / "agents" / "alice" / "memory.db"
    copied = len(_file_trail(alice_file))
    _use_sqlite(_per_agent(home, "alice"))
    before = _target_trail(pg_url)
    trail = _file_trail(alice_file)
    assert len(trail) == copied + 3  # stored, stored, forgotten

    again = _run(home, "--json", "migrate", "--to", pg_url)
    assert again.returncode == 0, again.stderr + again.stdout
    files = {Path(f["source"]).relative_to(home).as_posix(): f for f in json.loads(again.stdout)["files"]}
    alice = files["agents/alice/memory.db"]
    assert alice["verified"] and alice["changed_since"] and alice["already_copied"] is None
    assert alice["tables"]["audit_log"]["copied"] == 3 and alice["tables"]["audit_log"]["skipped"] == copied
    assert alice["audit_offset"] == max(before) - copied  # the new entries follow bob's, the last there
    assert alice["tables"]["memories"]["copied"] == 1  # "lang"; "pet" was forgotten before the copy
    assert all(files[name]["already_copied"] for name in ("agents/bob/memory.db", "memory.db", "auth.db"))
    _assert_trail_copied_once(pg_url, before, trail, 3)
    assert _keys(pg_url, "alice") == ["deploy", "drink", "lang", "laptop"]

    third = _run(home, "--json", "migrate", "--to", pg_url)
    assert third.returncode == 0, third.stderr
    assert all(f["already_copied"] for f in json.loads(third.stdout)["files"])
    assert len(_target_trail(pg_url)) == len(before) + 3


def test_a_single_file_used_on_both_sides_since_its_copy_is_copied_again_without_clashing_audit_numbers(
        pg_url: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    on_sqlite, on_postgres = _single_file_copied(home, pg_url)
    engram = Engram.from_settings(on_postgres)
    try:
        assert [m.key for m in engram.forget("deploy")] == ["deploy"]  # an audit entry numbered right after the file's
    finally:
        engram.close()
    _use_sqlite(on_sqlite)
    before = _target_trail(pg_url)
    trail = _file_trail(home / "memory.db")

    again = _run_single(home, "--json", "migrate", "--to", pg_url)
    assert again.returncode == 0, again.stderr + again.stdout
    report = json.loads(again.stdout)
    assert report["verified"] and report["changed_since"] and report["tables"]["audit_log"]["copied"] == 3
    _assert_trail_copied_once(pg_url, before, trail, 3)
    # As the report warns: "deploy", forgotten on PostgreSQL, came back with the file's copy of it.
    assert _keys(pg_url, "alice") == ["deploy", "drink", "lang"]

    third = _run_single(home, "--json", "migrate", "--to", pg_url)
    assert third.returncode == 0, third.stderr
    assert json.loads(third.stdout)["already_copied"]
    assert len(_target_trail(pg_url)) == len(before) + 3


def test_a_file_whose_oldest_recall_entries_were_pruned_since_its_copy_keeps_the_numbering_of_its_copy(
        pg_url: str, tmp_path: Path) -> None:
    """The oldest recall entries are pruned (``lifecycle.audit_max_reads``): the file's first entry,
    a recall, gone by the second run, does not make its copied entries look new (copied twice)."""
    home = tmp_path / "home"
    on_sqlite = load_settings(home=home, agent="alice", files={"enabled": False})
    engram = Engram.from_settings(on_sqlite)
    try:
        engram.recall("what does alice drink")  # the trail's first entry, a read
        engram.remember("alice drinks tea", key="drink")
    finally:
        engram.close()
    assert _run_single(home, "migrate", "--to", pg_url).returncode == 0
    on_postgres = load_settings(home=home / "on-postgres", agent="alice", database_url=pg_url, files={"enabled": False})
    engram = Engram.from_settings(on_postgres)
    try:
        engram.remember("alice deploys on fridays", key="deploy")  # numbered right after the file's entries there
    finally:
        engram.close()
    engram = Engram.from_settings(on_sqlite)
    try:
        engram.recall("what does alice deploy")
        engram.remember("alice writes Rust now", key="lang")
    finally:
        engram.close()
    db = Database(home / "memory.db")
    try:
        SqliteAuditLog(db).prune_reads(1)  # as the read trail does past audit_max_reads: the first recall goes
    finally:
        db.close()
    trail = _file_trail(home / "memory.db")
    assert [row[1] for row in trail] == ["stored", "recalled", "stored"]
    before = _target_trail(pg_url)

    again = _run_single(home, "--json", "migrate", "--to", pg_url)
    assert again.returncode == 0, again.stderr + again.stdout
    report = json.loads(again.stdout)
    assert report["verified"] and report["tables"]["audit_log"]["copied"] == 2
    _assert_trail_copied_once(pg_url, before, trail, 2)
    assert len([entry for entry in _target_trail(pg_url).values() if entry[1] == "recalled"]) == 2  # the pruned one stays


def _reads(rows: list[tuple[object, ...]]) -> dict[str, tuple[object, ...]]:
    return {str(row[0]): tuple(row[1:]) for row in rows}


def test_recalls_on_both_sides_since_the_copy_are_kept_the_larger_count_and_the_later_access(
        pg_url: str, tmp_path: Path) -> None:
    """A memory both hold unedited since the copy (the same ``updated_at``: the database's copy is
    kept) keeps what the recalls did to the file's copy (count, last access, strengthened
    importance): not lost, and not counted twice."""
    home = tmp_path / "home"
    on_sqlite, on_postgres = _single_file_copied(home, pg_url)
    engram = Engram.from_settings(on_sqlite)
    try:
        for _ in range(3):
            assert [hit.memory.key for hit in engram.recall("green tea", limit=1)] == ["drink"]
    finally:
        engram.close()
    engram = Engram.from_settings(on_postgres)
    try:
        assert [hit.memory.key for hit in engram.recall("deploys fridays", limit=1)] == ["deploy"]
    finally:
        engram.close()
    query = "SELECT key, recall_count, last_accessed, importance FROM memories"
    with closing(sqlite3.connect(home / "memory.db")) as conn:
        in_file = _reads(conn.execute(query).fetchall())
    db = PgDatabase.connect(pg_url)
    try:
        with db.read() as conn:
            there = _reads(conn.execute(query).fetchall())
    finally:
        db.close()
    assert in_file["drink"][0] == 3 and there["drink"][0] == 0 and in_file["deploy"][0] == 0 and there["deploy"][0] == 1
    assert in_file["drink"][2] > there["drink"][2] and in_file["deploy"][2] < there["deploy"][2]  # strengthened

    again = _run_single(home, "--json", "migrate", "--to", pg_url)
    assert again.returncode == 0, again.stderr + again.stdout
    report = json.loads(again.stdout)
    assert report["verified"] and report["changed_since"]
    kept = f"kept the copy in {report['target']} (as new, and there first)"
    assert sorted(note.split(" (key ", 1)[1] for note in report["resolved"]) == [
        f"'deploy', agent 'alice'): {kept}",  # recalled there only: nothing of the file's to carry
        f"'drink', agent 'alice'): {kept}; what recalls did to this file's copy carried"]
    db = PgDatabase.connect(pg_url)
    try:
        with db.read() as conn:
            assert _reads(conn.execute(query).fetchall()) == {"drink": in_file["drink"], "deploy": there["deploy"]}
    finally:
        db.close()
