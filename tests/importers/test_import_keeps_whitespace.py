"""An import keeps each memory's and message's text as the source has it, whitespace at either end
included, as ``remember`` keeps it; a text that is empty or only whitespace is refused naming its
record and field, as ``remember`` refuses it, and nothing is imported.

The fixtures (``whitespace/``) are shaped as each tool writes its file: mem0's ``get_all()`` JSON,
mcp-memory-service's export (one memory without its ``content_hash``), a Clawless
``conversation-history.jsonl`` line and an MCP memory server ``memory.jsonl`` entity line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engram.config import load_settings
from engram.engine import Engram
from engram.errors import SnapshotError
from tests.importers.test_import_cli import FIXTURES

HERE = FIXTURES / "whitespace"


def _engram(home: Path) -> Engram:
    return Engram.from_settings(load_settings(home=home, embeddings={"provider": "none"}))


def _contents(mem: Engram) -> list[str]:
    return sorted(m.content for m in mem.list())


@pytest.mark.parametrize(("source", "kind", "agent", "contents"), [
    ("mem0.json", "mem0", "alex", ["\tPrefers window seats", "  Keeps a packing list:\n  - passport\n  - charger\n"]),
    # One memory has no content_hash: it is known by its text's, so a second import skips it too.
    ("mcp-memory-service.json", "mcp-memory-service", None,
     ["    def rotate():\n        return vault.rotate('staging')\n", " Decided to keep the index local \r\n"]),
])
def test_memories_keep_their_whitespace(tmp_path: Path, source: str, kind: str, agent: str | None,
                                        contents: list[str]) -> None:
    with _engram(tmp_path) as mem:
        summary = mem.import_from(HERE / source)
        assert (summary.kind, summary.imported) == (kind, 2), summary
        assert _contents(mem.for_agent(agent) if agent else mem) == contents
        assert mem.import_from(HERE / source).skipped == 2


def test_clawless_messages_keep_their_whitespace(tmp_path: Path) -> None:
    with _engram(tmp_path) as mem:
        summary = mem.import_from(HERE / "conversation-history.jsonl")
        assert (summary.kind, summary.messages_imported) == ("clawless", 2), summary
        said = mem.history.all("telegram:12345")
        assert [(m.role.value, m.content) for m in said] == [
            ("user", "  indented question?\n"), ("assistant", "Answer with a trailing newline.\n\n")]
        assert mem.import_from(HERE / "conversation-history.jsonl").messages_skipped == 2


def test_mcp_memory_observations_keep_their_whitespace(tmp_path: Path) -> None:
    with _engram(tmp_path) as mem:
        assert mem.import_from(HERE / "memory.jsonl").imported == 1
        # The blank observation says nothing: left out, as before.
        assert _contents(mem) == ["Build_Server (machine)\n-   Runs on port 8080 \n- Deploys nightly\n"]


def _blank(name: str, text: str) -> str:
    """The fixture's text with its first record's (or line's) text whitespace only."""
    if name.endswith(".jsonl"):
        line = json.loads(text.splitlines()[0])
        line["userMessage"] = " \n\t"
        return json.dumps(line)
    data = json.loads(text)
    records, field = (data["results"], "memory") if "results" in data else (data["memories"], "content")
    records[0][field] = " \n\t"
    return json.dumps(data)


@pytest.mark.parametrize(("name", "kind", "place"), [
    ("mem0.json", "mem0", "results[0].memory"),
    ("mcp-memory-service.json", "mcp-memory-service", "memories[0].content"),
    ("conversation-history.jsonl", "clawless", "conversation-history.jsonl line 1.userMessage"),
])
def test_a_text_of_whitespace_alone_is_refused_naming_its_record(tmp_path: Path, name: str, kind: str,
                                                                   place: str) -> None:
    with _engram(tmp_path) as mem:
        with pytest.raises(SnapshotError) as raised:
            mem.import_from(_blank(name, (HERE / name).read_text(encoding="utf-8")), kind)
        assert str(raised.value).startswith(f"{place}: must not be empty"), str(raised.value)
        assert mem.list() == [] and mem.history.conversations() == []
