"""A UTF-8 file that starts with a byte-order mark (as Windows tools write it) imports like the
same file without one, for every importer and for snapshots, from a path and from its text."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from engram.engine import Engram
from engram.store.sqlite import SqliteMemoryStore
from tests.importers.test_import_cli import FIXTURES, as_json

BOM = "\ufeff"
SNAPSHOT = json.dumps({"format": "engram-snapshot", "version": 1,
                       "memories": [{"content": "Prefers tea", "key": "tea"}]})


@pytest.mark.parametrize(("name", "expected"), [("mem0.json", 3), ("mcp-memory.jsonl", 3),
                                                ("mcp-memory-service.json", 2), ("snapshot.json", 1)])
def test_a_document_with_a_bom_imports(tmp_path: Path, name: str, expected: int) -> None:
    text = SNAPSHOT if name == "snapshot.json" else (FIXTURES / name).read_text(encoding="utf-8")
    path = tmp_path / name
    path.write_text(BOM + text, encoding="utf-8")
    summary = as_json(tmp_path / "home", "import", str(path))
    assert summary["imported"] == expected, summary
    # The same document handed over as text (stdin, HTTP, the library) keeps its mark too.
    with Engram(SqliteMemoryStore(tmp_path / "text.db"), agent="a") as mem:
        assert mem.import_from(BOM + text).imported == expected


def test_folder_files_with_a_bom_import(tmp_path: Path) -> None:
    workspace = tmp_path / "openclaw"
    shutil.copytree(FIXTURES / "openclaw", workspace)
    for path in workspace.rglob("*.md"):
        path.write_text(BOM + path.read_text(encoding="utf-8"), encoding="utf-8")
    summary = as_json(tmp_path / "home", "import", str(workspace))
    assert (summary["kind"], summary["imported"]) == ("openclaw", 6), summary
    assert not any(m["content"].startswith(BOM) for m in as_json(tmp_path / "home", "list", "--limit", "50"))
