"""Importing the memory folder engram itself syncs (``files.dir``) is refused before anything is
stored: ``engram sync`` takes its entries in place. Imported, each hand-written entry became a
second memory the mirror wrote into a file of its choosing (``global/drinks.md``), and the next
sync removed the entry from the user's file as its duplicate (ClawCode's folder, mapped with
``file_sync.directory`` to ``files.dir`` and then imported as the migration guide said)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engram.engine import Engram
from engram.errors import ValidationError
from engram.interfaces.cli.app import app

runner = CliRunner()
ENTRY = b"- Likes green tea in the morning (2024-01-01)\n  - tags: drinks\n"


def _clawcode_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "cc"
    (folder / "global").mkdir(parents=True)
    (folder / "global/preferences.md").write_bytes(ENTRY)
    return folder


def _cli(home: Path, folder: Path, *args: str, enabled: bool = True):
    env = {"ENGRAM_FILES__DIR": str(folder), "ENGRAM_FILES__ENABLED": "true" if enabled else "false",
           "ENGRAM_EMBEDDINGS__PROVIDER": "none", "COLUMNS": "400"}
    return runner.invoke(app, ["--home", str(home), *args], env=env)


@pytest.mark.parametrize("inner", ["", "global"])
def test_cli_refuses_to_import_the_synced_folder_or_one_inside_it(tmp_path: Path, inner: str) -> None:
    home, folder = tmp_path / "home", _clawcode_folder(tmp_path)
    given = folder / inner if inner else folder
    result = _cli(home, folder, "import", str(given))
    assert result.exit_code != 0, result.output
    assert isinstance(result.exception, ValidationError), result.output
    assert result.exception.field == "path"
    where = "is engram's memory folder (files.dir)" if not inner else f"is inside engram's memory folder (files.dir: {folder})"
    assert str(result.exception).startswith(f"path: {given} {where}: `engram sync` takes the memory folder's entries in place")
    assert "allowed: engram sync for the memory folder" in str(result.exception)
    count = _cli(home, folder, "--json", "count")
    assert json.loads(count.output) == {"count": 0}
    assert (folder / "global/preferences.md").read_bytes() == ENTRY
    assert sorted(p.name for p in (folder / "global").iterdir()) == ["preferences.md"]
    # What to do instead: the sync takes the entry where it stands, its id written beside it.
    synced = _cli(home, folder, "sync")
    assert synced.exit_code == 0, synced.output
    [listed] = json.loads(_cli(home, folder, "--json", "list").output)
    assert listed["content"] == "Likes green tea in the morning"  # its date is its creation time
    text = (folder / "global/preferences.md").read_text()
    assert f"id:{listed['id']}" in text and sorted(p.name for p in (folder / "global").iterdir()) == ["preferences.md"]


def test_cli_refuses_a_folder_holding_the_synced_folder(tmp_path: Path) -> None:
    home, folder = tmp_path / "home", _clawcode_folder(tmp_path)
    (tmp_path / "global").mkdir()
    (tmp_path / "global/other.md").write_text("- Another note\n", encoding="utf-8")
    result = _cli(home, folder, "import", str(tmp_path))
    assert result.exit_code != 0 and isinstance(result.exception, ValidationError), result.output
    assert str(result.exception).startswith(f"path: {tmp_path} holds engram's memory folder (files.dir: {folder}): ")
    assert json.loads(_cli(home, folder, "--json", "count").output) == {"count": 0}


def test_cli_imports_the_folder_while_files_are_off(tmp_path: Path) -> None:
    # Nothing mirrors into the folder: importing it stores its entries and leaves the file as it was.
    home, folder = tmp_path / "home", _clawcode_folder(tmp_path)
    result = _cli(home, folder, "import", str(folder), enabled=False)
    assert result.exit_code == 0, result.output
    assert "created 1 new" in result.output
    assert json.loads(_cli(home, folder, "--json", "count", enabled=False).output) == {"count": 1}
    assert (folder / "global/preferences.md").read_bytes() == ENTRY
    assert sorted(p.name for p in (folder / "global").iterdir()) == ["preferences.md"]


@pytest.mark.parametrize("kind", [None, "folder"])
def test_library_refuses_to_import_the_synced_folder(tmp_path: Path, kind: str | None) -> None:
    folder = _clawcode_folder(tmp_path)
    with Engram.from_settings(home=tmp_path / "home", files={"dir": folder}, embeddings={"provider": "none"}) as mem:
        for given in (folder, folder / "global"):
            with pytest.raises(ValidationError) as refused:
                mem.import_from(given, kind)
            assert refused.value.field == "path"
            assert "engram's memory folder (files.dir" in str(refused.value)
            assert "`engram sync` takes the memory folder's entries in place" in str(refused.value)
        assert mem.count() == 0
    assert (folder / "global/preferences.md").read_bytes() == ENTRY
    assert sorted(p.name for p in (folder / "global").iterdir()) == ["preferences.md"]


def test_library_imports_the_folder_while_files_are_off_and_another_folder_while_on(tmp_path: Path) -> None:
    folder = _clawcode_folder(tmp_path)
    with Engram.from_settings(home=tmp_path / "home", files={"dir": folder, "enabled": False},
                              embeddings={"provider": "none"}) as mem:
        summary = mem.import_from(folder)
        assert (summary.kind, summary.imported) == ("folder", 1)
        assert mem.count() == 1
    assert (folder / "global/preferences.md").read_bytes() == ENTRY
    # With files on, a folder beside the synced one is imported as before.
    with Engram.from_settings(home=tmp_path / "home2", files={"dir": tmp_path / "synced"},
                              embeddings={"provider": "none"}) as mem:
        assert mem.import_from(folder).imported == 1
    assert (folder / "global/preferences.md").read_bytes() == ENTRY


# The other folder importers that read markdown files as notes: basic-memory reads every .md of the
# folder, OpenClaw every memory/*.md of a workspace (so one holding the memory folder as memory/).
# Unrefused, basic-memory stored the mirror's whole file as a note and the mirror wrote that note
# back into the folder; OpenClaw stored every mirrored entry a second time.


def _workspace(tmp_path: Path) -> tuple[Path, Path]:
    """A folder holding the memory folder as its memory/ (an engram home, an OpenClaw workspace)."""
    workspace = tmp_path / "ws"
    folder = workspace / "memory"
    (folder / "global").mkdir(parents=True)
    (folder / "global/preferences.md").write_bytes(ENTRY)
    return workspace, folder


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(("kind", "inner"), [("basic-memory", ""), ("basic-memory", "global"), ("openclaw", "..")])
def test_cli_refuses_other_folder_importers_on_the_synced_folder(tmp_path: Path, kind: str, inner: str) -> None:
    home, (workspace, folder) = tmp_path / "home", _workspace(tmp_path)
    given = workspace if inner == ".." else folder / inner if inner else folder
    before = _files(workspace)
    result = _cli(home, folder, "import", "--from", kind, str(given))
    assert result.exit_code != 0, result.output
    assert isinstance(result.exception, ValidationError), result.output
    assert result.exception.field == "path"
    where = {"": "is engram's memory folder (files.dir)", "global": f"is inside engram's memory folder (files.dir: {folder})",
             "..": f"holds engram's memory folder (files.dir: {folder})"}[inner]
    assert str(result.exception).startswith(f"path: {given} {where}: the memory folder's markdown files are engram's "
                                            f"own, which `engram sync` takes in place; read as {kind} notes")
    assert f"allowed: a folder of {kind} notes neither inside engram's memory folder nor holding it" in str(result.exception)
    assert json.loads(_cli(home, folder, "--json", "count").output) == {"count": 0}
    assert _files(workspace) == before


def test_cli_imports_a_clawless_home_holding_the_synced_folder(tmp_path: Path) -> None:
    # Clawless reads its home's MEMORY.md (and conversation history), never the memory folder's
    # files: an engram home, which holds the memory folder, is imported as before.
    home, (workspace, folder) = tmp_path / "home", _workspace(tmp_path)
    (workspace / "MEMORY.md").write_text("# MEMORY.md\n\nThe operator prefers short answers.\n", encoding="utf-8")
    before = _files(workspace)
    result = _cli(home, folder, "import", "--from", "clawless", str(workspace))
    assert result.exit_code == 0, result.output
    assert "operator notes (MEMORY.md): added" in result.output
    assert "The operator prefers short answers." in (home / "MEMORY.md").read_text(encoding="utf-8")
    assert json.loads(_cli(home, folder, "--json", "count").output) == {"count": 0}
    assert _files(workspace) == before


def test_cli_imports_basic_memory_notes_from_the_folder_while_files_are_off(tmp_path: Path) -> None:
    home, folder = tmp_path / "home", _clawcode_folder(tmp_path)
    result = _cli(home, folder, "import", "--from", "basic-memory", str(folder), enabled=False)
    assert result.exit_code == 0, result.output
    assert json.loads(_cli(home, folder, "--json", "count", enabled=False).output) == {"count": 1}
    assert (folder / "global/preferences.md").read_bytes() == ENTRY


@pytest.mark.parametrize("kind", ["basic-memory", "openclaw"])
def test_library_refuses_other_folder_importers_on_the_synced_folder(tmp_path: Path, kind: str) -> None:
    workspace, folder = _workspace(tmp_path)
    before = _files(workspace)
    with Engram.from_settings(home=tmp_path / "home", files={"dir": folder}, embeddings={"provider": "none"}) as mem:
        for given in (workspace, folder, folder / "global"):
            with pytest.raises(ValidationError) as refused:
                mem.import_from(given, kind)
            assert refused.value.field == "path"
            assert "engram's memory folder (files.dir" in str(refused.value)
            assert f"read as {kind} notes, each of their entries would be stored a second time" in str(refused.value)
        assert mem.count() == 0
    assert _files(workspace) == before
