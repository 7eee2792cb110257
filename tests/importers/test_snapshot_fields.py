"""A snapshot entry's fields of the wrong JSON type are refused by name (``memories[0].source``)
with what is allowed, before anything is stored: never an internal error from the database, never
a number silently stored as text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engram.errors import SnapshotError
from engram.interfaces.cli.app import app
from tests.importers.test_import_cli import as_json

BAD = [
    ({"source": ["a"], "superseded_by": {"a": 1}}, "memories[1].source: got a list (allowed: text)"),
    ({"superseded_by": {"a": 1}}, "memories[1].superseded_by: got an object (allowed: text)"),
    ({"related_entity": 123}, "memories[1].related_entity: got 123 (a number) (allowed: text)"),
    ({"id": 7}, "memories[1].id: got 7 (a number)"),
    ({"key": ["k"]}, "memories[1].key: got a list"),
    ({"links": "other"}, "memories[1].links: got text (allowed: a list of ids or keys)"),
    ({"links": ["ok", 3]}, "memories[1].links[1]: got 3 (a number)"),
    ({"tags": [True]}, "memories[1].tags[0]: got true (a boolean)"),
    ({"metadata": ["x"]}, "memories[1].metadata: got a list (allowed: a JSON object)"),
    ({"type": 5}, "memories[1].type: got 5 (a number)"),
]


# An entity, source or tags ``remember`` would refuse: they were stored as given (a NUL, 1,000
# characters, 101 tags), and no memory file can hold them, so a folder synced from the store could
# not be read back.
REMEMBER_REFUSES = [
    ({"related_entity": "a\x00b"}, "memories[1].related_entity: contains a NUL character at position 1"),
    ({"source": "s" * 201}, "memories[1].source: is longer than 200 characters (allowed: up to 200 characters)"),
    ({"related_entity": "e" * 1000}, "memories[1].related_entity: is longer than 200 characters"),
    ({"session_id": "s\x00"}, "memories[1].session_id: contains a NUL character at position 1"),
    ({"tags": [f"t{i}" for i in range(101)]}, "memories[1].tags: has more than 100 different tags (101 given)"),
    ({"tags": ",".join(f"t{i}" for i in range(101))}, "memories[1].tags: has more than 100 different tags"),
]


@pytest.mark.parametrize(("fields", "message"), BAD + REMEMBER_REFUSES)
def test_a_field_of_the_wrong_type_is_named_and_nothing_is_imported(tmp_path: Path, fields: dict,
                                                                     message: str) -> None:
    home = tmp_path / "home"
    path = tmp_path / "snap.json"
    path.write_text(json.dumps({"memories": [{"content": "fine", "key": "k3"},
                                             {"content": "x", "key": "k4", **fields}]}), encoding="utf-8")
    result = CliRunner().invoke(app, ["--home", str(home), "import", str(path)])
    assert isinstance(result.exception, SnapshotError), result.output
    assert str(result.exception).startswith(message), str(result.exception)
    assert as_json(home, "count") == {"count": 0}


@pytest.mark.parametrize(("category", "message"), [
    (["core"], "entries[1].category: got a list (allowed: text)"),
    ({"name": "core"}, "entries[1].category: got an object (allowed: text)"),
    (5, "entries[1].category: got 5 (a number) (allowed: text)"),
])
def test_a_ptrclaw_files_category_of_the_wrong_type_is_named(tmp_path: Path, category: object, message: str) -> None:
    # PtrClaw's file reads any category name as knowledge (``snapshot.ptrclaw_category``); a name
    # that is no text is refused by name before that reading, never a TypeError from hashing a list.
    home = tmp_path / "home"
    path = tmp_path / "ptrclaw.json"
    path.write_text(json.dumps([{"key": "k1", "content": "fine", "category": "core", "timestamp": 1700000000},
                                {"key": "k2", "content": "x", "category": category, "timestamp": 1700000000}]),
                    encoding="utf-8")
    result = CliRunner().invoke(app, ["--home", str(home), "import", str(path)])
    assert isinstance(result.exception, SnapshotError), result.output
    assert str(result.exception) == message
    assert as_json(home, "count") == {"count": 0}


def test_an_entity_and_source_are_read_as_remember_reads_them(tmp_path: Path) -> None:
    home = tmp_path / "home"
    path = tmp_path / "snap.json"
    path.write_text(json.dumps({"memories": [
        {"content": "padded", "key": "k1", "related_entity": "  Ada  ", "source": "\tchat\n"},
        {"content": "blank", "key": "k2", "related_entity": "   ", "source": ""}]}), encoding="utf-8")
    assert CliRunner().invoke(app, ["--home", str(home), "import", str(path)]).exit_code == 0
    stored = {m["key"]: (m["related_entity"], m["source"]) for m in as_json(home, "list")}
    assert stored == {"k1": ("Ada", "chat"), "k2": (None, None)}


def test_a_source_entity_name_longer_than_remember_takes_is_named_and_nothing_is_imported(tmp_path: Path) -> None:
    # The MCP memory server's entity name becomes the memory's related_entity: one of 300 characters
    # was stored, and a memory folder synced from the store could not be read back.
    home = tmp_path / "home"
    path = tmp_path / "memory.jsonl"
    path.write_text("\n".join(json.dumps({"type": "entity", "name": name, "entityType": "person",
                                          "observations": ["likes tea"]}) for name in ("Ada", "E" * 300)),
                    encoding="utf-8")
    result = CliRunner().invoke(app, ["--home", str(home), "import", str(path)])
    assert isinstance(result.exception, SnapshotError), result.output
    assert str(result.exception) == "line 2.name: is longer than 200 characters (allowed: up to 200 characters)"
    assert as_json(home, "count") == {"count": 0}
