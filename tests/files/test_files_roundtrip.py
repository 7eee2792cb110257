"""Database -> files -> fresh database gives equal memories: ids, content, tags, metadata, times."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.engine import Engram
from engram.files.export import export_folder, import_folder
from engram.files.sync import FileSync


def _populate(engram: Engram) -> None:
    a = engram.remember("User prefers Python for scripting tasks", tags="preferences,programming",
                        metadata={"section": "Programming Languages", "confidence": 0.9}, importance=0.8)
    engram.remember("Line one\n- not a field\n\n  indented", category="core", type="decision", layer="procedural",
                    related_entity="Hendrik", source="chat", metadata={"nested": {"x": [1, None, True]}})
    b = engram.remember("The sky is blue", scope="global", tags="facts", created_at=1_600_000_000.123456789,
                        search_context="Alice: what colour is it today?\nBob: \"look up\"")
    engram.for_session("s-1").remember("Session note: deploy at 5", scope="session", category="conversation")
    engram.for_agent("other").remember("Another agent's secret", tags="a/b c,ü")
    engram.link(a.memory.id, b.memory.id)
    engram.remember("User prefers Python for ALL scripting tasks", key=a.memory.key, tags="preferences,programming",
                    metadata={"section": "Programming Languages", "confidence": 0.9}, importance=0.8)
    engram.recall("python")  # access times and counts change


def _everything(engram: Engram) -> dict[str, dict]:
    return {m.id: m.to_dict() for m in engram.store.iter_all()}


@pytest.mark.parametrize("fmt", ["markdown", "yaml", "json"])
def test_export_then_import_into_fresh_database(engram: Engram, tmp_path: Path, fmt: str) -> None:
    _populate(engram)
    before = _everything(engram)
    assert len(before) == 5
    export_folder(engram.store.iter_all(), tmp_path / "out", format=fmt)
    with Engram.from_settings(home=tmp_path / "fresh") as fresh:
        summary = import_folder(fresh, tmp_path / "out")
        assert summary.problems == []
        assert summary.imported == 5 and summary.created == 0
        assert _everything(fresh) == before


def test_synced_folder_is_a_backup(engram: Engram, syncer: FileSync, folder: Path, tmp_path: Path, fmt: str) -> None:
    """The live memory folder (written by events) restores a fresh database through sync."""
    syncer.detach()
    live = FileSync(engram, tmp_path / "live", format=fmt)
    live.attach()
    _populate(engram)
    live.sync()  # access times changed by recall are written on the next pass
    before = _everything(engram)
    with Engram.from_settings(home=tmp_path / "fresh") as fresh:
        report = FileSync(fresh, tmp_path / "live", format=fmt).sync()
        assert report.problems == [] and report.db_created == 5
        after = _everything(fresh)
    for memory in before.values():  # the recall after the last write is not file news; compare the rest
        memory.pop("last_accessed"), memory.pop("recall_count")
    for memory in after.values():
        memory.pop("last_accessed"), memory.pop("recall_count")
    assert after == before
