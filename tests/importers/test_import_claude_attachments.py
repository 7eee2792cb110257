"""Claude.ai export attachments: text pasted into a message (an attachment without a file name) and
a document's text (``extracted_content``) follow the message's typed text as a block naming the
attachment; an attachment without text and ``files`` (names alone) are named in metadata and
counted. The fixture (``claude-attachments/conversations.json``) is one conversation shaped as
Claude.ai's export writes it: ``content`` blocks with their timestamps and citations,
``attachments`` with ``file_name``, ``file_size``, ``file_type`` and ``extracted_content`` (empty
for a scanned PDF), ``files`` with ``file_name`` (and a newer export's ``file_kind`` and
``file_uuid``), and the message tree (``parent_message_uuid``, ``current_leaf_message_uuid``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engram.config import load_settings
from engram.engine import Engram
from engram.errors import SnapshotError
from engram.model import MAX_MESSAGE_CHARS
from tests.importers.test_import_cli import FIXTURES

EXPORT = FIXTURES / "claude-attachments" / "conversations.json"
KEY = "claude:7d3e9f10-2a4b-4c5d-8e6f-1a2b3c4d5e6f"
PASTED = "Our product helps small teams plan their week.\n\nExample:\n\n```python\nplan = Week(team)\n```\n"


def _engram(home: Path) -> Engram:
    return Engram.from_settings(load_settings(home=home, embeddings={"provider": "none"}))


def _export() -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(EXPORT.read_text(encoding="utf-8"))
    return data


def test_attachment_text_follows_the_typed_text_as_a_block_naming_it(tmp_path: Path) -> None:
    with _engram(tmp_path) as mem:
        summary = mem.import_from(EXPORT)
        assert (summary.kind, summary.messages_imported) == ("claude", 5), summary
        said = mem.history.all(KEY)
        assert [(m.role.value, m.content) for m in said] == [
            # Pasted text (no file name) holding a code fence: a longer fence, so it cannot close it.
            ("user", f"Can you tighten this intro?\n\n[attachment]\n````\n{PASTED}\n````"),
            ("assistant", "Here is a shorter version: small teams plan their week with it."),
            # Nothing typed: the attachment's block alone, its text byte for byte (\r\n kept).
            ("user", "[attachment: notes.md]\n```\n# Notes\r\n- launch in May\r\n\n```"),
            # A PDF Claude.ai read no text from, and a photo: names alone, in the metadata.
            ("user", "And what is in these?"),
            ("assistant", "The scan came through without text; the photo shows a cake.")]
        assert said[0].metadata["claude"]["attachments"] == ["attachment"]
        assert said[2].metadata["claude"]["attachments"] == ["notes.md"]
        assert said[3].metadata["claude"]["attachments"] == ["scan.pdf", "photo.jpg"]
        warning = next(w for w in summary.warnings if w.startswith("1 conversation read"))
        for counted in ("attachments without text (1): no extracted_content in the export",
                        "files (1): images and uploads the export names and does not hold",
                        "messages without text (1)"):  # the photo sent alone: neither text nor a block
            assert counted in warning, warning
        again = mem.import_from(EXPORT)
        assert (again.messages_imported, again.messages_skipped) == (0, 5), again


@pytest.mark.parametrize(("text", "counted"), [
    ("nul \x00 inside", "attachments' text engram cannot hold (1): a NUL character or invalid Unicode"),
    ("x" * MAX_MESSAGE_CHARS, f"attachments' text too long for their message (1): a message holds at most "
                              f"{MAX_MESSAGE_CHARS:,} characters"),
])
def test_an_attachment_text_the_message_cannot_hold_is_counted_and_the_typed_text_kept(
        tmp_path: Path, text: str, counted: str) -> None:
    export = _export()
    export[0]["chat_messages"][0]["attachments"][0]["extracted_content"] = text
    with _engram(tmp_path) as mem:
        summary = mem.import_from(json.dumps(export), "claude")
        assert summary.messages_imported == 5, summary
        assert mem.history.all(KEY)[0].content == "Can you tighten this intro?"
        assert counted in "\n".join(summary.warnings), summary.warnings


def test_an_attachment_text_that_is_not_text_is_named(tmp_path: Path) -> None:
    export = _export()
    export[0]["chat_messages"][2]["attachments"][0]["extracted_content"] = ["not", "text"]
    with _engram(tmp_path) as mem:
        with pytest.raises(SnapshotError, match=r"^\[0\]\.chat_messages\[2\]\.attachments\[0\]\.extracted_content: got a list"):
            mem.import_from(json.dumps(export), "claude")
        assert mem.history.conversations() == []
