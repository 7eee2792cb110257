"""An import error names the source's own field (mem0's ``memory``, the MCP server's
``observations``) or the markdown line, never an engram field the source does not have."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engram.errors import SnapshotError
from engram.interfaces.cli.app import app
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
