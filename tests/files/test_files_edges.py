"""The memory folder at its edges: whatever content holds survives the files byte for byte, and a
sync never loses memories silently (issue 15: markers in content, emptied files, oversized files)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.engine import Engram
from engram.files.sync import FileSync

HOSTILE_CONTENT = [
    "pasted: <!-- id:x1 key:zz --> end",
    "<!-- id:abc -->",
    "ends with a date (2026-01-01)",
    "ends with a marker <!-- id:q key:k created:1.0 -->",
    "literal escapes &#60;!-- and &#38; and &#27; stay as typed",
    "<\\!-- already escaped --> and <!-- twice <!--",
    "line one\n- tags: not a field\n  - metadata: {}\n\\ backslash\n* star\n## not a heading",
    "carriage\r\nreturns\rand\ttabs",
    "terminal \x1b[31mred\x1b[0m and bell \x07 and \x7f delete",
    "# heading-like first line\n\n\nthree blank lines above",
    "unicode \u2028 line separator \u0085 next line \ufeff bom",
]


@pytest.mark.parametrize("content", HOSTILE_CONTENT)
def test_content_round_trips_through_the_memory_files(
    engram: Engram, syncer: FileSync, folder: Path, tmp_path: Path, fmt: str, content: str
) -> None:
    syncer.detach()
    live = FileSync(engram, tmp_path / "live", format=fmt)
    live.attach()
    engram.remember("neighbour before", key="c2", tags="notes")
    stored = engram.remember(content, key="c3", tags="notes").memory
    engram.remember("neighbour after", key="c4", tags="notes")

    again = live.sync()  # the file as written must read back as what the database holds
    assert again.problems == [] and not again.changed, again
    assert engram.get("c3").content == stored.content
    assert sorted(m.key for m in engram.list()) == ["c2", "c3", "c4"]
    for path in (tmp_path / "live").rglob("*.*"):
        raw = path.read_bytes()
        assert b"\x1b" not in raw and b"\x07" not in raw and b"\r" not in raw, path  # never raw in a file

    with Engram.from_settings(home=tmp_path / "fresh") as fresh:  # the folder alone restores it
        report = FileSync(fresh, tmp_path / "live", format=fmt).sync()
        assert report.problems == [] and report.db_created == 3
        assert fresh.get("c3").content == stored.content
