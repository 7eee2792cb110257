"""An entry moved by hand (cut with its id marker from one scope's folder and pasted into another's)
makes the memory the destination scope's, under its id, whichever way the folders sort. The CLI
in-process against a real home (real SQLite file, real files).

Review: a pass settles scope folders in the order ``agent:* < global < session:*``, and only a move
into a folder settled later changed the memory's owner. Moved into a folder settled earlier
(``agents/bob/`` -> ``agents/alice/``, ``global/`` -> ``agents/alice/``), the entry was first met as a
memory forgotten in the database and taken out of its new file, then written back into its old
folder as a memory missing there: the move was silently undone."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.cli_in_process import cli_output
from tests.files.conftest import entry_block, with_copy

CONTENT = "the moved fact: café\tand <!-- marker"
# Where a memory of each scope is remembered from, and its folder.
WHO = {
    "alice": (("--agent", "alice"), ("--scope", "agent"), "agents/alice"),
    "bob": (("--agent", "bob"), ("--scope", "agent"), "agents/bob"),
    "global": (("--agent", "alice"), ("--scope", "global"), "global"),
    "session": (("--agent", "alice", "--session", "s1"), ("--scope", "session"), "sessions/alice/s1"),
}
SCOPE = {"alice": "agent:alice", "bob": "agent:bob", "global": "global", "session": "session:alice/s1"}
MOVES = [("bob", "alice"), ("alice", "bob"), ("global", "alice"), ("alice", "global"),
         ("alice", "session"), ("session", "alice")]


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("ENGRAM_EMBEDDINGS__PROVIDER", "none")
    monkeypatch.setenv("COLUMNS", "400")
    monkeypatch.delenv("ENGRAM_AGENT", raising=False)
    return tmp_path / "home"


def _remember(home: Path, where: str, content: str = CONTENT, key: str = "moved") -> str:
    """A memory of ``where``'s scope, mirrored to its folder (``notes.md``, and a neighbour entry
    so the file stays when the moved one leaves it); returns its id."""
    view, scope, _ = WHO[where]
    cli_output(home, *view, "remember", content, "--key", key, "--tags", "notes", *scope)
    cli_output(home, *view, "remember", f"a neighbour in {where}", "--key", f"stays-{where}", "--tags", "notes", *scope)
    return json.loads(cli_output(home, *view, "--json", "get", key))["id"]


def _rows(db: Path) -> dict[str, tuple[str, str]]:
    """id -> (scope, content) of every memory in the SQLite file ``db``."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT id, agent, session, content FROM memories").fetchall()
    return {i: ("global" if not agent else f"agent:{agent}" if not session else f"session:{agent}/{session}", content)
            for i, agent, session, content in rows}


def _move(home: Path, memory_id: str, source: str, target: str, keep: bool = False, name: str = "notes.md") -> None:
    """Cut (or, ``keep``, copy) the entry ``memory_id`` from ``source``'s file ``name`` into ``target``'s."""
    src, dst = home / "memory" / WHO[source][2] / name, home / "memory" / WHO[target][2] / name
    text = src.read_text(encoding="utf-8")
    block = entry_block(text, memory_id)
    if not keep:
        src.write_text(text.replace("\n".join(block) + "\n", ""), encoding="utf-8")
    dst.write_text(with_copy(dst.read_text(encoding="utf-8"), block), encoding="utf-8")


def _quiet(home: Path, *view: str) -> None:
    again = json.loads(cli_output(home, *view, "--json", "sync"))
    assert again["to_database"] == {"created": 0, "updated": 0, "forgotten": 0}
    assert again["to_files"] == {"added": 0, "updated": 0, "removed": 0, "files_written": []}
    assert again["conflicts"] == again["problems"] == []


@pytest.mark.parametrize(("source", "target"), MOVES, ids=[f"{s}-to-{t}" for s, t in MOVES])
def test_a_moved_entry_makes_the_memory_its_new_folders_whichever_way_the_folders_sort(
        home: Path, source: str, target: str) -> None:
    memory_id = _remember(home, source)
    _remember(home, target, "the target's own fact", key="own")
    _move(home, memory_id, source, target)

    report = json.loads(cli_output(home, "--json", "sync"))

    rows = _rows(home / "memory.db")
    assert rows[memory_id] == (SCOPE[target], CONTENT)
    assert sum(content == CONTENT for _, content in rows.values()) == 1
    assert memory_id not in (home / "memory" / WHO[source][2] / "notes.md").read_text(encoding="utf-8")
    assert memory_id in (home / "memory" / WHO[target][2] / "notes.md").read_text(encoding="utf-8")
    assert report["conflicts"] == [] and report["problems"] == []
    assert not list(home.glob("memory/**/*.conflict"))
    _quiet(home)


@pytest.mark.parametrize(("source", "target"), [("bob", "alice"), ("global", "alice")])
def test_a_moved_yaml_entry_makes_the_memory_its_new_folders(home: Path, monkeypatch: pytest.MonkeyPatch,
                                                            source: str, target: str) -> None:
    monkeypatch.setenv("ENGRAM_FILES__FORMAT", "yaml")
    memory_id = _remember(home, source)
    _remember(home, target, "the target's own fact", key="own")
    _move(home, memory_id, source, target, name="notes.yaml")

    cli_output(home, "sync")

    assert _rows(home / "memory.db")[memory_id] == (SCOPE[target], CONTENT)
    assert memory_id not in (home / "memory" / WHO[source][2] / "notes.yaml").read_text(encoding="utf-8")
    assert memory_id in (home / "memory" / WHO[target][2] / "notes.yaml").read_text(encoding="utf-8")
    _quiet(home)


@pytest.mark.parametrize(("source", "target"), MOVES, ids=[f"{s}-to-{t}" for s, t in MOVES])
def test_a_copied_entry_leaves_its_new_folder_and_the_memory_stays_where_it_was(
        home: Path, source: str, target: str) -> None:
    memory_id = _remember(home, source)
    _remember(home, target, "the target's own fact", key="own")
    _move(home, memory_id, source, target, keep=True)

    report = json.loads(cli_output(home, "--json", "sync"))

    assert _rows(home / "memory.db")[memory_id] == (SCOPE[source], CONTENT)
    assert memory_id in (home / "memory" / WHO[source][2] / "notes.md").read_text(encoding="utf-8")
    assert memory_id not in (home / "memory" / WHO[target][2] / "notes.md").read_text(encoding="utf-8")
    assert report["to_database"] == {"created": 0, "updated": 0, "forgotten": 0}
    assert report["to_files"]["removed"] == 1 and report["conflicts"] == []
    _quiet(home)


@pytest.mark.parametrize(("source", "target"), [("bob", "alice"), ("alice", "bob")])
def test_an_entry_moved_and_edited_takes_its_edit_to_its_new_folder(home: Path, source: str, target: str) -> None:
    memory_id = _remember(home, source)
    _remember(home, target, "the target's own fact", key="own")
    _move(home, memory_id, source, target)
    dst = home / "memory" / WHO[target][2] / "notes.md"
    dst.write_text(dst.read_text(encoding="utf-8").replace("café", "crème"), encoding="utf-8")

    cli_output(home, "sync")

    assert _rows(home / "memory.db")[memory_id] == (SCOPE[target], CONTENT.replace("café", "crème"))
    _quiet(home)


def test_an_entry_whose_old_file_cannot_be_read_is_not_taken_for_moved(home: Path) -> None:
    """bob's file no longer UTF-8 (so not read, and reported): nothing says the entry left it, so
    the entry pasted into alice's folder does not take bob's memory over; it stays bob's, as it is."""
    memory_id = _remember(home, "bob")
    _remember(home, "alice", "the target's own fact", key="own")
    _move(home, memory_id, "bob", "alice")
    bob_notes = home / "memory/agents/bob/notes.md"
    bob_notes.write_bytes(bob_notes.read_bytes() + b"- caf\xe9 in Latin-1\n")

    report = json.loads(cli_output(home, "--json", "sync"))

    assert _rows(home / "memory.db")[memory_id] == ("agent:bob", CONTENT)
    assert report["to_database"]["forgotten"] == 0
    assert any("agents/bob/notes.md" in problem and "UTF-8" in problem for problem in report["problems"])


def test_an_entry_moved_within_its_folder_and_copied_out_is_a_copy(home: Path) -> None:
    """The entry left its recorded file for another file of bob's folder, and a copy went to alice's:
    bob's folder still holds it, so the copy leaves alice's folder (bob's folder is read whole)."""
    memory_id = _remember(home, "bob")
    _remember(home, "alice", "the target's own fact", key="own")
    bob_notes = home / "memory/agents/bob/notes.md"
    text = bob_notes.read_text(encoding="utf-8")
    block = entry_block(text, memory_id)
    bob_notes.write_text(text.replace("\n".join(block) + "\n", ""), encoding="utf-8")
    (home / "memory/agents/bob/other.md").write_text("# Other\n\n" + "\n".join(block) + "\n", encoding="utf-8")
    alice_notes = home / "memory/agents/alice/notes.md"
    alice_notes.write_text(with_copy(alice_notes.read_text(encoding="utf-8"), block), encoding="utf-8")

    cli_output(home, "sync")

    assert _rows(home / "memory.db")[memory_id] == ("agent:bob", CONTENT)
    assert memory_id in (home / "memory/agents/bob/other.md").read_text(encoding="utf-8")
    assert memory_id not in alice_notes.read_text(encoding="utf-8")
    _quiet(home)
