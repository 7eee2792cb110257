"""A ``MEMORY.md`` in a memory folder is neither memories nor the operator's notes (those are
``ENGRAM_HOME/MEMORY.md``, in the home folder above it): sync and import say so, once, with
where the file belongs, instead of passing over it in silence."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.engine import Engram
from engram.errors import ValidationError
from engram.files.export import import_folder
from engram.files.sync import FileSync
from tests.files.conftest import run_cli


def test_sync_reports_a_memory_md_at_the_top_of_the_memory_folder(engram: Engram, syncer: FileSync,
                                                                  folder: Path) -> None:
    engram.remember("placed right", tags="notes")
    curated = "# Notes for the agent\n\n- always answer in French\n"
    (folder / "MEMORY.md").write_text(curated, encoding="utf-8")
    [problem] = syncer.sync().problems
    assert problem.path == "MEMORY.md"
    assert "ENGRAM_HOME/MEMORY.md" in problem.message and "prompt" in problem.message
    assert [m.content for m in engram.list()] == ["placed right"]
    assert (folder / "MEMORY.md").read_text(encoding="utf-8") == curated  # never written either


def test_import_reports_a_memory_md_in_an_agent_folder(engram: Engram, tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "agents/alice").mkdir(parents=True)
    (src / "agents/alice/notes.md").write_text("- alice likes tea\n", encoding="utf-8")
    (src / "agents/alice/MEMORY.md").write_text("# Curated\n\n- alice is a pilot\n", encoding="utf-8")
    summary = import_folder(engram, src)
    [problem] = summary.problems
    assert problem.path == "agents/alice/MEMORY.md"
    assert "ENGRAM_HOME/MEMORY.md" in problem.message and "rename" in problem.message
    assert [m.content for m in engram.for_agent("alice").list()] == ["alice likes tea"]
    # The library's door says it too, among the import's warnings.
    (src / "agents/alice/notes.md").write_text("- alice likes tea\n- and coffee\n", encoding="utf-8")
    result = engram.import_from(src)
    assert result.kind == "folder" and any(w.startswith("agents/alice/MEMORY.md: ") for w in result.warnings)


def test_an_import_of_only_a_memory_md_says_why_nothing_was_read(engram: Engram, tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "agents/alice").mkdir(parents=True)
    (src / "agents/alice/MEMORY.md").write_text("- alice is a pilot\n", encoding="utf-8")
    with pytest.raises(ValidationError, match=r"agents/alice/MEMORY\.md: not read: .*ENGRAM_HOME/MEMORY\.md"):
        import_folder(engram, src)


def test_cli_prints_each_skipped_memory_md_once(tmp_path: Path) -> None:
    home = tmp_path / "home"
    run_cli(home, "remember", "placed right", "--tags", "notes")
    (home / "memory/MEMORY.md").write_text("- not a memory\n", encoding="utf-8")
    synced = run_cli(home, "sync")
    assert synced.stderr.count("MEMORY.md: not read:") == 1, synced.stderr
    assert "ENGRAM_HOME/MEMORY.md" in synced.stderr
    src = tmp_path / "src"
    (src / "agents/alice").mkdir(parents=True)
    (src / "agents/alice/notes.md").write_text("- alice likes tea\n", encoding="utf-8")
    (src / "agents/alice/MEMORY.md").write_text("- alice is a pilot\n", encoding="utf-8")
    imported = run_cli(home, "import", str(src))
    assert "created 1 new" in imported.stdout
    assert imported.stderr.count("agents/alice/MEMORY.md: not read:") == 1, imported.stderr


def test_an_engram_folder_read_as_an_openclaw_workspace_names_the_files_it_passes_over(
        engram: Engram, tmp_path: Path) -> None:
    # A MEMORY.md at its top makes the folder an OpenClaw workspace (its curated memory, imported
    # as such); the engram memory files beside it were left out with no word of it.
    src = tmp_path / "src"
    (src / "global").mkdir(parents=True)
    (src / "global/facts.md").write_text("- the sky is blue\n", encoding="utf-8")
    (src / "MEMORY.md").write_text("- alice is a pilot\n", encoding="utf-8")
    summary = engram.import_from(src)
    assert summary.kind == "openclaw" and summary.imported == 1
    [warning] = summary.warnings
    assert "global/facts.md" in warning and "--from folder" in warning
    assert engram.import_from(src, "folder").imported == 1  # as the warning says


def test_watch_shows_a_file_it_cannot_read_once_not_at_every_periodic_pass(tmp_path: Path) -> None:
    home = tmp_path / "home"
    run_cli(home, "remember", "placed right", "--tags", "notes")
    (home / "memory" / "MEMORY.md").write_text("# notes at the wrong level\n", encoding="utf-8")
    watched = run_cli(home, "watch", "--duration", "4", ENGRAM_FILES__POLL_INTERVAL_S="0.5")
    # Four seconds at a pass every half second: the first pass and several periodic ones all find it.
    assert watched.stderr.count("skipped: MEMORY.md: not read") == 1, watched.stderr
