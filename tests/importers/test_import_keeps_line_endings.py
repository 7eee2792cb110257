"""Markdown notes written on Windows (``\\r\\n`` line endings) keep them: the part of a
basic-memory / Obsidian note or an OpenClaw fact an import stores is the file's own text, read
from disk or sent as a folder's files. The fixtures (``crlf/``, kept as ``\\r\\n`` by their
``.gitattributes``) are a basic-memory note with prose, observations and relations, an OpenClaw
workspace and a Clawless home, as those tools' files are on Windows.

Clawless's ``MEMORY.md`` is the exception by design: its notes become lines of engram's own
``MEMORY.md`` (``\\n``), once, whichever line endings the source had.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.config import load_settings
from engram.engine import Engram
from tests.importers.test_import_cli import FIXTURES

HERE = FIXTURES / "crlf"


def _engram(home: Path) -> Engram:
    return Engram.from_settings(load_settings(home=home, embeddings={"provider": "none"}))


def _files(folder: Path) -> dict[str, str]:
    """The folder as an HTTP client or a library caller sends it: each file's text, as its bytes say."""
    return {p.relative_to(folder).as_posix(): p.read_bytes().decode("utf-8")
            for p in sorted(folder.rglob("*")) if p.is_file() and not p.name.startswith(".")}


def test_the_fixtures_are_windows_files() -> None:
    for path in HERE.rglob("*.md"):
        data = path.read_bytes()
        assert b"\r\n" in data and data.count(b"\n") == data.count(b"\r\n"), path


@pytest.mark.parametrize("form", ["path", "files"])
def test_a_basic_memory_note_keeps_its_crlf(tmp_path: Path, form: str) -> None:
    source = HERE / "basic-memory"
    with _engram(tmp_path) as mem:
        summary = mem.import_from(source if form == "path" else _files(source), "basic-memory")
        assert (summary.kind, summary.imported) == ("basic-memory", 4), summary  # two notes, two observations
        assert mem.get("kitchen-renovation").content == (
            "The cabinets arrive in May.\r\nThe plumber comes the week after, see [[Budget]].\r\n\r\n"
            "    measured: 312 cm wall")
        assert mem.get("budget").content == "Spend at most 12,000 on the kitchen."
        observations = sorted(m.content for m in mem.list() if m.metadata["basic_memory"].get("category"))
        assert observations == ["Keep the old tiles behind the stove", "Open shelves instead of upper cabinets"]
        assert mem.import_from(source if form == "path" else _files(source), "basic-memory").skipped == 4


@pytest.mark.parametrize("form", ["path", "files"])
def test_an_openclaw_fact_keeps_its_crlf(tmp_path: Path, form: str) -> None:
    source = HERE / "openclaw"
    with _engram(tmp_path) as mem:
        summary = mem.import_from(source if form == "path" else _files(source), "openclaw")
        assert summary.imported == 3, summary
        assert sorted(m.content for m in mem.list()) == [
            "Deploys happen on Tuesdays\r\nand never on Fridays.", "Met the vendor about the new racks.",
            "The team picked PostgreSQL 16 for the orders service\r\nafter the load test in March."]


def test_an_openclaw_workspace_imported_before_as_lf_is_skipped_when_read_with_its_crlf(tmp_path: Path) -> None:
    # Imports before line endings were kept read a Windows file as \n: what they stored is the
    # same facts, found again by a re-import rather than stored twice.
    as_lf = {rel: text.replace("\r\n", "\n") for rel, text in _files(HERE / "openclaw").items()}
    with _engram(tmp_path) as mem:
        assert mem.import_from(as_lf, "openclaw").imported == 3
        again = mem.import_from(HERE / "openclaw", "openclaw")
        assert (again.imported, again.skipped) == (0, 3), again
        assert len(mem.list()) == 3


@pytest.mark.parametrize("form", ["path", "files"])
def test_clawless_operator_notes_join_engrams_memory_md_once(tmp_path: Path, form: str) -> None:
    source = HERE / "clawless"
    with _engram(tmp_path) as mem:
        first = mem.import_from(source if form == "path" else _files(source), "clawless")
        assert (first.operator_notes, first.messages_imported) == ("added", 2), first
        again = mem.import_from(source if form == "path" else _files(source), "clawless")
        assert (again.operator_notes, again.messages_skipped) == ("present", 2), again
    written = (tmp_path / "MEMORY.md").read_bytes().decode("utf-8")
    assert "- The operator's name is Priya.\n- Never schedule anything before 9am.\n" in written
    assert "\r" not in written and written.count("Imported from clawless") == 1
