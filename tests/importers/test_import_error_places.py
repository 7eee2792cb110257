"""An import error names the source's own field (mem0's ``memory``, the MCP server's
``observations``) or the markdown line, never an engram field the source does not have."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engram.errors import SnapshotError
from engram.interfaces.cli.app import app
from engram.model import TAGS_ALLOWED
from tests.importers.test_import_cli import as_json

LONG = "word " * 40_000  # 200,000 characters: past the default content limit

CASES = [
    ("mem0.json", json.dumps({"results": [{"id": "a", "memory": "fine"}, {"id": "b", "memory": LONG}]}),
     "results[1].memory: is 200000 characters"),  # the text's final space included: kept as mem0 has it
    ("mem0.json", json.dumps({"results": [{"id": "a", "memory": "nul \u0000 here"}]}), "results[0].memory: contains"),
    ("memory.jsonl", json.dumps({"type": "entity", "name": "A", "entityType": "x", "observations": [LONG]}),
     "line 1.observations: is 200008"),
    ("export.json", json.dumps({"export_metadata": {}, "memories": [{"content": "nul \u0000 here"}]}),
     "memories[0].content: contains"),
    ("MEMORY.md", f"# Notes\n\n- fine\n- {LONG}\n", "MEMORY.md line 4: is 1"),
]


@pytest.mark.parametrize(("name", "text", "named"), CASES)
def test_an_error_names_the_sources_own_field(tmp_path: Path, name: str, text: str, named: str) -> None:
    home = tmp_path / "home"
    if name == "MEMORY.md":
        path = tmp_path / "workspace"
        path.mkdir()
        (path / name).write_text(text, encoding="utf-8")
    else:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(app, ["--home", str(home), "import", str(path)])
    assert isinstance(result.exception, SnapshotError), result.output
    assert str(result.exception).startswith(named), str(result.exception)[:200]
    assert as_json(home, "count") == {"count": 0}


# A JSON source's tags and metadata of the wrong sort are named as JSON spells them (`got a list`,
# `got null`), never by Python's type or an exception's text ('int' object is not iterable), and an
# entry of a tag list that is no text is refused rather than becoming Python's spelling of it.
JSON_SPELLING = [
    ({"metadata": [1]}, "results[0].metadata: got a list (allowed: a JSON object)"),
    ({"metadata": 5}, "results[0].metadata: got 5 (a number) (allowed: a JSON object)"),
    ({"categories": 5}, "results[0].categories: got 5 (a number) (allowed: a list of short tags)"),
    ({"categories": {"a": 1}}, "results[0].categories: got an object (allowed: a list of short tags)"),
    ({"categories": ["ok", None]}, "results[0].categories[1]: got null (allowed: a tag's text)"),
    ({"categories": [{"a": 1}]}, "results[0].categories[0]: got an object (allowed: a tag's text)"),
    ({"categories": ["a,b"]},
     "results[0].categories: got \"a,b\", not a usable tag (allowed: up to 64 printable characters, no commas)"),
    ({"categories": [f"t{i}" for i in range(101)]},
     f"results[0].categories: has more than 100 different tags (101 given) (allowed: {TAGS_ALLOWED})"),
]


@pytest.mark.parametrize(("fields", "message"), JSON_SPELLING)
def test_a_mem0_items_tags_and_metadata_are_named_as_json_spells_them(tmp_path: Path, fields: dict, message: str) -> None:
    home = tmp_path / "home"
    path = tmp_path / "mem0.json"
    path.write_text(json.dumps({"results": [{"id": "a", "memory": "fine", "user_id": "u", **fields}]}), encoding="utf-8")
    result = CliRunner().invoke(app, ["--home", str(home), "import", str(path)])
    assert isinstance(result.exception, SnapshotError), result.output
    assert str(result.exception) == message
    assert as_json(home, "count") == {"count": 0}


def test_numbers_and_booleans_in_a_tag_list_are_tags_as_json_spells_them(tmp_path: Path) -> None:
    home = tmp_path / "home"
    path = tmp_path / "mem0.json"
    path.write_text(json.dumps({"results": [{"id": "a", "memory": "fine", "categories": [5, True, 1.5, "Work"]}]}))
    result = CliRunner().invoke(app, ["--home", str(home), "import", str(path)])
    assert result.exit_code == 0, result.output
    assert as_json(home, "list")[0]["tags"] == ["5", "true", "1.5", "work"]
