"""An import that brings operator notes (a Clawless home's ``MEMORY.md``) appends them to engram's
own ``MEMORY.md`` last, after every memory and message is stored. A file there the notes cannot
join (not UTF-8 text, a directory in its place) refuses the whole import before its first write,
naming the file, what is wrong and what to do, and leaves the file as it was; a failure of the
append itself (the file changed while the import ran) is the summary's warning, not an exception
after half the import. Before, either raised a bare ``UnicodeDecodeError`` or ``IsADirectoryError``
once the memories and messages were stored (the CLI's "internal error").

Through ``Engram`` on a real SQLite home, and through the installed ``engram`` command. The plan of
the library tests holds memories (mem0's export: alex's and the importing agent's), conversation
messages and operator notes (the Clawless home's), so "nothing stored" covers all three."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from engram import importers
from engram.config import load_settings
from engram.engine import Engram
from engram.errors import ValidationError
from engram.importers.apply import apply_plan
from engram.importers.base import Plan
from tests.importers.test_import_cli import ENGRAM, FIXTURES, as_json

CLAWLESS = FIXTURES / "clawless"
NOT_UTF8 = b"# MEMORY.md\n\n- Caf\xe9 at nine\n"  # (Latin-1's é: offset 18, line 3)
AGENTS = ("default", "alex")


def open_home(home: Path, per_agent: bool) -> Engram:
    return Engram.from_settings(load_settings(home=home, embeddings={"provider": "none"},
                                              per_agent_databases=per_agent))


def everything() -> Plan:
    """mem0's memories with the Clawless home's conversation messages and operator notes."""
    plan = importers.read_plan("mem0", FIXTURES / "mem0.json")
    claw = importers.read_plan("clawless", CLAWLESS)
    plan.history, plan.operator_notes = claw.history, claw.operator_notes
    assert plan.records and plan.history and plan.operator_notes
    return plan


def assert_nothing_stored(mem: Engram, home: Path, per_agent: bool) -> None:
    for agent in AGENTS:
        view = mem.for_agent(agent, reading=True)
        assert (view.list(), view.history.conversations()) == ([], []), agent
    assert mem.stats().memories == 0
    if per_agent:  # no agent's database was made either
        assert not any((home / "agents" / agent).exists() for agent in AGENTS[1:])


@pytest.mark.parametrize("per_agent", [False, True], ids=["shared", "per-agent"])
def test_a_memory_md_not_utf8_refuses_the_import_before_any_write(tmp_path: Path, per_agent: bool) -> None:
    memory_md = tmp_path / "MEMORY.md"
    memory_md.write_bytes(NOT_UTF8)
    with open_home(tmp_path, per_agent) as mem:
        with pytest.raises(ValidationError) as refused:
            apply_plan(mem, everything())
        assert refused.value.field == str(memory_md)
        assert refused.value.problem.startswith("is not UTF-8 text (byte 0xe9 at offset 18, line 3)"), refused.value
        assert "nothing was imported" in refused.value.problem
        assert "engram import --into-agent" in (refused.value.allowed or ""), refused.value
        assert_nothing_stored(mem, tmp_path, per_agent)
        assert memory_md.read_bytes() == NOT_UTF8
        # Left out (``--into-agent``'s operator_notes=False), the same import goes through, the file untouched.
        skipped = apply_plan(mem, everything(), operator_notes=False)
        assert (skipped.imported, skipped.messages_imported, skipped.operator_notes) == (3, 6, "skipped"), skipped
        assert skipped.agents == AGENTS[::-1], skipped
    assert memory_md.read_bytes() == NOT_UTF8


@pytest.mark.parametrize("per_agent", [False, True], ids=["shared", "per-agent"])
def test_a_directory_in_memory_mds_place_refuses_the_import_before_any_write(tmp_path: Path, per_agent: bool) -> None:
    memory_md = tmp_path / "MEMORY.md"
    memory_md.mkdir()
    with open_home(tmp_path, per_agent) as mem:
        with pytest.raises(ValidationError) as refused:
            apply_plan(mem, everything())
        assert (refused.value.field, refused.value.problem.split(",")[0]) == (str(memory_md), "is a directory"), \
            refused.value
        assert_nothing_stored(mem, tmp_path, per_agent)
    assert memory_md.is_dir() and not any(memory_md.iterdir())


def test_the_cli_names_the_file_and_what_to_do_and_imports_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "MEMORY.md").write_bytes(NOT_UTF8)
    done = subprocess.run([ENGRAM, "--home", str(home), "import", str(CLAWLESS)],
                          capture_output=True, text=True, timeout=300)
    said = done.stderr
    assert done.returncode == 2, said
    assert said.startswith(f"error: {home / 'MEMORY.md'}: is not UTF-8 text (byte 0xe9 at offset 18, line 3)"), said
    assert "--into-agent" in said and "Traceback" not in said and "internal error" not in said, said
    assert as_json(home, "history", "list") == []
    assert (home / "MEMORY.md").read_bytes() == NOT_UTF8


def test_an_append_that_fails_after_the_check_is_a_warning_of_a_finished_import(tmp_path: Path) -> None:
    """The file fit when checked, and was made unreadable while the messages were stored (another
    editor's save, here the progress callback's): the import finishes, its summary says the notes
    failed and why, and the messages are there."""
    memory_md = tmp_path / "MEMORY.md"

    def meanwhile(phase: str, done: int, total: int) -> None:
        if phase == "history" and done == total:
            memory_md.write_bytes(NOT_UTF8)

    with open_home(tmp_path, False) as mem:
        summary = mem.import_from(CLAWLESS, "clawless", progress=meanwhile)
        assert (summary.messages_imported, summary.operator_notes) == (6, "failed"), summary
        [warning] = summary.warnings
        assert warning.startswith(f"operator notes not added to MEMORY.md: {memory_md} is not UTF-8 text"), warning
        assert len(mem.history.all("telegram:12345")) == 4
    assert memory_md.read_bytes() == NOT_UTF8


def test_the_check_of_a_missing_memory_md_creates_nothing(tmp_path: Path) -> None:
    """A home without the file passes (the append makes it from the template) and is left without
    it; one that cannot hold it is named."""
    from engram.files.memory_md import append_problem

    assert append_problem(tmp_path) is None and not (tmp_path / "MEMORY.md").exists()
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    assert append_problem(tmp_path / "a-file" / "home") == f"cannot be created: {tmp_path / 'a-file'} is not a folder"
