"""JSON Lines sources split at ``\\n`` only: U+2028, U+2029 and U+0085 may stand unescaped inside a
JSON string (Node's ``JSON.stringify``, which writes the MCP memory server's ``memory.jsonl`` and
Clawless's history, leaves them so), and reading the file with ``str.splitlines`` cut such a record
in two and refused the whole import as malformed."""

from __future__ import annotations

import json
from pathlib import Path

from engram.config import load_settings
from engram.engine import Engram

SEPARATED = "first part\u2028second part\u2029third\u0085fourth"


def _engram(home: Path) -> Engram:
    return Engram.from_settings(load_settings(home=home, embeddings={"provider": "none"}))


def test_an_mcp_memory_observation_holding_a_line_separator_is_imported_whole(tmp_path: Path) -> None:
    source = tmp_path / "memory.jsonl"
    lines = [{"type": "entity", "name": "Notes", "entityType": "doc", "observations": [SEPARATED]},
             {"type": "entity", "name": "Other", "entityType": "doc", "observations": ["plain"]}]
    # As Node writes it: the separators raw (json.dumps with ensure_ascii=False keeps them too).
    source.write_text("\n".join(json.dumps(line, ensure_ascii=False, separators=(",", ":")) for line in lines) + "\n",
                      "utf-8")
    assert "\u2028" in source.read_text("utf-8")
    with _engram(tmp_path / "home") as mem:
        assert mem.import_from(source).imported == 2
        (notes,) = [m for m in mem.list() if m.content.startswith("Notes")]
        assert SEPARATED in notes.content


def test_a_clawless_exchange_holding_a_line_separator_is_imported_whole(tmp_path: Path) -> None:
    source = tmp_path / "conversation-history.jsonl"
    line = {"userMessage": SEPARATED, "botResponse": "noted\u2028twice", "chatId": "12345", "platform": "telegram",
            "timestamp": "2026-02-10T08:15:00.000Z"}
    source.write_text(json.dumps(line, ensure_ascii=False) + "\r\n", "utf-8")
    with _engram(tmp_path / "home") as mem:
        assert mem.import_from(source).messages_imported == 2
        assert [m.content for m in mem.history.all("telegram:12345")] == [SEPARATED, "noted\u2028twice"]
