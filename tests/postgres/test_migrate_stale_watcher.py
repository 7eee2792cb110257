"""A watcher still bound to the SQLite store after ``engram migrate`` handed the memory folder's sync
state to PostgreSQL: it used to read the handed-over state as another database's, start afresh, take
hand edits into the old file and record the state against it again, so the first sync on PostgreSQL
set the edited memory in conflict. It now stops, saying why. Real processes: ``engram watch`` and
``engram migrate`` run as the CLI, on a real SQLite file, a real folder and a real PostgreSQL."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engram.config import load_settings
from engram.engine import Engram
from engram.files.sync import FileSync
from engram.root import migrate_to_postgres


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    return {**env, "ENGRAM_HOME": str(home), "ENGRAM_EMBEDDINGS__PROVIDER": "none", "COLUMNS": "300", **extra}


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "engram", *args], capture_output=True, text=True, env=_env(home),
                          timeout=180)


def test_a_watcher_on_the_migrated_sqlite_store_stops_and_leaves_the_handed_over_state(pg_url: str,
                                                                                      tmp_path: Path) -> None:
    home = tmp_path / "home"
    for text in ("the garden needs water on mondays", "call mom on sundays"):
        assert _cli(home, "remember", text, "--tags", "notes").returncode == 0
    assert _cli(home, "sync").returncode == 0
    state_file = home / "memory" / ".engram-sync.json"

    watcher = subprocess.Popen([sys.executable, "-m", "engram", "watch"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True,
                               env=_env(home, ENGRAM_FILES__POLL_INTERVAL_S="0.5", ENGRAM_FILES__DEBOUNCE_S="0.05"))
    try:
        assert watcher.stderr is not None
        for line in watcher.stderr:  # the first pass is done once it says it is watching
            if line.startswith("watching"):
                break
        else:
            raise AssertionError(f"engram watch ended before watching: {watcher.wait()}")
        migrated = _cli(home, "migrate", "--to", pg_url)
        assert migrated.returncode == 0, migrated.stderr
        handed = json.loads(state_file.read_text("utf-8"))
        assert handed["database"].startswith("postgres:")

        # A hand edit after the migrate: the new store's to take; the stale watcher sees it too.
        edited = next(p for p in (home / "memory").rglob("*.md") if "call mom" in p.read_text("utf-8"))
        edited.write_text(edited.read_text("utf-8").replace("call mom on sundays", "call mom on saturdays"), "utf-8")
        _, err = watcher.communicate(timeout=120)
    finally:
        if watcher.poll() is None:
            watcher.kill()
            watcher.wait()
    assert watcher.returncode == 1, err
    assert err.count("handed over by `engram migrate`") == 1 and "no longer syncs the folder" in err  # said once
    assert json.loads(state_file.read_text("utf-8"))["database"] == handed["database"]

    # The first sync on PostgreSQL finds the hand edit as a hand edit: no conflict, nothing reverted.
    on_pg = load_settings(home=home, database_url=pg_url, embeddings={"provider": "none"})
    engram = Engram.from_settings(on_pg)
    try:
        report = FileSync.from_settings(engram, on_pg).sync()
        assert report.conflicts == [] and not list((home / "memory").rglob("*.conflict"))
        assert sorted(m.content for m in engram.list()) == ["call mom on saturdays", "the garden needs water on mondays"]
    finally:
        engram.close()

    # A sync started on the SQLite file afterwards is refused too, and changes nothing.
    before = state_file.read_bytes()
    again = _cli(home, "sync")
    assert again.returncode == 1 and "handed over" in again.stderr
    assert state_file.read_bytes() == before


def test_a_servers_folder_writer_on_the_migrated_store_stops_writing_the_folder(
        pg_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # What `engram serve` started before the migrate holds: the engine on the SQLite file with the
    # folder writer attached (attach_from_settings), reflecting each store in the folder.
    home = tmp_path / "home"
    lite = load_settings(home=home, embeddings={"provider": "none"})
    engram = Engram.from_settings(lite)
    try:
        engram.remember("the garden needs water on mondays", tags=["notes"])
        state_file = home / "memory" / ".engram-sync.json"
        assert state_file.is_file()
        report = migrate_to_postgres(lite, lite.database_path(lite.agent), pg_url)
        assert report.verified and report.sync_state is not None
        handed = state_file.read_bytes()
        with caplog.at_level(logging.WARNING, logger="engram.files"):
            engram.remember("buy shoes before the trip", tags=["notes"])  # the write itself still succeeds
            engram.remember("call mom on sundays", tags=["notes"])
        said = [r.getMessage() for r in caplog.records if "handed over by `engram migrate`" in r.getMessage()]
        assert len(said) == 1 and "stops writing the memory folder" in said[0]
        assert state_file.read_bytes() == handed
        assert not any("shoes" in p.read_text("utf-8") or "call mom" in p.read_text("utf-8")
                       for p in (home / "memory").rglob("*.md"))
    finally:
        engram.close()


def test_a_command_writing_the_migrated_sqlite_store_warns_once_and_succeeds(pg_url: str, tmp_path: Path) -> None:
    """``engram remember`` run on the SQLite file after the migrate (a shell without
    ENGRAM_DATABASE_URL) stores the memory, exit 0, and said so as ``error: ...``: a script reading
    standard error took a failure that did not happen (docs/cli.md: on success only ``warning:``)."""
    home = tmp_path / "home"
    assert _cli(home, "remember", "the garden needs water on mondays").returncode == 0
    assert _cli(home, "migrate", "--to", pg_url).returncode == 0
    done = _cli(home, "--json", "remember", "buy shoes before the trip")
    assert done.returncode == 0 and json.loads(done.stdout)["action"] == "created"
    said = done.stderr.splitlines()
    assert len(said) == 1 and said[0].startswith("warning: the memory folder's sync state"), done.stderr
    assert "stops writing the memory folder" in said[0]
