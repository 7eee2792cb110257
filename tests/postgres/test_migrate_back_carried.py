"""``engram migrate --from postgresql://…`` carries back what the copy up carried: the memory
folder's sync state, handed from the PostgreSQL database to the SQLite file (the first sync on the
file sets nothing in conflict that nobody edited by hand, and still finds a hand edit made while on
PostgreSQL), and the maintenance schedule (the first pass on the file runs only what is due). A
second copy back carries nothing again; a copy back into the very file copied up takes its state
back rather than being refused as the store that handed it away."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engram.config import load_settings
from engram.engine import Engram
from engram.files.sync import FileSync
from engram.root import MAINTENANCE_STATE, maintenance_for, migrate_from_postgres, migrate_to_postgres

ENGRAM = [sys.executable, "-c", "from engram.interfaces.cli.app import main; main()"]


def _entry_file(folder: Path, text: str) -> Path:
    return next(p for p in folder.rglob("*.md") if text in p.read_text(encoding="utf-8"))


def test_a_copy_back_hands_the_sync_state_and_the_schedule_to_the_file(pg_url: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    lite = load_settings(home=home, agent="alice", embeddings={"provider": "none"})
    engram = Engram.from_settings(lite)
    try:
        for text in ("the garden needs water on mondays", "buy shoes before the trip", "call mom on sundays"):
            engram.remember(text, tags=["notes"])
        assert FileSync.from_settings(engram, lite).sync().conflicts == []
    finally:
        engram.close()
    assert migrate_to_postgres(lite, lite.database_path("alice"), pg_url).sync_state is not None

    on_pg = load_settings(home=home, agent="alice", embeddings={"provider": "none"}, database_url=pg_url)
    engram = Engram.from_settings(on_pg)
    try:
        engram.remember("water the roses in june", tags=["notes"])  # written on PostgreSQL, mirrored to its file
        assert FileSync.from_settings(engram, on_pg).sync().conflicts == []
        engram.recall("garden water")  # strengthened in the database; its file is left as written
        engram.recall("roses june")
        on_pg_pass = maintenance_for(engram, on_pg).run()
        assert {r.job for r in on_pg_pass.ran} >= {"hygiene", "decay"}
        file_only = {job for job, why in on_pg_pass.skipped.items() if why == "not a SQLite store"}
    finally:
        engram.close()
    edited = _entry_file(home / "memory", "call mom")  # edited by hand while on PostgreSQL, not synced yet
    edited.write_text(edited.read_text(encoding="utf-8").replace("call mom on sundays", "call mom on saturdays"),
                      encoding="utf-8")
    state = home / "memory" / ".engram-sync.json"

    back = tmp_path / "back.db"

    class Interrupt(Exception):
        pass

    def stop_early(table: str, done: int, total: int) -> None:
        if table == "memory_links":  # the memories are in; the copy is not whole
            raise Interrupt

    before = state.read_bytes()
    with pytest.raises(Interrupt):
        migrate_from_postgres(on_pg, pg_url, back, stop_early)
    # Nothing carried from an unverified copy: the state is still PostgreSQL's, no schedule beside the file.
    assert state.read_bytes() == before and not back.with_name(back.name + MAINTENANCE_STATE).exists()
    report = migrate_from_postgres(on_pg, pg_url, back)  # resumed
    assert report.verified
    assert report.sync_state == str(state.resolve())
    assert report.schedule == str(back.with_name(back.name + MAINTENANCE_STATE))
    # Run again (as to resume), before the file is used: nothing copied, the state already the
    # file's, the schedule unchanged.
    kept_state, kept_schedule = state.read_bytes(), Path(report.schedule).read_bytes()
    rerun = migrate_from_postgres(on_pg, pg_url, back)
    assert rerun.verified and rerun.sync_state is None
    assert sum(t.copied for t in rerun.tables.values()) == 0
    assert state.read_bytes() == kept_state and Path(report.schedule).read_bytes() == kept_schedule

    # database_url unset: engram opens the file.
    lite_back = load_settings(home=home, agent="alice", embeddings={"provider": "none"}, path=back)
    engram = Engram.from_settings(lite_back)
    try:
        synced = FileSync.from_settings(engram, lite_back).sync()
        assert synced.conflicts == [] and not list((home / "memory").rglob("*.conflict"))
        # Nothing new on either side; the hand edit alone is taken in.
        assert (synced.db_created, synced.db_forgotten, synced.files_added, synced.files_removed) == (0, 0, 0, 0)
        assert synced.db_updated == 1
        assert sorted(m.content for m in engram.list()) == [
            "buy shoes before the trip", "call mom on saturdays", "the garden needs water on mondays",
            "water the roses in june"]
        # The schedule came along: the first pass on the file reruns nothing that ran on PostgreSQL;
        # only the jobs of a SQLite file (backup, vacuum), never run there, are due.
        again = maintenance_for(engram, lite_back).run()
        assert {r.job for r in again.ran} == file_only == {"backup", "vacuum"}, [r.job for r in again.ran]
    finally:
        engram.close()


def _run(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ENGRAM, *args], env={**os.environ, "ENGRAM_HOME": str(home), "ENGRAM_EMBEDDINGS__PROVIDER": "none",
                                                 "COLUMNS": "200", **env},
                          capture_output=True, text=True, timeout=600)


def test_a_copy_back_into_the_file_copied_up_takes_its_sync_state_back(pg_url: str, tmp_path: Path) -> None:
    # The file the copy up came from, untouched since (as the home still holds it): the copy back
    # finds every row there, and the file syncs its folder again instead of being refused as the
    # store that handed the state away; PostgreSQL is the one that stops syncing the folder now.
    home = tmp_path / "home"
    lite = load_settings(home=home, embeddings={"provider": "none"})
    engram = Engram.from_settings(lite)
    try:
        engram.remember("the office wifi is on channel 11", tags=["notes"])
        engram.remember("the printer is on floor 2", tags=["notes"])
        assert FileSync.from_settings(engram, lite).sync().conflicts == []
    finally:
        engram.close()
    up = _run(home, "--json", "migrate", "--to", pg_url)
    assert up.returncode == 0, up.stderr
    assert json.loads(up.stdout)["sync_state"] is not None

    down = _run(home, "--json", "migrate", "--from", pg_url)  # into the configured file, home/memory.db
    assert down.returncode == 0, down.stderr
    synced = _run(home, "--json", "sync")
    assert synced.returncode == 0, synced.stderr
    said = json.loads(synced.stdout)
    assert said["conflicts"] == [] and said["problems"] == [], said
    assert said["to_database"] == {"created": 0, "updated": 0, "forgotten": 0, "moved": 0}, said
    assert said["to_files"]["files_written"] == [], said
    reported = json.loads(down.stdout)
    assert reported["target"] == str(home / "memory.db") and reported["sync_state"] is not None
    assert sum(t["copied"] for t in reported["tables"].values()) == 0  # every row was there already

    # A process still on PostgreSQL no longer syncs the folder: the file has it.
    stale = _run(home, "sync", ENGRAM_DATABASE_URL=pg_url)
    assert stale.returncode != 0 and "handed over" in stale.stderr, stale.stderr
