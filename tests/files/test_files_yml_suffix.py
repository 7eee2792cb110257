"""A YAML memory file a user names ``.yml`` (the other usual spelling) is a memory file under
``files.format = "yaml"``, on a real SQLite file and a real folder: its hand-added entries are
synced, kept in that file, and its edits read back. Sync reported it as "not in that format" and
never read it, while ``engram import`` of the same folder read it; a file in the other format is
still reported, naming the names the format reads."""

from __future__ import annotations

from pathlib import Path

from engram.engine import Engram
from engram.files.sync import FileSync


def test_a_hand_made_yml_file_is_synced_both_ways_and_a_markdown_one_is_reported(engram: Engram, folder: Path) -> None:
    syncer = FileSync(engram, folder, format="yaml")
    syncer.attach()
    try:
        engram.remember("written by engram", tags="notes")
        hand = folder / "agents/default/hand.yml"
        hand.write_text("memories:\n- content: the user sails on Sundays\n  key: sailing\n", encoding="utf-8")
        (folder / "agents/default/other.md").write_text("- a markdown bullet\n", encoding="utf-8")
        report = syncer.sync()
        assert [(p.path, p.message) for p in report.problems] == [
            ("agents/default/other.md", "not read: files.format reads .yaml and .yml files; this one is not in that format")]
        sailing = engram.get("sailing")
        assert sailing.content == "the user sails on Sundays"
        assert f"id: {sailing.id}" in hand.read_text(encoding="utf-8")  # its id written into the file it was added to
        assert not (folder / "agents/default/hand.yaml").exists()
        engram.remember("the user sails on Saturdays", key="sailing")  # the database's change goes to that file
        assert "the user sails on Saturdays" in hand.read_text(encoding="utf-8")
        hand.write_text(hand.read_text(encoding="utf-8").replace("Saturdays", "Fridays"), encoding="utf-8")
        assert syncer.sync().problems[0].path == "agents/default/other.md"  # (only that one, again)
        assert engram.get("sailing").content == "the user sails on Fridays"  # a hand edit read back
        assert sorted(m.content for m in engram.list()) == ["the user sails on Fridays", "written by engram"]
    finally:
        syncer.detach()
