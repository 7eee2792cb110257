"""A ``valid_from`` the engine read from a memory's content follows the content when an update
changes it; one given otherwise stays (``TimeReader.dated_by_content``). Real SQLite home."""

from __future__ import annotations

from pathlib import Path

from engram.engine import Engram


def test_an_update_of_the_content_reads_its_date_again(tmp_path: Path) -> None:
    with Engram.from_settings(home=tmp_path / "home", files={"enabled": False}) as engram:
        engram.remember("On 2026-04-12 the user moved to Lyon", key="lyon")
        assert engram.get("lyon").valid_from == engram.time.instant("2026-04-12", "day")
        engram.update("lyon", content="On 2026-05-01 the user moved to Lyon")
        assert engram.get("lyon").valid_from == engram.time.instant("2026-05-01", "day")
        engram.update("lyon", tags=["moves"])  # the content unchanged: the date too
        assert engram.get("lyon").valid_from == engram.time.instant("2026-05-01", "day")
        engram.update("lyon", content="The user moved to Lyon")
        assert engram.get("lyon").valid_from is None  # no date stated any more


def test_a_given_valid_from_stays_when_the_content_changes(tmp_path: Path) -> None:
    with Engram.from_settings(home=tmp_path / "home", files={"enabled": False}) as engram:
        engram.remember("On 2026-04-12 the user moved to Lyon", key="lyon", valid_from="2026-04-01T00:00:00Z")
        engram.update("lyon", content="On 2026-05-01 the user moved to Lyon")
        assert engram.get("lyon").valid_from == 1_775_001_600.0  # 2026-04-01T00:00:00Z, as given
        engram.update("lyon", content="On 2026-06-01 the user moved to Lyon", valid_from="2026-03-01T00:00:00Z")
        assert engram.get("lyon").valid_from == 1_772_323_200.0
