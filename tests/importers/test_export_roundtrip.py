"""``engram export --format mem0|basic-memory`` writes what mem0 and basic-memory read, and what
``engram import`` reads back: contents, tags, times and links survive the round trip."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import yaml

from tests.importers.test_import_cli import as_json, run


def _seed(home: Path) -> dict:
    run(home, "remember", "The user prefers Python for scripting", "--key", "prefers-python", "--tags", "prefs,lang")
    run(home, "remember", "The project pins Python 3.12", "--key", "python-version", "--link", "prefers-python")
    return {m["key"]: m for m in as_json(home, "list")}


def test_mem0_export_is_mem0_shaped_and_imports_back(tmp_path: Path) -> None:
    source = _seed(tmp_path / "a")
    out = tmp_path / "mem0.json"
    run(tmp_path / "a", "export", str(out), "--format", "mem0")
    document = json.loads(out.read_text())
    item = next(i for i in document["results"] if i["memory"] == "The user prefers Python for scripting")
    assert item["hash"] == hashlib.md5(b"The user prefers Python for scripting").hexdigest()  # mem0's hash
    assert item["categories"] == ["prefs", "lang"] and item["user_id"] == "default"
    assert item["metadata"]["engram"]["key"] == "prefers-python" and item["created_at"].endswith("+00:00")
    summary = as_json(tmp_path / "b", "import", str(out))
    assert (summary["kind"], summary["imported"]) == ("mem0", 2)
    back = {m["content"]: m for m in as_json(tmp_path / "b", "list")}
    original = source["prefers-python"]
    copy = back[original["content"]]
    assert copy["tags"] == original["tags"]
    assert copy["created_at"] == pytest.approx(original["created_at"], abs=1e-5)  # ISO keeps microseconds


def test_basic_memory_export_is_notes_and_imports_back_with_links(tmp_path: Path) -> None:
    _seed(tmp_path / "a")
    vault = tmp_path / "vault"
    run(tmp_path / "a", "export", str(vault), "--format", "basic-memory")
    note = (vault / "python-version.md").read_text()
    front = yaml.safe_load(note.split("---")[1])
    assert front["permalink"] == "python-version" and front["title"] == "python-version"
    assert "- links_to [[prefers-python]]" in note and "The project pins Python 3.12" in note
    summary = as_json(tmp_path / "c", "import", str(vault))
    assert (summary["kind"], summary["imported"]) == ("basic-memory", 2)
    assert {m["key"] for m in as_json(tmp_path / "c", "neighbours", "python-version")} == {"prefers-python"}
    assert as_json(tmp_path / "c", "get", "prefers-python")["tags"] == ["prefs", "lang"]
