"""A per-type JSON export (a file per memory) and a sync's first pass over a whole folder show how
far they are: the work reports counts, the CLI draws them on stderr and leaves stdout as it was."""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engram.backends.sqlite import SqliteBackend
from engram.engine import Engram
from engram.files.export import export_folder
from engram.files.sync import FileSync
from engram.interfaces.cli import render
from engram.interfaces.cli.app import app
from engram.store.sqlite import SqliteMemoryStore
from engram.testing.fakes import HashingEmbedder


def _rising_to(reports: list[tuple[int, int]], total: int) -> None:
    dones = [done for done, _ in reports]
    assert dones == sorted(dones) and len(dones) > 1
    assert {t for _, t in reports} == {total} and dones[-1] == total


def test_a_json_export_reports_the_memories_written(engram: Engram, tmp_path: Path):
    engram.remember_many([{"content": f"note {i} about the garden"} for i in range(450)])
    calls: list[tuple[int, int]] = []
    done = export_folder(engram.store.iter_all(), tmp_path / "out", format="json",
                         progress=lambda *call: calls.append(call))
    assert done.memories == 450
    _rising_to(calls, 450)


def test_a_markdown_or_yaml_export_reports_each_file_laid_out(engram: Engram, tmp_path: Path, fmt: str):
    engram.remember_many([{"content": f"note {i} about the garden", "tags": [f"t{i % 5}"]} for i in range(300)])
    calls: list[tuple[int, int]] = []
    done = export_folder(engram.store.iter_all(), tmp_path / "out", format=fmt, max_file_bytes=1 << 20,
                         progress=lambda *call: calls.append(call))
    assert done.memories == 300 and len(done.files) == 5
    _rising_to(calls, 300)
    assert calls == [(60, 300), (120, 300), (180, 300), (240, 300), (300, 300)]  # a report per tag's file


def test_a_one_tag_export_counts_the_memories_of_its_file_as_it_is_split(engram: Engram, tmp_path: Path, fmt: str):
    # Everything in one file: the bar went from 0 to all at once, after the whole split. Now the
    # memories the file keeps count when they are known, then each moved one as it is placed.
    engram.remember_many([{"content": f"note {i} about the garden", "tags": ["garden"]} for i in range(300)])
    calls: list[tuple[int, int]] = []
    done = export_folder(engram.store.iter_all(), tmp_path / "out", format=fmt, max_file_bytes=4096,
                         progress=lambda *call: calls.append(call))
    assert done.memories == 300 and len(done.files) > 5
    _rising_to(calls, 300)
    kept = calls[0][0]
    assert 0 < kept < 60 and calls == [(n, 300) for n in range(kept, 301)]


def _engram(path: Path) -> Engram:
    store = SqliteMemoryStore(path)
    return Engram(store, embedder=HashingEmbedder(), backend=SqliteBackend(store))


def test_a_first_pass_over_a_copied_folder_reports_its_embedding(tmp_path: Path):
    folder = tmp_path / "memory"
    first = _engram(tmp_path / "first.db")
    first.remember_many([{"content": f"note {i} about the garden"} for i in range(600)])  # over a batch
    FileSync(first, folder).sync()
    first.close()
    copied = tmp_path / "copied"
    shutil.copytree(folder, copied)
    (copied / ".engram-sync.journal").unlink(missing_ok=True)  # a folder restored elsewhere
    second = _engram(tmp_path / "second.db")
    calls: list[tuple[str, int, int]] = []
    report = FileSync(second, copied).sync(progress=lambda *call: calls.append(call))
    second.close()
    assert report.db_created == 600
    phases: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for phase, done, total in calls:
        phases[phase].append((done, total))
    _rising_to(phases["embedding"], 600)
    # The database knew none of them: the folder's one file read counts 1, settling none more.
    assert phases["syncing"][0] == (0, 1) and phases["syncing"][-1] == (1, 1)


def _syncing(calls: list[tuple[str, int, int]]) -> list[tuple[int, int]]:
    return [(done, total) for phase, done, total in calls if phase == "syncing"]


def test_a_pass_over_one_folder_of_several_files_counts_its_files_read_and_entries_settled(tmp_path: Path):
    # Review: the count was the scope folders, 0/1 then 1/1 for a home's one folder of thousands of memories.
    folder = tmp_path / "memory"
    engram = _engram(tmp_path / "memory.db")
    engram.remember_many([{"content": f"note {i} about the garden", "tags": [f"t{i % 3}"]} for i in range(450)])
    syncer = FileSync(engram, folder)
    calls: list[tuple[str, int, int]] = []
    syncer.sync(progress=lambda *call: calls.append(call))
    scope_dir = folder / "agents" / "default"
    files = sorted(p.name for p in scope_dir.iterdir())
    assert files == ["t0.md", "t1.md", "t2.md"]
    _rising_to(_syncing(calls), 450)  # an empty folder: nothing read, each entry settled
    assert len(set(_syncing(calls))) > 3

    # Edited by hand: an entry the state does not know yet, and a file it has never seen.
    with (scope_dir / "t1.md").open("a", encoding="utf-8") as out:
        out.write("- typed in the editor\n")
    (scope_dir / "more.md").write_text("- one more by hand\n- and another\n", encoding="utf-8")
    calls.clear()
    report = syncer.sync(progress=lambda *call: calls.append(call))
    engram.close()
    assert report.db_created == 3
    counts = _syncing(calls)
    # The three files' 450 entries as read, the new file as 1, then the 450 memories settled: the
    # three entries more that the pass settles are not in the total it knew as it began.
    _rising_to(counts, 450 + 1 + 450)
    dones = [done for done, _ in counts]
    read = [later - earlier for earlier, later in zip(dones[:3], dones[1:4], strict=True)]
    # A file read at a time, counted as the entries it held (the new file's 1 shown with the next report).
    assert all(step in (150, 151) for step in read), dones
    assert len(set(counts)) > 6


@pytest.fixture
def stderr_is_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rich draws a bar only on a terminal: stderr's console made one (stdout's left as it is)."""
    monkeypatch.setitem(render._consoles, "errors", render._clean_console(stderr=True, force_terminal=True))


def _run(*args: str):  # noqa: ANN202
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def test_the_cli_draws_a_json_export_and_a_sync_on_stderr(tmp_path: Path, stderr_is_a_terminal):
    home = tmp_path / "home"
    with Engram.from_settings(home=home, embeddings={"provider": "none"}, files={"enabled": False}) as engram:
        engram.remember_many([{"content": f"note {i} about the garden"} for i in range(250)])
    exported = _run("--home", str(home), "export", "-f", "json", str(tmp_path / "out"))
    assert "exporting as json" in exported.stderr and "250/250" in exported.stderr
    assert exported.stdout == ""
    as_json = _run("--home", str(home), "--json", "export", "-f", "json", str(tmp_path / "again"))
    assert json.loads(as_json.stdout)["exported"] == 250
    assert "exporting" not in as_json.stderr

    synced = _run("--home", str(home), "sync")
    # Written into an empty folder: nothing to read, the 250 entries settled counted.
    assert "syncing" in synced.stderr and "250/250" in synced.stderr
    assert synced.stdout.splitlines()[1].startswith("database -> files: 250 added")
    assert "━" not in synced.stdout
    quiet = _run("--home", str(home), "--json", "sync")
    assert json.loads(quiet.stdout)["to_files"]["added"] == 0
    assert "syncing" not in quiet.stderr
