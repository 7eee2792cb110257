"""A source that repeats a record's id (mem0's ``id``, mcp-memory-service's ``content_hash``) with
other content is refused naming the repeat, and nothing is imported; an identical copy counts as
one imported and one skipped. What an import reports always adds up to the records it read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engram.errors import SnapshotError
from engram.interfaces.cli.app import app
from tests.importers.test_import_cli import as_json

REPEATS = [
    ("mem0.json", {"results": [{"id": "a1", "memory": "first"}, {"id": "a1", "memory": "second different"}]},
     'results[1].id: "a1" repeats results[0], which differs'),
    ("mem0.json", [{"id": "a1", "memory": "same", "user_id": "ann"}, {"id": "a1", "memory": "same", "user_id": "bo"}],
     '[1].id: "a1" repeats [0], which differs'),
    ("export.json", {"export_metadata": {}, "memories": [{"content": "one", "content_hash": "h1"},
                                                         {"content": "two", "content_hash": "h1"}]},
     'memories[1].content_hash: "h1" repeats memories[0], which differs'),
    ("export.json", {"export_metadata": {}, "memories": [{"content": "one", "tags": ["a"]},
                                                         {"content": "one", "tags": ["b"]}]},
     "memories[1].content: repeats memories[0], which differs"),
]


@pytest.mark.parametrize(("name", "document", "message"), REPEATS)
def test_a_repeated_id_with_other_content_imports_nothing(tmp_path: Path, name: str, document: object,
                                                           message: str) -> None:
    home = tmp_path / "home"
    path = tmp_path / name
    path.write_text(json.dumps(document), encoding="utf-8")
    result = CliRunner().invoke(app, ["--home", str(home), "import", str(path)])
    assert isinstance(result.exception, SnapshotError), result.output
    assert str(result.exception).startswith(message), str(result.exception)
    assert as_json(home, "count") == {"count": 0}


@pytest.mark.parametrize(("name", "document"), [
    ("mem0.json", {"results": [{"id": "a1", "memory": "same"}, {"id": "a1", "memory": "same"}]}),
    ("export.json", {"export_metadata": {}, "memories": [{"content": "same"}, {"content": "same"}]}),
])
def test_an_identical_copy_is_one_imported_and_one_skipped(tmp_path: Path, name: str, document: object) -> None:
    path = tmp_path / name
    path.write_text(json.dumps(document), encoding="utf-8")
    summary = as_json(tmp_path / "home", "import", str(path))
    assert (summary["imported"], summary["skipped"]) == (1, 1)


def test_a_fact_written_twice_in_a_workspace_is_counted(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "MEMORY.md").write_text("- Likes tea\n- Likes coffee\n- Likes tea\n", encoding="utf-8")
    summary = as_json(tmp_path / "home", "import", str(workspace))
    assert (summary["kind"], summary["imported"], summary["skipped"]) == ("openclaw", 2, 1)
