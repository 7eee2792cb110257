"""Exporting into the memory folder engram syncs (``files.dir``), or a folder inside it, is
refused before anything is written: the folder already holds every memory. Written into it, a
markdown export replaced the mirror's file of the same name (a hand-written entry not yet synced
was lost), and a YAML, per-type JSON or basic-memory export left copies beside the mirror's files
that every sync then reported as not read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engram.engine import Engram
from engram.errors import ValidationError
from engram.exporters import basic_memory
from engram.files.export import export_folder
from engram.interfaces.cli.app import app

runner = CliRunner()
HAND = "- Hand-written, not synced yet: owns a cat\n"


def _cli(home: Path, folder: Path, *args: str, enabled: bool = True):
    env = {"ENGRAM_FILES__DIR": str(folder), "ENGRAM_FILES__ENABLED": "true" if enabled else "false",
           "ENGRAM_EMBEDDINGS__PROVIDER": "none", "COLUMNS": "400"}
    return runner.invoke(app, ["--home", str(home), *args], env=env)


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _mirrored(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A home with one memory the mirror wrote into its file, and an entry added there by hand since."""
    home, folder = tmp_path / "home", tmp_path / "memory"
    stored = _cli(home, folder, "remember", "Lives in Oslo")
    assert stored.exit_code == 0, stored.output
    [mirrored] = [p for p in folder.rglob("*.md")]
    with mirrored.open("a", encoding="utf-8") as f:
        f.write(HAND)
    return home, folder, mirrored


@pytest.mark.parametrize("fmt", ["markdown", "yaml", "json", "basic-memory"])
@pytest.mark.parametrize("inner", ["", "global", "exported"])
def test_cli_refuses_to_export_into_the_synced_folder_or_inside_it(tmp_path: Path, fmt: str, inner: str) -> None:
    home, folder, mirrored = _mirrored(tmp_path)
    given = folder / inner if inner else folder
    before = _files(folder)
    result = _cli(home, folder, "export", "--format", fmt, str(given))
    assert result.exit_code != 0, result.output
    assert isinstance(result.exception, ValidationError), result.output
    assert result.exception.field == "path"
    where = "is engram's memory folder (files.dir)" if not inner else f"is inside engram's memory folder (files.dir: {folder})"
    assert str(result.exception) == (f"path: {given} {where}: it already holds every memory; export to another folder "
                                     "(allowed: a folder outside engram's memory folder)")
    assert _files(folder) == before
    assert mirrored.read_text(encoding="utf-8").endswith(HAND)
    synced = _cli(home, folder, "sync")
    assert synced.exit_code == 0 and "not read" not in synced.output, synced.output
    assert json.loads(_cli(home, folder, "--json", "count").output) == {"count": 2}


@pytest.mark.parametrize("fmt", ["markdown", "basic-memory"])
def test_cli_exports_beside_the_synced_folder_and_into_it_while_files_are_off(tmp_path: Path, fmt: str) -> None:
    home, folder, mirrored = _mirrored(tmp_path)
    # A folder holding the memory folder: the export's files go beside memory/, which sync never reads.
    result = _cli(home, folder, "export", "--format", fmt, str(tmp_path))
    assert result.exit_code == 0, result.output
    assert mirrored.read_text(encoding="utf-8").endswith(HAND)
    # Files off: nothing mirrors into the folder, so it is a folder like another.
    off = _cli(home, folder, "export", "--format", fmt, str(folder / "out"), enabled=False)
    assert off.exit_code == 0, off.output
    assert any((folder / "out").rglob("*.md"))


def test_library_refuses_to_export_into_the_synced_folder(tmp_path: Path) -> None:
    folder = tmp_path / "memory"
    with Engram.from_settings(home=tmp_path / "home", files={"dir": folder}, embeddings={"provider": "none"}) as mem:
        mem.remember("Lives in Oslo")
        synced = mem.settings.files.synced_folder(mem.settings.home)  # type: ignore[union-attr]
        assert synced == folder
        before = _files(folder)
        for given in (folder, folder / "global", folder / "new"):
            with pytest.raises(ValidationError) as refused:
                export_folder(mem.list(), given, format="markdown", synced=synced)
            assert refused.value.field == "path" and "it already holds every memory" in str(refused.value)
            with pytest.raises(ValidationError) as refused:
                basic_memory.write(mem, given, synced=synced)
            assert refused.value.field == "path" and "it already holds every memory" in str(refused.value)
        assert _files(folder) == before
        assert export_folder(mem.list(), tmp_path / "out", format="markdown", synced=synced).memories == 1
        assert basic_memory.write(mem, tmp_path / "notes", synced=synced) == 1
