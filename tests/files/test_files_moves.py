"""An entry moved by hand (cut with its id marker from one scope's folder and pasted into another's)
makes the memory the destination scope's, under its id, whichever way the folders sort. The CLI
in-process against a real home (real SQLite file, real files).

The memory is moved in place (``MemoryStore.move``): its id, versions, recall count, vector and the
links it may keep stay, and the audit trail says it moved, once; before, a move was a forget in the
old scope and an import of the entry in the new one (versions and vector lost, a forget recorded),
and a memory moved back to a scope it had been "forgotten" from came back under a new id.

Review: a pass settles scope folders in the order ``agent:* < global < session:*``, and only a move
into a folder settled later changed the memory's owner. Moved into a folder settled earlier
(``agents/bob/`` -> ``agents/alice/``, ``global/`` -> ``agents/alice/``), the entry was first met as a
memory forgotten in the database and taken out of its new file, then written back into its old
folder as a memory missing there: the move was silently undone."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from click.testing import Result

from engram.engine import Engram
from engram.errors import ValidationError
from engram.files.paths import Folder
from engram.files.sync import FileSync
from engram.ids import new_id
from engram.interfaces.cli.app import app
from engram.model import Memory, Scope
from engram.store.base import move_one
from engram.store.sqlite import SqliteMemoryStore
from engram.testing.fakes import HashingEmbedder
from tests.cli_in_process import cli_output, runner
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
    assert again["to_database"] == {"created": 0, "updated": 0, "forgotten": 0, "moved": 0}
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
    assert report["to_database"] == {"created": 0, "updated": 0, "forgotten": 0, "moved": 0}
    assert report["to_files"]["removed"] == 1 and report["conflicts"] == []
    _quiet(home)


@pytest.mark.parametrize(("source", "target"), [("bob", "alice"), ("alice", "bob"), ("global", "alice")])
def test_an_entry_moved_and_edited_takes_its_edit_to_its_new_folder_keeping_the_old_text_as_a_version(
        home: Path, source: str, target: str) -> None:
    memory_id = _remember(home, source)
    _remember(home, target, "the target's own fact", key="own")
    _move(home, memory_id, source, target)
    dst = home / "memory" / WHO[target][2] / "notes.md"
    dst.write_text(dst.read_text(encoding="utf-8").replace("café", "crème"), encoding="utf-8")

    report = json.loads(cli_output(home, "--json", "sync"))

    assert _rows(home / "memory.db")[memory_id] == (SCOPE[target], CONTENT.replace("café", "crème"))
    assert report["to_database"] == {"created": 0, "updated": 1, "forgotten": 0, "moved": 1}
    got = json.loads(cli_output(home, *WHO[target][0], "--json", "get", memory_id))
    assert [v["content"] for v in got["versions"]] == [CONTENT]
    _quiet(home)


def _audit_actions(db: Path, memory_id: str) -> list[tuple[str, str | None, dict | None]]:
    """(action, memory scope, detail) of every audit row about ``memory_id``, oldest first."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT action, memory_scope, detail FROM audit_log WHERE memory_id = ? ORDER BY seq",
                            (memory_id,)).fetchall()
    return [(action, scope, json.loads(detail) if detail else None) for action, scope, detail in rows]


@pytest.mark.parametrize(("source", "target"), MOVES, ids=[f"{s}-to-{t}" for s, t in MOVES])
def test_a_moved_entry_keeps_its_memory_in_place_and_the_audit_trail_says_it_moved(
        home: Path, source: str, target: str) -> None:
    view, scope, _ = WHO[source]
    cli_output(home, *view, "remember", "the earlier fact", "--key", "moved", "--tags", "notes", *scope)
    memory_id = _remember(home, source)  # the same key: the earlier text becomes a version
    cli_output(home, *view, "recall", "moved fact")
    # The recall strengthened it (importance) unseen by the folder: synced before the move, or the
    # entry's absence from bob's folder is not taken for a move (nor a removal), as any change since.
    cli_output(home, "sync")
    before = json.loads(cli_output(home, *view, "--json", "get", memory_id))
    assert before["recall_count"] == 1
    _remember(home, target, "the target's own fact", key="own")
    _move(home, memory_id, source, target)

    report = json.loads(cli_output(home, "--json", "sync"))

    assert report["to_database"] == {"created": 0, "updated": 0, "forgotten": 0, "moved": 1}
    after = json.loads(cli_output(home, *WHO[target][0], "--json", "get", memory_id))
    assert after["scope"] == SCOPE[target]
    kept = ("id", "key", "content", "created_at", "updated_at", "last_accessed", "recall_count", "importance")
    assert {k: after[k] for k in kept} == {k: before[k] for k in kept}
    assert [v["content"] for v in after["versions"]] == ["the earlier fact"]
    trail = _audit_actions(home / "memory.db", memory_id)
    assert [action for action, _, _ in trail] == ["stored", "updated", "moved"]
    assert trail[-1][1:] == (SCOPE[target], {"from": SCOPE[source], "to": SCOPE[target]})
    # The new owner reads the move in its trail, by every door's action filter.
    seen = json.loads(cli_output(home, *WHO[target][0], "--json", "audit", "--action", "moved"))
    # Another agent's scope is not named to it (``visibility.without_others_names``): bob's to alice, alice's to bob.
    left = "another agent" if {source, target} == {"alice", "bob"} else SCOPE[source]
    assert [(e["memory_id"], e["detail"]) for e in seen] == [(memory_id, {"from": left, "to": SCOPE[target]})]
    assert "moved by hand" in seen[0]["reason"]
    _quiet(home)


def test_an_entry_moved_there_and_back_keeps_its_id(home: Path) -> None:
    """A move is not a forget: moved back into bob's folder, the entry is bob's memory again under its
    id (bob's earlier "forget" had made the import skip it, and the entry came back as a new memory)."""
    memory_id = _remember(home, "bob")
    _remember(home, "alice", "the target's own fact", key="own")
    _move(home, memory_id, "bob", "alice")
    cli_output(home, "sync")
    _move(home, memory_id, "alice", "bob")

    report = json.loads(cli_output(home, "--json", "sync"))

    rows = _rows(home / "memory.db")
    assert rows[memory_id] == ("agent:bob", CONTENT)
    assert sum(content == CONTENT for _, content in rows.values()) == 1
    assert report["to_database"] == {"created": 0, "updated": 0, "forgotten": 0, "moved": 1}
    assert [a for a, _, _ in _audit_actions(home / "memory.db", memory_id)] == ["stored", "moved", "moved"]
    _quiet(home)


def test_a_moved_entry_whose_key_the_new_scope_holds_gets_a_free_key(home: Path) -> None:
    memory_id = _remember(home, "bob")
    alices = _remember(home, "alice", "alice's own fact under the same key")  # key "moved" too
    _move(home, memory_id, "bob", "alice")

    said = cli_output(home, "sync")

    assert json.loads(cli_output(home, "--agent", "alice", "--json", "get", memory_id))["key"] == "moved-2"
    assert json.loads(cli_output(home, "--agent", "alice", "--json", "get", "moved"))["id"] == alices
    assert "key:moved-2" in (home / "memory/agents/alice/notes.md").read_text(encoding="utf-8")
    # A note on a move that was made, not "skipped:" (it read as if the move had not happened).
    assert "note: agents/alice/notes.md:" in said and 'its key is now "moved-2"' in said and "skipped:" not in said, said
    _quiet(home)


@pytest.mark.parametrize("other", ["bob", "aaron"])  # aaron's folder is settled before alice's, bob's after
def test_a_move_keeps_the_links_it_may_and_drops_those_joining_two_agents(home: Path, other: str) -> None:
    """A global memory linked to one of ``other``'s and to a global one, moved into alice's folder:
    the global link stays; the link to the other agent's memory goes, from both entries, in one pass."""
    memory_id = _remember(home, "global")
    cli_output(home, "--agent", other, "remember", "the other agent's linked fact", "--key", "theirs", "--tags", "notes")
    cli_output(home, "--agent", "alice", "remember", "a global neighbour", "--key", "near", "--tags", "notes",
               "--scope", "global")
    cli_output(home, "--agent", other, "link", memory_id, "theirs")
    cli_output(home, "--agent", "alice", "link", memory_id, "near")
    theirs = json.loads(cli_output(home, "--agent", other, "--json", "get", "theirs"))["id"]
    near = json.loads(cli_output(home, "--agent", "alice", "--json", "get", "near"))["id"]
    _remember(home, "alice", "the target's own fact", key="own")
    _move(home, memory_id, "global", "alice")

    report = json.loads(cli_output(home, "--json", "sync"))

    moved = json.loads(cli_output(home, "--agent", "alice", "--json", "get", memory_id))
    assert moved["scope"] == "agent:alice" and moved["links"] == [near]
    assert json.loads(cli_output(home, "--agent", other, "--json", "get", "theirs"))["links"] == []
    assert memory_id not in (home / f"memory/agents/{other}/notes.md").read_text(encoding="utf-8")
    assert memory_id in (home / "memory/global/notes.md").read_text(encoding="utf-8")  # near's entry lists it
    alice_notes = (home / "memory/agents/alice/notes.md").read_text(encoding="utf-8")
    assert theirs not in alice_notes and near in alice_notes
    assert [p for p in report["problems"] if theirs in p] == [
        f"agents/alice/notes.md:{_line_of(alice_notes, memory_id)}: entry {memory_id}: link to \"{theirs}\" is taken out of"
        " the file: the entry moved to agent:alice, and a link never joins two agents' memories"]
    _quiet(home)


def test_two_linked_memories_moved_into_two_folders_of_one_agent_keep_their_link(home: Path) -> None:
    """bob's two linked facts, one pasted into alice's folder, the other into her session's: moved,
    the link joins two of alice's memories, which it may. Alice's folder is settled first: her pass
    moved its entry alone, judged the link against the other end's old agent (bob's) and cut it,
    before the session's pass moved that end too. Moved in one group, the link stays."""
    bob = ("--agent", "bob")
    here = _remember(home, "bob", "the fact pasted to alice", key="here")
    cli_output(home, *bob, "remember", "the fact pasted to her session", "--key", "there", "--tags", "notes")
    there = json.loads(cli_output(home, *bob, "--json", "get", "there"))["id"]
    cli_output(home, *bob, "link", here, there)
    _remember(home, "alice", "the target's own fact", key="own")
    _remember(home, "session", "a session note", key="own-session")
    cli_output(home, "sync")
    _move(home, here, "bob", "alice")
    _move(home, there, "bob", "session")

    report = json.loads(cli_output(home, "--json", "sync"))

    assert report["to_database"] == {"created": 0, "updated": 0, "forgotten": 0, "moved": 2}
    assert report["problems"] == [] and report["conflicts"] == []
    rows = _rows(home / "memory.db")
    assert rows[here][0] == "agent:alice" and rows[there][0] == "session:alice/s1"
    session = ("--agent", "alice", "--session", "s1")
    assert json.loads(cli_output(home, *session, "--json", "get", here))["links"] == [there]
    assert json.loads(cli_output(home, *session, "--json", "get", there))["links"] == [here]
    assert there in (home / "memory/agents/alice/notes.md").read_text(encoding="utf-8")
    assert here in (home / "memory/sessions/alice/s1/notes.md").read_text(encoding="utf-8")
    _quiet(home)


def _line_of(text: str, entry_id: str) -> int:
    return next(n for n, line in enumerate(text.split("\n"), start=1) if f"id:{entry_id}" in line)


def test_a_moved_entry_keeps_its_vector_on_a_real_sqlite_file(tmp_path: Path) -> None:
    """The library on a real SQLite file: the vector stored for the memory (not the one its text would
    give again) is the one it has in its new scope, and nothing is embedded again."""
    embedder = HashingEmbedder()
    with Engram.from_settings(home=tmp_path / "home", files={"enabled": False}) as engram:
        engram.embedder = embedder
        syncer = FileSync(engram, tmp_path / "home" / "memory")
        syncer.attach()
        try:
            bob = engram.for_agent("bob")
            memory = bob.remember("bob's boiler note", key="boiler", tags=["notes"]).memory
            bob.remember("bob keeps this one", key="stays", tags=["notes"])
            engram.for_agent("alice").remember("alice's own", key="own", tags=["notes"])
            own_vector = np.linspace(-1, 1, embedder.identity.dims).astype(np.float32)
            engram.store.set_vectors(str(embedder.identity), [(memory.id, own_vector)])
            embedded = embedder.calls
            src, dst = tmp_path / "home/memory/agents/bob/notes.md", tmp_path / "home/memory/agents/alice/notes.md"
            block = entry_block(src.read_text(encoding="utf-8"), memory.id)
            src.write_text(src.read_text(encoding="utf-8").replace("\n".join(block) + "\n", ""), encoding="utf-8")
            dst.write_text(with_copy(dst.read_text(encoding="utf-8"), block), encoding="utf-8")

            report = syncer.sync()

            assert report.db_moved == 1 and report.db_forgotten == report.db_created == 0
            assert engram.store.get_many([memory.id])[0].scope.agent == "alice"
            assert np.allclose(engram.store.vectors_for([memory.id])[memory.id], own_vector)
            assert embedder.calls == embedded
            assert [h.memory.id for h in engram.for_agent("alice").recall("boiler note", touch=False).hits][:1] == [memory.id]
            assert not syncer.sync().changed
        finally:
            syncer.detach()


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


class StoreBeforeMove(SqliteMemoryStore):
    """A plug-in store written before ``MemoryStore.move`` (and ``move_many``)."""

    def __getattribute__(self, name: str) -> object:
        if name in ("move", "move_many"):
            raise AttributeError(name)
        return super().__getattribute__(name)


class StoreBeforeMoveMany(SqliteMemoryStore):
    """A plug-in store written before ``MemoryStore.move_many``: it moves one memory at a time."""

    def __getattribute__(self, name: str) -> object:
        if name == "move_many":
            raise AttributeError(name)
        return super().__getattribute__(name)

    def move(self, memory_id: str, scope: Scope) -> Memory | None:
        return move_one(SqliteMemoryStore.move_many(self, {memory_id: scope}), memory_id)


def test_a_store_that_cannot_move_reports_the_entry_and_loses_nothing(tmp_path: Path) -> None:
    # The pass failed on Python's AttributeError, every other change of the folder left unsynced.
    engram = Engram(StoreBeforeMove(tmp_path / "memory.db"), agent="alice")
    syncer = FileSync(engram, tmp_path / "memory")
    syncer.attach()
    try:
        bob = engram.for_agent("bob")
        memory = bob.remember("bob's boiler note", key="boiler", tags=["notes"]).memory
        bob.remember("bob keeps this one", key="stays", tags=["notes"])
        engram.remember("alice's own", key="own", tags=["notes"])
        src, dst = tmp_path / "memory/agents/bob/notes.md", tmp_path / "memory/agents/alice/notes.md"
        block = entry_block(src.read_text(encoding="utf-8"), memory.id)
        src.write_text(src.read_text(encoding="utf-8").replace("\n".join(block) + "\n", ""), encoding="utf-8")
        dst.write_text(with_copy(dst.read_text(encoding="utf-8"), block), encoding="utf-8")
        (tmp_path / "memory/agents/alice/more.md").write_text("- alice's hand-written note\n", encoding="utf-8")

        report = syncer.sync()

        assert any("cannot move a memory" in p.message and memory.id in p.message for p in report.problems)
        assert report.db_created == 1  # the rest of the folder still synced
        kept = engram.store.get_many([memory.id])[0]
        assert (kept.scope.agent, kept.content) == ("bob", "bob's boiler note")
        assert syncer.sync().db_forgotten == 0  # and the next pass does not forget it either
    finally:
        syncer.detach()
        engram.close()


@pytest.mark.parametrize("end", ["successor", "superseded"])
def test_a_move_that_would_hide_a_successor_from_the_memory_it_supersedes_is_refused(home: Path, end: str) -> None:
    """bob's "old" is superseded by his "new". Moved into alice's folder, either end was moved: bob's
    fact stayed out of his recall, retired by a memory of alice's (its id in his ``superseded_by``),
    or alice's moved fact named bob's memory as its successor. The move is refused, said, and undone
    in the files; nothing changes in the database."""
    bob = ("--agent", "bob")
    cli_output(home, *bob, "remember", "the boiler is grey", "--key", "old", "--tags", "notes")
    cli_output(home, *bob, "remember", "the boiler is red", "--key", "new", "--tags", "notes")
    _remember(home, "alice", "the target's own fact", key="own")
    cli_output(home, *bob, "supersede", "old", "new")
    cli_output(home, "sync")
    ids = {k: json.loads(cli_output(home, *bob, "--json", "get", k))["id"] for k in ("old", "new")}
    moved = ids["new" if end == "successor" else "old"]
    _move(home, moved, "bob", "alice")

    report = json.loads(cli_output(home, "--json", "sync"))

    rows = _rows(home / "memory.db")
    assert rows[ids["old"]][0] == rows[ids["new"]][0] == "agent:bob"
    assert report["to_database"]["moved"] == 0
    assert [p for p in report["problems"] if f"entry {moved} not moved" in p and "cannot see" in p], report["problems"]
    assert moved in (home / "memory/agents/bob/notes.md").read_text(encoding="utf-8")
    assert moved not in (home / "memory/agents/alice/notes.md").read_text(encoding="utf-8")
    _quiet(home)
    assert "the boiler is red" in cli_output(home, *bob, "recall", "boiler")


@pytest.mark.parametrize("target", ["alice", "global"])
def test_a_refused_move_is_back_in_its_old_folder_after_the_sync_whichever_way_the_folders_sort(
        home: Path, target: str) -> None:
    """bob's superseded "old" moved alone into a folder that cannot see his "new" is refused. Into
    ``agents/alice/`` (settled before bob's) the refused entry was taken out of alice's folder and
    written back into bob's by his pass. Into ``global/`` (settled after bob's), bob's pass left the
    entry for that folder's pass, which refused the move and took the entry out: it was in neither
    folder's file until the next sync put it back. Either way it is now back in bob's folder after
    the sync that refused it, said with the way out, and nothing changed in the database."""
    bob = ("--agent", "bob")
    cli_output(home, *bob, "remember", "the boiler is grey", "--key", "old", "--tags", "notes")
    cli_output(home, *bob, "remember", "the boiler is red", "--key", "new", "--tags", "notes")
    _remember(home, target, "the target's own fact", key="own")
    cli_output(home, *bob, "supersede", "old", "new")
    cli_output(home, "sync")
    old = json.loads(cli_output(home, *bob, "--json", "get", "old"))["id"]
    rows = _rows(home / "memory.db")
    _move(home, old, "bob", target)

    report = json.loads(cli_output(home, "--json", "sync"))

    said = [p for p in report["problems"] if f"entry {old} not moved" in p]
    assert len(said) == 1 and "cannot see" in said[0] and "move the memories it supersedes" in said[0], report["problems"]
    assert report["to_database"]["moved"] == report["to_database"]["forgotten"] == 0
    assert report["to_files"]["added"] == report["to_files"]["removed"] == 1
    assert old in (home / "memory/agents/bob/notes.md").read_text(encoding="utf-8")
    assert old not in (home / f"memory/{WHO[target][2]}/notes.md").read_text(encoding="utf-8")
    assert _rows(home / "memory.db") == rows
    _quiet(home)
    assert old in (home / "memory/agents/bob/notes.md").read_text(encoding="utf-8")


def _superseded_pair(home: Path) -> dict[str, str]:
    """bob's "old" superseded by his "new" (and alice's own fact), synced; their ids by key."""
    bob = ("--agent", "bob")
    cli_output(home, *bob, "remember", "the boiler is grey", "--key", "old", "--tags", "notes")
    cli_output(home, *bob, "remember", "the boiler is red", "--key", "new", "--tags", "notes")
    cli_output(home, *bob, "remember", "bob keeps this one", "--key", "stays", "--tags", "notes")
    _remember(home, "alice", "the target's own fact", key="own")
    cli_output(home, *bob, "supersede", "old", "new")
    cli_output(home, "sync")
    return {k: json.loads(cli_output(home, *bob, "--json", "get", k))["id"] for k in ("old", "new")}


def test_a_superseded_memory_and_its_successor_moved_together_are_moved_as_one(home: Path) -> None:
    """Both entries cut from bob's folder and pasted into alice's: each move was checked alone,
    against the other's old scope, so both were refused (and the docs told people to paste them
    without their markers, losing their ids, versions and history). Moved as one, alice's "old"
    stays superseded by her "new"."""
    ids = _superseded_pair(home)
    for moved in (ids["old"], ids["new"]):
        _move(home, moved, "bob", "alice")

    report = json.loads(cli_output(home, "--json", "sync"))

    assert report["to_database"] == {"created": 0, "updated": 0, "forgotten": 0, "moved": 2}
    assert report["problems"] == [] and report["conflicts"] == []
    rows = _rows(home / "memory.db")
    assert rows[ids["old"]] == ("agent:alice", "the boiler is grey") and rows[ids["new"]] == ("agent:alice", "the boiler is red")
    old = json.loads(cli_output(home, "--agent", "alice", "--json", "get", ids["old"]))
    assert old["superseded_by"] == ids["new"]
    alice_notes = (home / "memory/agents/alice/notes.md").read_text(encoding="utf-8")
    assert ids["old"] in alice_notes and ids["new"] in alice_notes
    bob_notes = (home / "memory/agents/bob/notes.md").read_text(encoding="utf-8")
    assert ids["old"] not in bob_notes and ids["new"] not in bob_notes
    _quiet(home)
    assert "the boiler is red" in cli_output(home, "--agent", "alice", "recall", "boiler")
    assert "the boiler is red" not in cli_output(home, "--agent", "bob", "recall", "boiler")


def test_a_superseded_memory_and_its_successor_moved_into_two_folders_are_moved_as_one(home: Path) -> None:
    """bob's "old" pasted into alice's session folder, his "new" into alice's own: a session's memory
    may be superseded by its agent's, which it sees. Each folder's pass moved its own entries, each
    checked against the other's old scope (bob's, which neither alice nor her session sees), so
    both were refused at every pass. Moved as one, alice's session fact stays superseded by hers."""
    ids = _superseded_pair(home)
    _remember(home, "session", "a session note", key="own-session")
    _move(home, ids["old"], "bob", "session")
    _move(home, ids["new"], "bob", "alice")

    report = json.loads(cli_output(home, "--json", "sync"))

    assert report["problems"] == [] and report["conflicts"] == []
    assert report["to_database"] == {"created": 0, "updated": 0, "forgotten": 0, "moved": 2}
    rows = _rows(home / "memory.db")
    assert rows[ids["old"]] == ("session:alice/s1", "the boiler is grey")
    assert rows[ids["new"]] == ("agent:alice", "the boiler is red")
    session = ("--agent", "alice", "--session", "s1")
    assert json.loads(cli_output(home, *session, "--json", "get", ids["old"]))["superseded_by"] == ids["new"]
    assert ids["old"] in (home / "memory/sessions/alice/s1/notes.md").read_text(encoding="utf-8")
    assert ids["new"] in (home / "memory/agents/alice/notes.md").read_text(encoding="utf-8")
    bob_notes = (home / "memory/agents/bob/notes.md").read_text(encoding="utf-8")
    assert ids["old"] not in bob_notes and ids["new"] not in bob_notes
    _quiet(home)
    recalled = cli_output(home, *session, "recall", "boiler")
    assert "the boiler is red" in recalled and "the boiler is grey" not in recalled


def test_a_pair_pasted_into_two_folders_where_the_superseded_one_cannot_see_its_successor_is_refused(home: Path) -> None:
    """bob's "old" pasted into ``global/``, his "new" into alice's folder: moved together or not, a
    global memory would be superseded by alice's, which not everyone who reads it sees. Both are
    refused, said with the way out, and put back in bob's folder by the sync that refused them ("old"
    too, whose folder is settled after bob's: it was in neither folder until the next pass); nothing
    changes in the database."""
    ids = _superseded_pair(home)
    _remember(home, "global", "a global note", key="own-global")
    _move(home, ids["old"], "bob", "global")
    _move(home, ids["new"], "bob", "alice")

    report = json.loads(cli_output(home, "--json", "sync"))

    assert report["to_database"]["moved"] == 0
    for moved in ids.values():
        said = [p for p in report["problems"] if f"entry {moved} not moved" in p]
        assert len(said) == 1 and "cannot see" in said[0] and "move the memories it supersedes" in said[0], report["problems"]
    rows = _rows(home / "memory.db")
    assert rows[ids["old"]][0] == rows[ids["new"]][0] == "agent:bob"
    bob_notes = (home / "memory/agents/bob/notes.md").read_text(encoding="utf-8")
    assert ids["old"] in bob_notes and ids["new"] in bob_notes
    _quiet(home)
    assert _rows(home / "memory.db") == rows


def test_a_store_without_move_many_moves_each_entry_alone_and_loses_nothing(tmp_path: Path) -> None:
    """A plug-in store written before ``move_many`` still moves entries, one at a time: a pair moved
    together is then refused (each checked alone), reported, and kept bob's."""
    engram = Engram(StoreBeforeMoveMany(tmp_path / "memory.db"), agent="alice")
    syncer = FileSync(engram, tmp_path / "memory")
    syncer.attach()
    try:
        bob = engram.for_agent("bob")
        old = bob.remember("the boiler is grey", key="old", tags=["notes"]).memory
        new = bob.remember("the boiler is red", key="new", tags=["notes"]).memory
        lone = bob.remember("bob's tap note", key="tap", tags=["notes"]).memory
        bob.remember("bob keeps this one", key="stays", tags=["notes"])
        engram.remember("alice's own", key="own", tags=["notes"])
        bob.supersede(old.id, new.id)
        syncer.sync()
        src, dst = tmp_path / "memory/agents/bob/notes.md", tmp_path / "memory/agents/alice/notes.md"
        for memory in (old, new, lone):
            block = entry_block(src.read_text(encoding="utf-8"), memory.id)
            src.write_text(src.read_text(encoding="utf-8").replace("\n".join(block) + "\n", ""), encoding="utf-8")
            dst.write_text(with_copy(dst.read_text(encoding="utf-8"), block), encoding="utf-8")

        report = syncer.sync()

        assert report.db_moved == 1 and engram.store.get_many([lone.id])[0].scope.agent == "alice"
        assert {m.id: m.scope.agent for m in engram.store.get_many([old.id, new.id])} == {old.id: "bob", new.id: "bob"}
        assert sum("cannot see" in p.message for p in report.problems) == 2, report.problems
        assert syncer.sync().db_forgotten == 0
    finally:
        syncer.detach()
        engram.close()


@pytest.mark.parametrize(("source", "target"), [("bob", "alice"), ("alice", "bob"), ("global", "alice")])
def test_an_entry_moved_after_a_recall_raised_its_importance_is_moved(home: Path, source: str, target: str) -> None:
    """A recall strengthens a memory (importance, recall count) unseen by the folder, which shows
    neither that change nor when it happened: moved before the next sync, the entry is still a move.
    Before, any change since the last sync made it a copy: the pasted entry was taken out of its new
    folder and the memory put back in its old one, the user's move silently undone."""
    view = WHO[source][0]
    memory_id = _remember(home, source)
    _remember(home, target, "the target's own fact", key="own")
    before = json.loads(cli_output(home, *view, "--json", "get", memory_id))
    cli_output(home, *view, "recall", "moved fact")
    recalled = json.loads(cli_output(home, *view, "--json", "get", memory_id))
    assert recalled["recall_count"] == 1 and recalled["importance"] > before["importance"]
    _move(home, memory_id, source, target)

    report = json.loads(cli_output(home, "--json", "sync"))

    assert report["to_database"] == {"created": 0, "updated": 0, "forgotten": 0, "moved": 1}
    assert report["conflicts"] == [] and report["problems"] == []
    after = json.loads(cli_output(home, *WHO[target][0], "--json", "get", memory_id))
    assert after["scope"] == SCOPE[target]
    assert (after["importance"], after["recall_count"], after["content"]) == (recalled["importance"], 1, CONTENT)
    assert memory_id not in (home / "memory" / WHO[source][2] / "notes.md").read_text(encoding="utf-8")
    assert memory_id in (home / "memory" / WHO[target][2] / "notes.md").read_text(encoding="utf-8")
    _quiet(home)


def test_an_entry_moved_after_its_content_changed_in_the_database_is_not_moved(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pasted entry is a stale copy when the memory's text changed in the database since the
    last sync (here written with the folder off): the memory stays bob's, with its new text, and
    nothing is lost."""
    memory_id = _remember(home, "bob")
    _remember(home, "alice", "the target's own fact", key="own")
    _move(home, memory_id, "bob", "alice")
    monkeypatch.setenv("ENGRAM_FILES__ENABLED", "false")
    cli_output(home, "--agent", "bob", "remember", "bob's newer text", "--key", "moved", "--tags", "notes")
    monkeypatch.delenv("ENGRAM_FILES__ENABLED")

    report = json.loads(cli_output(home, "--json", "sync"))

    assert report["to_database"]["moved"] == 0
    assert _rows(home / "memory.db")[memory_id] == ("agent:bob", "bob's newer text")
    assert "bob's newer text" in (home / "memory" / "agents/bob" / "notes.md").read_text(encoding="utf-8")
    assert memory_id not in (home / "memory" / "agents/alice" / "notes.md").read_text(encoding="utf-8")


def test_a_pass_reads_the_folder_once_however_many_entries_left_for_a_later_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Entries of bob's memories recalled since the last sync (their importance raised), moved into
    ``global/``, settled after bob's folder: bob's pass asked, for each, whether another folder holds
    it, and each question walked and parsed the whole memory folder. A pass walks it as often for
    four such entries as for one, and every entry is still moved."""
    walks: list[str] = []
    walk = Folder.walk

    def counted(folder: Folder, rel_dir: str = "") -> Iterator[tuple[str, bool]]:
        walks.append(rel_dir)
        return walk(folder, rel_dir)

    monkeypatch.setattr(Folder, "walk", counted)
    with Engram.from_settings(home=tmp_path / "home", files={"enabled": False}) as engram:
        syncer = FileSync(engram, tmp_path / "home" / "memory")
        syncer.attach()
        try:
            bob = engram.for_agent("bob")
            memories = [bob.remember(f"bob's note number {n}", key=f"note-{n}", tags=["notes"]).memory for n in range(5)]
            bob.remember("bob keeps this one", key="stays", tags=["notes"])
            engram.remember("a rule for everyone", key="rule", scope="global", tags=["notes"])
            src, dst = tmp_path / "home/memory/agents/bob/notes.md", tmp_path / "home/memory/global/notes.md"
            whole_folder_walks = []
            for batch in (memories[:1], memories[1:]):
                syncer.sync()
                engram.store.touch([m.id for m in batch], engram.clock(), importance_boost=0.1)  # a recall, unseen by the folder
                for memory in batch:
                    block = entry_block(src.read_text(encoding="utf-8"), memory.id)
                    src.write_text(src.read_text(encoding="utf-8").replace("\n".join(block) + "\n", ""), encoding="utf-8")
                    dst.write_text(with_copy(dst.read_text(encoding="utf-8"), block), encoding="utf-8")
                walks.clear()

                report = syncer.sync()

                assert report.db_moved == len(batch) and report.db_forgotten == 0 and report.conflicts == []
                assert {m.scope for m in engram.store.get_many([m.id for m in batch])} == {Scope()}
                whole_folder_walks.append(walks.count(""))
            assert whole_folder_walks[0] == whole_folder_walks[1], whole_folder_walks
            assert not syncer.sync().changed
        finally:
            syncer.detach()


def test_a_pass_sees_the_files_an_earlier_folder_of_it_wrote(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """alice's own database (``per_agent_databases``): an entry whose id no database holds (bob's,
    its marker given an id of a memory from elsewhere: one bob's database holds becomes a new memory
    whatever the folders say, ``test_operator_sync``), pasted into her agent folder and her
    session's. Her agent folder's pass, first, finds the session's copy and makes its entry a new
    memory (a new id, written into its file); her session's pass, later, then finds the id nowhere
    else and imports it with its id. The folder is read once a pass, so the session's pass must see
    her agent folder as that pass wrote it: read as it was before, the id was still there, and the
    session's entry lost its id too."""
    monkeypatch.setenv("ENGRAM_PER_AGENT_DATABASES", "true")
    monkeypatch.setenv("ENGRAM_EMBEDDINGS__PROVIDER", "none")
    home = tmp_path / "home"
    alice, session = ("--agent", "alice"), ("--agent", "alice", "--session", "s1")
    cli_output(home, *alice, "remember", "alice's own fact", "--key", "own", "--tags", "notes")
    cli_output(home, *session, "remember", "alice's session fact", "--key", "scratch", "--tags", "notes", "--scope", "session")
    cli_output(home, "--agent", "bob", "remember", "bob's fact for alice", "--key", "given", "--tags", "notes")
    held = json.loads(cli_output(home, "--agent", "bob", "--json", "get", "given"))["id"]
    src = home / "memory/agents/bob/notes.md"
    block = entry_block(src.read_text(encoding="utf-8"), held)
    src.write_text(src.read_text(encoding="utf-8").replace("\n".join(block) + "\n", ""), encoding="utf-8")
    given = new_id()
    block = [line.replace(held, given) for line in block]
    for rel in ("agents/alice/notes.md", "sessions/alice/s1/notes.md"):
        dst = home / "memory" / rel
        dst.write_text(with_copy(dst.read_text(encoding="utf-8"), block), encoding="utf-8")

    report = json.loads(cli_output(home, *alice, "--json", "sync"))

    assert report["to_database"]["created"] == 2, report
    rows = _rows(home / "agents/alice/memory.db")
    assert rows[given] == ("session:alice/s1", "bob's fact for alice")
    assert [scope for i, (scope, content) in rows.items() if content == "bob's fact for alice" and i != given] == ["agent:alice"]
    assert given not in (home / "memory/agents/alice/notes.md").read_text(encoding="utf-8")
    assert given in (home / "memory/sessions/alice/s1/notes.md").read_text(encoding="utf-8")


def _conflict_then_move(home: Path) -> str:
    """alice's memory in conflict (both-changed: "file side" kept beside agents/alice/notes.md),
    then its entry (the database side) moved by hand into bob's folder and synced; returns its id."""
    memory_id = _remember(home, "alice", "original")
    _remember(home, "bob", "bob's own fact", key="own")
    notes = home / "memory/agents/alice/notes.md"
    notes.write_text(notes.read_text(encoding="utf-8").replace("- original (", "- file side ("), encoding="utf-8")
    cli_output(home, "--agent", "alice", "remember", "database side", "--key", "moved", "--tags", "notes")
    assert [c["kind"] for c in json.loads(cli_output(home, "--json", "conflicts"))] == ["both-changed"]
    _move(home, memory_id, "alice", "bob")
    assert json.loads(cli_output(home, "--json", "sync"))["to_database"]["moved"] == 1
    return memory_id


def test_a_conflict_whose_entry_was_moved_since_is_resolved_on_the_memory_where_it_is_now(home: Path) -> None:
    # Before, the note was taken as about a memory alice's folder no longer held: listed as
    # "(forgotten)", and --take file stored "file side" as a second memory of alice's under a new
    # id, leaving bob's (the edited one) as it was.
    memory_id = _conflict_then_move(home)
    [listed] = json.loads(cli_output(home, "--json", "conflicts"))
    assert (listed["id"], listed["memory_now_in"]) == (memory_id, "agents/bob")
    shown = cli_output(home, "conflicts")
    assert "database: database side" in shown and "moved to: agents/bob" in shown
    refused = runner_result(home, "--agent", "alice", "conflicts", "resolve", memory_id, "--take", "file")
    assert isinstance(refused.exception, ValidationError), refused.output
    assert "was moved by hand to another agent's folder" in str(refused.exception) and "bob" not in str(refused.exception)

    _file_side_applied_to_bobs_memory(home, memory_id, "file side")
    assert memory_id not in (home / "memory/agents/alice/notes.md").read_text(encoding="utf-8")


def test_a_conflict_whose_entry_moved_to_another_agents_database_is_refused_naming_where(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # With one database per agent, the memory went to bob's database; --take file restored the
    # entry in alice's under the same id (one id in two databases) and kept a new conflict.
    monkeypatch.setenv("ENGRAM_PER_AGENT_DATABASES", "true")
    memory_id = _conflict_then_move(home)
    before = {agent: _rows(home / f"agents/{agent}/memory.db") for agent in ("alice", "bob")}

    refused = runner_result(home, "conflicts", "resolve", memory_id, "--take", "file")

    assert isinstance(refused.exception, ValidationError), refused.output
    said = f"{memory_id} (agents/alice/notes.md.{memory_id}.conflict) was moved by hand to agents/bob/notes.md"
    assert said in str(refused.exception) and "--take db" in str(refused.exception)
    # A merge written in $EDITOR is refused before the editor opens, not after the text is written.
    opened = home / "editor-opened"
    monkeypatch.setenv("EDITOR", f"touch {opened} && true")
    edited = runner_result(home, "conflicts", "resolve", memory_id, "--take", "merge", "--edit")
    assert isinstance(edited.exception, ValidationError) and said in str(edited.exception), edited.output
    assert not opened.exists()
    assert {agent: _rows(home / f"agents/{agent}/memory.db") for agent in ("alice", "bob")} == before
    assert memory_id not in before["alice"] and before["bob"][memory_id] == ("agent:bob", "database side")
    assert [c["id"] for c in json.loads(cli_output(home, "--json", "conflicts"))] == [memory_id]
    cli_output(home, "conflicts", "resolve", memory_id, "--take", "db")
    assert json.loads(cli_output(home, "--json", "conflicts")) == []



def _file_side_applied_to_bobs_memory(home: Path, memory_id: str, text: str) -> None:
    """The operator's ``--take file`` on the conflict of ``memory_id`` changes bob's memory to
    ``text`` in place (no second memory), his file shows it, and nothing is left to settle."""
    cli_output(home, "conflicts", "resolve", memory_id, "--take", "file")
    rows = _rows(home / "memory.db")
    assert rows[memory_id] == ("agent:bob", text)
    assert [content for _, content in rows.values()].count(text) == 1
    assert text in (home / "memory/agents/bob/notes.md").read_text(encoding="utf-8")
    assert json.loads(cli_output(home, "--json", "conflicts")) == []
    _quiet(home)


def runner_result(home: Path, *args: str) -> Result:
    """``engram --home HOME ARGS...`` in-process, whatever its exit code."""
    return runner.invoke(app, ["--home", str(home), *args])


def _conflict_beside(home: Path, where: str, content: str = "original") -> str:
    """A memory of ``where``'s scope in conflict (both-changed: "file side" kept beside its
    ``notes.md``, "database side" stored), synced; returns its id."""
    memory_id = _remember(home, where, content)
    notes = home / "memory" / WHO[where][2] / "notes.md"
    notes.write_text(notes.read_text(encoding="utf-8").replace(f"- {content} (", "- file side ("), encoding="utf-8")
    view, scope, _ = WHO[where]
    cli_output(home, *view, "remember", "database side", "--key", "moved", "--tags", "notes", *scope)
    assert [c["kind"] for c in json.loads(cli_output(home, "--json", "conflicts"))] == ["both-changed"]
    return memory_id


@pytest.mark.parametrize(("source", "target"), [("alice", "session"), ("session", "alice"), ("global", "alice")])
def test_a_conflict_moves_along_with_its_entry_moved_by_hand_into_a_folder_its_readers_read(
        home: Path, source: str, target: str) -> None:
    # Before, the .conflict stayed beside the old file: the person looking in the entry's new folder
    # saw no conflict there, and the old folder kept a note about an entry it no longer held.
    memory_id = _conflict_beside(home, source)
    _remember(home, target, "the target's own fact", key="own")
    _move(home, memory_id, source, target)

    report = json.loads(cli_output(home, "--json", "sync"))

    assert report["to_database"]["moved"] == 1
    new_file = f"{WHO[target][2]}/notes.md"
    assert [p for p in report["problems"] if f"{new_file}.{memory_id}.conflict" in p], report["problems"]
    assert not list((home / "memory" / WHO[source][2]).glob("*.conflict"))
    [listed] = json.loads(cli_output(home, "--json", "conflicts"))
    assert (listed["path"], listed["file"]) == (f"{new_file}.{memory_id}.conflict", new_file)
    assert (listed["memory_now_in"], listed["file_version"]) == (None, ["file side"])
    kept = (home / "memory" / listed["path"]).read_text(encoding="utf-8")
    assert f"file={new_file} " in kept
    cli_output(home, "conflicts", "resolve", memory_id, "--take", "file")
    assert _rows(home / "memory.db")[memory_id] == (SCOPE[target], "file side")
    _quiet(home)


def test_a_conflict_moved_along_never_overwrites_one_kept_in_the_new_folder(home: Path) -> None:
    memory_id = _conflict_beside(home, "alice")
    _remember(home, "session", "the target's own fact", key="own")
    _move(home, memory_id, "alice", "session")
    there = home / "memory/sessions/alice/s1" / f"notes.md.{memory_id}.conflict"
    there.write_text("a person's own notes\n", encoding="utf-8")

    cli_output(home, "sync")

    assert there.read_text(encoding="utf-8") == "a person's own notes\n"
    assert [c["path"] for c in json.loads(cli_output(home, "--json", "conflicts"))] == [
        f"sessions/alice/s1/notes.md.{memory_id}.2.conflict"]


@pytest.mark.parametrize(("source", "target"), [("alice", "bob"), ("alice", "global")])
def test_a_conflict_stays_in_its_folder_when_its_entry_goes_where_other_agents_read(
        home: Path, source: str, target: str) -> None:
    # alice's file version is never put where another agent reads it; the listing says where the memory is.
    memory_id = _conflict_beside(home, source)
    _remember(home, target, "the target's own fact", key="own")
    _move(home, memory_id, source, target)

    cli_output(home, "sync")

    [listed] = json.loads(cli_output(home, "--json", "conflicts"))
    assert listed["path"] == f"agents/alice/notes.md.{memory_id}.conflict"
    assert listed["memory_now_in"] == WHO[target][2]
    assert not list((home / "memory" / WHO[target][2]).glob("*.conflict"))
    assert f"moved to: {WHO[target][2]}" in cli_output(home, "conflicts")


def test_an_edit_made_on_a_refused_move_is_kept_as_a_refused_move_and_applies_to_the_memory_where_it_stays(
        home: Path) -> None:
    # Before, the edit was kept as "deleted-in-database", its note saying the memory was forgotten or
    # never one of alice's, the listing showing its database side "(forgotten)", and --take file
    # stored the edit as a new memory of alice's beside bob's, the move the sync refused made anyway.
    bob = ("--agent", "bob")
    cli_output(home, *bob, "remember", "the boiler is grey", "--key", "old", "--tags", "notes")
    cli_output(home, *bob, "remember", "the boiler is red", "--key", "new", "--tags", "notes")
    _remember(home, "alice", "the target's own fact", key="own")
    cli_output(home, *bob, "supersede", "old", "new")
    cli_output(home, "sync")
    new = json.loads(cli_output(home, *bob, "--json", "get", "new"))["id"]
    _move(home, new, "bob", "alice")
    notes = home / "memory/agents/alice/notes.md"
    notes.write_text(notes.read_text(encoding="utf-8").replace("- the boiler is red (", "- the boiler is crimson ("),
                     encoding="utf-8")

    report = json.loads(cli_output(home, "--json", "sync"))

    assert [p for p in report["problems"] if f"entry {new} not moved" in p], report["problems"]
    [listed] = json.loads(cli_output(home, "--json", "conflicts"))
    assert (listed["id"], listed["kind"], listed["file_version"]) == (new, "move-refused", ["the boiler is crimson"])
    assert listed["memory_now_in"] == "agents/bob"
    note = (home / "memory" / listed["path"]).read_text(encoding="utf-8")
    assert "move" in note and "refused" in note and "forgotten" not in note
    shown = cli_output(home, "conflicts")
    assert "database: the boiler is red" in shown and "stays in: agents/bob" in shown and "moved to" not in shown
    as_alice = cli_output(home, "--agent", "alice", "conflicts")
    assert "the boiler is red" not in as_alice and "another agent's folder" in as_alice
    refused = runner_result(home, "--agent", "alice", "conflicts", "resolve", new, "--take", "file")
    assert isinstance(refused.exception, ValidationError), refused.output
    assert "refused" in str(refused.exception) and "bob" not in str(refused.exception)

    _file_side_applied_to_bobs_memory(home, new, "the boiler is crimson")
