"""Fuzz: any content, key, tags and metadata written to the memory folder (markdown and YAML) is
read back by a fresh database exactly as stored, and a sync of the folder it wrote changes nothing."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given

from engram.engine import Engram
from engram.files.sync import FileSync
from tests.fuzz_inputs import FUZZ, contents, expected, keys, metadata, tags


@pytest.mark.parametrize("fmt", ["markdown", "yaml"])
def test_fields_round_trip_through_the_memory_files(fmt: str) -> None:
    @FUZZ
    @given(content=contents, key=keys, tag_list=tags, meta=metadata)
    def check(content: str, key: str, tag_list: list[str], meta: dict[str, Any]) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            home, folder = Path(tmp) / "home", Path(tmp) / "memory"
            with Engram.from_settings(home=home, files={"enabled": False}) as engram:
                live = FileSync(engram, folder, format=fmt)
                live.attach()
                stored = engram.remember(content, key=key, tags=tag_list, metadata=meta).memory
                again = live.sync()
                assert again.problems == [] and not again.changed, again
                live.detach()
            with Engram.from_settings(home=Path(tmp) / "fresh", files={"enabled": False}) as fresh:
                report = FileSync(fresh, folder, format=fmt).sync()
                assert report.problems == [] and report.db_created == 1, report
                back = fresh.get(stored.id)
                assert (back.content, back.tags, back.metadata) == expected(content, tag_list, meta)
                assert (back.id, back.key) == (stored.id, key.strip())

    check()
