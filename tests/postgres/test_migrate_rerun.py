"""``engram migrate`` run again once PostgreSQL is in use: a file whose rows are unchanged since its
verified copy is skipped, so a memory forgotten there, a message undone, a conversation deleted do
not come back; a file changed since is copied, the report saying what that may bring back."""

from __future__ import annotations

import json
from pathlib import Path

from engram.config import load_settings
from engram.db.postgres import PgDatabase
from engram.engine import Engram
from engram.history.postgres import PostgresHistoryStore
from engram.root import migrate_to_postgres, open_history
from engram.store.postgres import PostgresMemoryStore
from tests.postgres.test_migrate_per_agent import _home, _per_agent, _run


def _use_postgres(home: Path, pg_url: str) -> None:
    """What an agent does on PostgreSQL after the move: forget a memory, undo a message, delete a conversation."""
    settings = load_settings(home=home / "on-postgres", agent="alice", database_url=pg_url, files={"enabled": False})
    engram = Engram.from_settings(settings)
    try:
        assert [m.key for m in engram.forget("deploy")] == ["deploy"]
        assert engram.history.pop_newest("web:1") is not None  # "hello from alice", undone
        engram.for_agent("bob").history.purge("web:1")
    finally:
        engram.close()


def _held(pg_url: str) -> tuple[dict[str, list[str]], list[str], list[str]]:
    db = PgDatabase.connect(pg_url)
    try:
        store = PostgresMemoryStore(db)
        keys = {agent: sorted(m.key for m in Engram(store, agent=agent).list()) for agent in ("alice", "bob")}
        history = PostgresHistoryStore(db, owns_db=False)
        alice = [m.content for m in history.for_agent("alice").get_all("web:1")]
        bob = [m.content for m in history.for_agent("bob").get_all("web:1")]
        return keys, alice, bob
    finally:
        db.close()


def test_a_rerun_after_postgres_was_used_skips_unchanged_files_and_brings_nothing_back(pg_url: str,
                                                                                         tmp_path: Path) -> None:
    home, _ = _home(tmp_path)
    first = _run(home, "--json", "migrate", "--to", pg_url)
    assert first.returncode == 0, first.stderr
    assert all(f.get("already_copied") is None for f in json.loads(first.stdout)["files"])
    _use_postgres(home, pg_url)
    after_use = _held(pg_url)
    assert after_use == ({"alice": ["drink", "laptop"], "bob": ["deploy", "drink"]}, [], [])

    again = _run(home, "--json", "migrate", "--to", pg_url)  # every file, as after adding an agent
    assert again.returncode == 0, again.stderr
    assert _held(pg_url) == after_use  # nothing forgotten, undone or deleted there came back
    report = json.loads(again.stdout)
    assert report["verified"] is True
    assert len(report["files"]) == 4 and all(f["already_copied"] and f["tables"] == {} for f in report["files"])

    shown = _run(home, "migrate", "--to", pg_url)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.count("unchanged since; nothing copied") == 4, shown.stdout
    assert "already copied on " in shown.stdout

    alice_file = home / "agents" / "alice" / "memory.db"
    one = _run(home, "--json", "migrate", "--to", pg_url, "--from", str(alice_file))
    assert one.returncode == 0, one.stderr
    assert json.loads(one.stdout)["already_copied"]
    report = migrate_to_postgres(_per_agent(home, "alice"), alice_file, pg_url)  # the library's door
    assert report.already_copied and report.verified and report.tables == {}
    assert _held(pg_url) == after_use


def test_a_file_changed_since_its_copy_is_copied_and_the_report_says_what_may_come_back(pg_url: str,
                                                                                        tmp_path: Path) -> None:
    home, _ = _home(tmp_path)
    assert _run(home, "migrate", "--to", pg_url).returncode == 0
    _use_postgres(home, pg_url)
    history = open_history(_per_agent(home, "bob"), "bob")
    history.append("web:1", "user", "bob again, on SQLite")  # written to bob's file after the copy
    history.close()

    again = _run(home, "--json", "migrate", "--to", pg_url)
    assert again.returncode == 0, again.stderr
    files = {Path(f["source"]).relative_to(home).as_posix(): f for f in json.loads(again.stdout)["files"]}
    changed = files["agents/bob/memory.db"]
    assert changed["already_copied"] is None and changed["changed_since"] and changed["verified"]
    assert changed["tables"]["history_messages"]["copied"] == 2
    assert all(files[name]["already_copied"] for name in ("agents/alice/memory.db", "memory.db", "auth.db"))
    keys, alice, bob = _held(pg_url)
    # As the report warned: bob's conversation, deleted on PostgreSQL, came back with the file's new message.
    assert bob == ["hello from bob", "bob again, on SQLite"]
    assert keys["alice"] == ["drink", "laptop"] and alice == []  # alice's file unchanged: still skipped

    shown = _run(home, "migrate", "--to", pg_url)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.count("unchanged since; nothing copied") == 4  # bob's new copy verified and recorded


def test_empty_files_are_each_copied_and_verified_not_taken_for_one_another(pg_url: str, tmp_path: Path) -> None:
    """Two files without rows (agents added, nothing written yet) have one fingerprint: the second
    is not reported as a copy made of the first; each is verified (nothing to copy) on every run."""
    home, _ = _home(tmp_path)
    assert _run(home, "migrate", "--to", pg_url).returncode == 0
    for agent in ("carol", "dave"):
        Engram.from_settings(_per_agent(home, agent)).close()  # creates the agent's file, holding nothing
        assert (home / "agents" / agent / "memory.db").exists()

    for _ in range(2):
        again = _run(home, "--json", "migrate", "--to", pg_url)
        assert again.returncode == 0, again.stderr
        files = {Path(f["source"]).relative_to(home).as_posix(): f for f in json.loads(again.stdout)["files"]}
        for agent in ("carol", "dave"):
            empty = files[f"agents/{agent}/memory.db"]
            assert empty["already_copied"] is None and empty["verified"], empty
            assert empty["tables"] and all(t["source"] == t["target"] == t["copied"] == 0 and t["verified"]
                                           for t in empty["tables"].values()), empty
        assert files["agents/alice/memory.db"]["already_copied"]  # files with rows still skipped when unchanged
