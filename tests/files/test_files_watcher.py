"""Hand edits reach the database through the running watcher (polled with a timeout, never slept)."""

from __future__ import annotations

from pathlib import Path

from engram.engine import Engram
from engram.files.sync import FileSync, wait_for
from engram.files.watcher import Watcher

NOTES = "agents/default/notes.md"


def _contents(engram: Engram) -> set[str]:
    return {m.content for m in engram.store.iter_all()}


def test_watcher_carries_each_kind_of_hand_edit(engram: Engram, syncer: FileSync, folder: Path) -> None:
    engram.remember("change me", tags="notes")
    engram.remember("delete me", tags="notes")
    engram.remember("doomed file entry", tags="doomed")
    path = folder / NOTES
    with Watcher(syncer, debounce_s=0.1) as watcher:
        # change a bullet
        path.write_text(path.read_text().replace("- change me (", "- changed by hand ("), encoding="utf-8")
        assert wait_for(lambda: "changed by hand" in _contents(engram))
        # add a bullet
        path.write_text(path.read_text() + "- added by hand\n  - tags: notes\n", encoding="utf-8")
        assert wait_for(lambda: "added by hand" in _contents(engram))
        assert wait_for(lambda: path.read_text().count("<!-- id:") == 3)  # the new bullet got its id
        # delete a bullet
        lines = path.read_text().splitlines()
        i = next(n for n, line in enumerate(lines) if "delete me" in line)
        del lines[i:i + 2]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        assert wait_for(lambda: "delete me" not in _contents(engram))
        # add a file
        (folder / "global").mkdir(exist_ok=True)
        (folder / "global/facts.md").write_text("# Facts\n\n- The sky is blue\n", encoding="utf-8")
        assert wait_for(lambda: "The sky is blue" in _contents(engram))
        # delete a file: a conflict, the file comes back from the database
        (folder / "agents/default/doomed.md").unlink()
        assert wait_for(lambda: (folder / "agents/default/doomed.md").exists())
        assert "doomed file entry" in _contents(engram)
        # empty a file: its entries are forgotten (after a backup)
        (folder / "agents/default/doomed.md").write_text("# Doomed\n", encoding="utf-8")
        assert wait_for(lambda: "doomed file entry" not in _contents(engram))
        # the database side still reaches files while watching, without echoing back
        engram.remember("from the database", tags="notes")
        assert wait_for(lambda: "from the database" in path.read_text())
        assert watcher.passes >= 1
    assert _contents(engram) == {"changed by hand", "added by hand", "The sky is blue", "from the database"}


def test_poll_pass_picks_up_other_processes_writes(engram: Engram, folder: Path, tmp_path: Path) -> None:
    """A write through another Engram on the same database (as another process would) has no event
    here; the periodic pass writes it into the folder."""
    syncer = FileSync(engram, folder)
    syncer.sync()
    with Engram.from_settings(home=tmp_path / "home") as other, Watcher(syncer, debounce_s=0.05, poll_interval_s=0.5):
        other.remember("written elsewhere", tags="remote")
        assert wait_for(lambda: (folder / "agents/default/remote.md").exists()
                        and "written elsewhere" in (folder / "agents/default/remote.md").read_text())
