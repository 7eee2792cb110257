"""Valid time in memory files: front matter / sub-bullets and markers round-trip valid_from,
valid_until and superseded_at, and an edit of valid_from in a file reaches the database."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest

from engram.engine import Engram
from engram.files.export import export_folder, import_folder
from engram.files.sync import FileSync
from tests.files.conftest import held_in_files


def _timed(engram: Engram) -> None:
    engram.remember("On 2025-03-10 the nightly migration failed")  # valid_from from the content
    engram.remember("User lives in Berlin", key="home-berlin", valid_from="2020-03-01T00:00:00Z")
    engram.remember("User lives in Paris", key="home-paris", valid_from=1_717_200_000.25, valid_until="2030-01-01T00:00:00Z")
    engram.supersede("home-berlin", "home-paris")


@pytest.mark.parametrize("fmt", ["markdown", "yaml", "json"])
def test_valid_time_round_trips_through_files(engram: Engram, tmp_path: Path, fmt: str) -> None:
    _timed(engram)
    before = held_in_files(engram)
    assert sum(1 for m in before.values() if m["valid_from"] is not None) == 3
    export_folder(engram.store.iter_all(), tmp_path / "out", format=fmt)
    with Engram.from_settings(home=tmp_path / "fresh") as fresh:
        summary = import_folder(fresh, tmp_path / "out")
        assert summary.problems == [] and summary.imported == 3
        assert held_in_files(fresh) == before


@pytest.mark.parametrize("fmt", ["markdown", "yaml", "json"])
def test_valid_times_before_the_year_1000_round_trip_through_files(engram: Engram, tmp_path: Path, fmt: str) -> None:
    # The files wrote them by strftime, whose year has no leading zeros here ("500-03-04T05:06:07Z"),
    # which no ISO reader takes back: the import refused the entry. temporal.instants.iso writes 0500.
    start, end = (dt.datetime(500, 3, 4, 5, 6, 7, tzinfo=dt.UTC).timestamp(),
                  dt.datetime(999, 12, 31, tzinfo=dt.UTC).timestamp())
    engram.remember("The city was founded", key="founded", valid_from=start, valid_until=end)
    before = held_in_files(engram)
    export_folder(engram.store.iter_all(), tmp_path / "out", format=fmt)
    with Engram.from_settings(home=tmp_path / "fresh") as fresh:
        summary = import_folder(fresh, tmp_path / "out")
        assert summary.problems == [] and summary.imported == 1
        assert held_in_files(fresh) == before


def test_editing_valid_from_in_a_file_reaches_the_database(engram: Engram, syncer: FileSync, folder: Path) -> None:
    engram.remember("User lives in Berlin", key="home-berlin", valid_from="2020-03-01T00:00:00Z")
    syncer.sync()
    [path] = [p for p in folder.rglob("*.md") if "User lives in Berlin" in p.read_text()]
    text = path.read_text()
    assert "valid_from: 2020-03-01T00:00:00Z" in text
    path.write_text(text.replace("valid_from: 2020-03-01T00:00:00Z", "valid_from: 2021-05-01T00:00:00Z"))
    report = syncer.sync()
    assert report.problems == [] and report.db_updated == 1
    assert engram.get("home-berlin").valid_from == 1_619_827_200.0
    path.write_text(path.read_text().replace("valid_from: 2021-05-01T00:00:00Z", "valid_from: someday"))
    report = syncer.sync()
    assert report.problems and "valid_from" in str(report.problems[0])
    assert engram.get("home-berlin").valid_from == 1_619_827_200.0  # the bad edit changed nothing


def test_a_bullet_added_by_hand_keeps_its_valid_time(engram: Engram, syncer: FileSync, folder: Path) -> None:
    engram.remember("User lives in Berlin", key="home-berlin")
    syncer.sync()
    [path] = [p for p in folder.rglob("*.md") if "User lives in Berlin" in p.read_text()]
    path.write_text(path.read_text().rstrip("\n") + "\n- Moved the server to Frankfurt\n  - valid_from: 2024-02-01T00:00:00Z\n")
    report = syncer.sync()
    assert report.problems == [] and report.db_created == 1
    [added] = engram.list(limit=10, filters=None)[:1]
    assert added.content == "Moved the server to Frankfurt" and added.valid_from == 1_706_745_600.0



def test_editing_an_entrys_date_is_reported_and_put_back(engram: Engram, folder: Path, fmt: str) -> None:
    # The date shown is when the memory was stored, which a file cannot change (``known_at`` reads
    # it): the edit used to be dropped without a word, the file showing a date the database lacked.
    syncer = FileSync(engram, folder, format=fmt)
    syncer.attach()
    try:
        memory = engram.remember("Met Carol at the conference", key="carol", tags=["events"]).memory
        engram.remember("Carol works on compilers", key="carol-work", tags=["events"])
        syncer.sync()
        [path] = folder.rglob("events.*")
        text = path.read_text()
        day = dt.datetime.fromtimestamp(memory.created_at, dt.UTC).date().isoformat()
        shown = re.compile(rf"\({day}\)" if fmt == "markdown" else rf"timestamp: '{day}T[^']*'")
        assert len(shown.findall(text)) == 2
        edited = "(2026-03-01)" if fmt == "markdown" else "timestamp: '2026-03-01T09:00:00Z'"
        path.write_text(shown.sub(edited, text, count=1))
        report = syncer.sync()
        assert engram.get("carol").created_at == memory.created_at
        [problem] = report.problems
        assert problem.path == path.relative_to(folder).as_posix() and problem.line > 0
        assert "2026-03-01" in problem.message and day in problem.message and "valid_from" in problem.message
        assert path.read_text() == text  # put back: the file and the database agree again
        assert syncer.sync().problems == []
    finally:
        syncer.detach()


def _lyon_file(engram: Engram, folder: Path, syncer: FileSync) -> Path:
    engram.remember("On 2026-04-12 the user moved to Lyon", key="lyon", tags=["moves"])
    syncer.sync()
    [path] = folder.rglob("moves.*")
    assert "valid_from" in path.read_text()  # the date the engine read from the text, written out
    return path


def _day(engram: Engram, day: str) -> float | None:
    return engram.time.instant(day, "day")  # the day's midnight in the user's zone, as a stated date reads


def test_a_valid_from_read_from_the_text_follows_an_edit_of_the_text(engram: Engram, folder: Path, fmt: str) -> None:
    # The file showed the date the engine read, and kept it after the text changed ("On 2026-05-01 ..."):
    # taken for the person's, the memory kept dating the old words.
    syncer = FileSync(engram, folder, format=fmt)
    syncer.attach()
    try:
        path = _lyon_file(engram, folder, syncer)
        assert engram.get("lyon").valid_from == _day(engram, "2026-04-12")
        path.write_text(path.read_text().replace("On 2026-04-12", "On 2026-05-01"))
        report = syncer.sync()
        assert report.problems == [] and report.db_updated == 1
        memory = engram.get("lyon")
        assert memory.content == "On 2026-05-01 the user moved to Lyon" and memory.valid_from == _day(engram, "2026-05-01")
        assert syncer.sync().db_updated == 0  # the file shows the new date: settled
        path.write_text(path.read_text().replace("On 2026-05-01 the user", "The user"))
        syncer.sync()
        assert engram.get("lyon").valid_from is None  # the text states no date any more
    finally:
        syncer.detach()


def test_a_valid_from_typed_into_the_file_stays_when_the_text_is_edited(engram: Engram, folder: Path, fmt: str) -> None:
    syncer = FileSync(engram, folder, format=fmt)
    syncer.attach()
    try:
        path = _lyon_file(engram, folder, syncer)
        typed = re.sub(r"valid_from: \S+", "valid_from: 2026-04-01T00:00:00Z", path.read_text())
        path.write_text(typed)
        syncer.sync()
        assert engram.get("lyon").valid_from == 1_775_001_600.0  # 2026-04-01T00:00:00Z, as typed
        path.write_text(path.read_text().replace("On 2026-04-12", "On 2026-05-01"))
        report = syncer.sync()
        assert report.problems == [] and report.db_updated == 1
        memory = engram.get("lyon")
        assert memory.content == "On 2026-05-01 the user moved to Lyon" and memory.valid_from == 1_775_001_600.0
        # Typed in the same edit as the text: the typed date too.
        both = re.sub(r"valid_from: \S+", "valid_from: 2026-03-01T00:00:00Z", path.read_text())
        path.write_text(both.replace("On 2026-05-01", "On 2026-06-01"))
        syncer.sync()
        memory = engram.get("lyon")
        assert memory.content == "On 2026-06-01 the user moved to Lyon" and memory.valid_from == 1_772_323_200.0
    finally:
        syncer.detach()
