"""A value ending in blank lines is written to a YAML memory file as a block kept with them (``|+``),
after which PyYAML ends its document with "...". Each item is dumped alone, so that marker landed
between the item and the next one: the file engram wrote was not valid YAML ("did not find expected
<document start>"), every memory in it was left unread by a fresh database, and the live folder was no
backup. The marker now closes the file only, whether the file is written whole (a sync, an export) or
an item is added to it (a live mirror)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.engine import Engram
from engram.files.export import export_folder, import_folder
from engram.files.sync import FileSync
from tests.files.conftest import held_in_files

ENDS_IN_BLANK_LINES = "\n\nwrapped in newlines\n\n"


def _store(engram: Engram) -> None:
    engram.remember("The first memory's metadata ends in blank lines", key="meta", metadata={"v": ENDS_IN_BLANK_LINES})
    engram.remember(ENDS_IN_BLANK_LINES, key="content")
    engram.remember("A memory after them", key="after", search_context=ENDS_IN_BLANK_LINES)
    engram.remember("The last memory", key="last")
    # A value ending in "..." ends its line as the marker does, and is no marker: kept whole.
    trailing = engram.import_snapshot('{"memories": [{"id": "imported...", "key": "dots", "content": "Wait..."}]}')
    assert trailing.imported == 1
    engram.link("last", "imported...")  # the links, an item's last line but for its times
    engram.remember("Tagged with dots", key="tagged", tags=["etc..."])


def _read_back(folder: Path, home: Path, before: dict[str, dict]) -> None:
    with Engram.from_settings(home=home, files={"enabled": False}) as fresh:
        report = FileSync(fresh, folder, format="yaml").sync()
        assert report.problems == [] and report.db_created == len(before), report
        assert held_in_files(fresh) == before


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_live_yaml_folder_with_values_ending_in_blank_lines_reads_back(engram: Engram, tmp_path: Path,
                                                                         newline: str) -> None:
    folder = tmp_path / "live"
    live = FileSync(engram, folder, format="yaml")
    live.attach()
    try:
        engram.remember("The file's first memory", key="first")
        file = folder / "agents" / "default" / "knowledge.yaml"
        file.write_bytes(file.read_bytes().replace(b"\n", newline.encode()))  # the file's own endings kept
        assert live.sync().problems == []
        _store(engram)  # each added to the file as it is stored
        lines = file.read_bytes().decode().splitlines()
        assert "..." not in lines[:-1], lines  # YAML's document end closes the file only
        assert live.sync().problems == []
    finally:
        live.detach()
    before = held_in_files(engram)
    _read_back(folder, tmp_path / "fresh", before)


def test_a_yaml_folder_written_whole_reads_back(engram: Engram, tmp_path: Path) -> None:
    _store(engram)
    before = held_in_files(engram)
    FileSync(engram, tmp_path / "synced", format="yaml").sync()
    _read_back(tmp_path / "synced", tmp_path / "fresh", before)
    export_folder(engram.store.iter_all(), tmp_path / "out", format="yaml")
    with Engram.from_settings(home=tmp_path / "imported", files={"enabled": False}) as fresh:
        summary = import_folder(fresh, tmp_path / "out")
        assert summary.problems == [] and summary.imported == 6, summary
        assert held_in_files(fresh) == before
