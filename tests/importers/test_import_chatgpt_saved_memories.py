"""ChatGPT's saved memories (its writes to the ``bio`` tool) through ``engram import
--saved-memories`` on a real SQLite home, and ``Engram.import_from(..., saved_memories=True)``.

The fixture ``chatgpt-saved-memories/`` is shaped as real exports hold them: an assistant message
with ``recipient`` ``bio`` and ``channel`` ``commentary`` whose text part is the fact, answered by a
``tool`` message named ``bio`` saying "Model set context updated."; a later conversation writes the
same fact again and asks to forget another ("Forget that the user's dog is named Miso."), and a
third is an ordinary conversation without any.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from engram.config import load_settings
from engram.engine import Engram
from engram.errors import ValidationError
from tests.importers.test_import_chat_exports import zipped
from tests.importers.test_import_cli import ENGRAM, FIXTURES, as_json, run

EXPORT = FIXTURES / "chatgpt-saved-memories"
OLDEST = "6715e2ac-9008-8002-8795-1af276ec5901"
SAVED = {  # content byte for byte -> (when first written, the message that wrote it)
    "User prefers Python for scripting.": (1729951866.125, "6715e2ac-0000-4000-8000-000000000003"),
    "  User's dog is named Miso 🐕.\r\nHe is a shiba inu.": (1729951866.5, "6715e2ac-0000-4000-8000-000000000005"),
    "User's invoices go to sam@example.com.": (1729951867.0, "6715e2ac-0000-4000-8000-000000000007"),
}


def saved(home: Path, *agent: str) -> list[dict]:
    return as_json(home, *agent, "list", "--tag", "saved-memory", "--limit", "100")


def imported_without_the_option(tmp_path: Path, fixture: Path, messages: int) -> tuple[Path, str, str]:
    """The export of ``fixture`` imported without ``--saved-memories``: the home, the ZIP and the
    warnings; only the messages came in."""
    home = tmp_path / "home"
    source = str(zipped(fixture, tmp_path / "chatgpt-export.zip"))
    plain = as_json(home, "import", source)
    assert (plain["imported"], plain["messages_imported"]) == (0, messages), plain
    return home, source, "\n".join(plain["warnings"])


def test_saved_memories_are_reported_then_imported_on_request_once(tmp_path: Path) -> None:
    # Without the option nothing changes but a warning naming how many there are and the option.
    home, source, warnings = imported_without_the_option(tmp_path, EXPORT, 6)
    assert "5 saved-memory records found" in warnings and "1 of them a request to forget" in warnings, warnings
    assert "engram import --saved-memories" in warnings and "assistant messages to a tool" not in warnings
    assert as_json(home, "list") == []

    first = as_json(home, "import", source, "--saved-memories")
    assert (first["imported"], first["skipped"], first["messages_skipped"]) == (3, 0, 6), first
    assert "each distinct text is a core memory tagged saved-memory" in "\n".join(first["warnings"])
    memories = {m["content"]: m for m in saved(home)}
    assert set(memories) == set(SAVED)  # the repeat is one memory; the request to forget is none
    for content, (at, message) in SAVED.items():
        memory = memories[content]
        assert (memory["category"], memory["type"], sorted(memory["tags"])) == (
            "core", "learned", ["chatgpt", "saved-memory"]), memory
        assert memory["created_at"] == pytest.approx(at)  # the earliest write, not the repeat
        assert memory["metadata"] == {"chatgpt": {"saved_memory": "bio", "conversation": OLDEST, "message": message}}
    # History is as it was: the writes to the tool are no conversation message.
    assert [m["content"] for m in as_json(home, "history", "show", f"chatgpt:{OLDEST}", "--limit", "0")["messages"]][1] \
        == "Got it — I'll remember all three."

    again = as_json(home, "import", source, "--saved-memories")
    assert (again["imported"], again["skipped"], again["messages_imported"]) == (0, 3, 0), again
    assert len(saved(home)) == 3
    # One forgotten in engram since (the dog went to the sister) is not brought back by a re-import.
    run(home, "forget", memories["  User's dog is named Miso 🐕.\r\nHe is a shiba inu."]["id"], "--reason", "no dog now")
    later = as_json(home, "import", source, "--saved-memories")
    assert (later["imported"], later["skipped"], later["forgotten"]) == (0, 2, 1), later
    assert len(saved(home)) == 2
    # Another agent's import is its own; the first agent's memories are untouched by it.
    other = as_json(home, "--agent", "other", "import", str(EXPORT), "--saved-memories")
    assert (other["imported"], other["agents"]) == (3, ["other"]), other
    assert len(saved(home)) == 2 and len(saved(home, "--agent", "other")) == 3


def test_the_option_is_refused_for_sources_without_saved_memories(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {**os.environ, "ENGRAM_EMBEDDINGS__PROVIDER": "none"}
    for source, kind in ((FIXTURES / "claude-export", "claude"), (FIXTURES / "mem0.json", "mem0")):
        done = subprocess.run([ENGRAM, "--home", str(home), "import", str(source), "--saved-memories"],
                              capture_output=True, text=True, timeout=300, env=env)
        said = " ".join(done.stderr.split())
        assert done.returncode == 2 and f"--saved-memories: {kind} holds no ChatGPT saved memories" in said, said
    assert as_json(home, "stats")["memories"] == 0
    assert as_json(home, "history", "list") == []  # refused before anything was read or stored


def test_saved_memories_are_screened_for_pii_as_every_import_is(tmp_path: Path) -> None:
    settings = load_settings(home=tmp_path, embeddings={"provider": "none"}, privacy={"pii": "redact"})
    text = (EXPORT / "conversations.json").read_text(encoding="utf-8")
    with Engram.from_settings(settings) as mem:
        with pytest.raises(ValidationError) as refused:
            mem.import_from(text, saved_memories="yes")  # type: ignore[arg-type]
        assert refused.value.field == "saved_memories"
        summary = mem.import_from(text, saved_memories=True)
        assert summary.imported == 3, summary
        contents = sorted(m.content for m in mem.list())
        assert "User's invoices go to [REDACTED:email]." in contents, contents
        assert not any("sam@example.com" in c for c in contents)
        assert mem.for_agent("someone-else").list() == []
    assert json.loads(text)[2]["title"] == "Scripting and pets"  # (the fixture's oldest conversation is last)


# ``chatgpt-saved-memories-listed/`` adds what real exports hold beside the writes: each session opens with
# an assistant message of content type ``model_editable_context`` whose ``model_set_context`` lists the
# saved memories as ChatGPT gave them to the model ("1. [2024-10-26]. User prefers Python for
# scripting.\n\n2. [...]. ..."). January's list still holds the dog and the invoices; March's (the latest
# readable one) holds Python and a memory no write of the export made (sourdough), and a write after it
# adds Rust; April's is empty, as many newer exports hold it, and says nothing.
LISTED = FIXTURES / "chatgpt-saved-memories-listed"
MARCH = "67c58a40-7e1f-8000-b2c4-d6e8f0a1b2c3"


def test_the_latest_list_of_saved_memories_decides_which_writes_are_imported(tmp_path: Path) -> None:
    home, source, warnings = imported_without_the_option(tmp_path, LISTED, 10)
    assert "6 saved-memory records found" in warnings, warnings
    assert "latest list of saved memories (model_set_context, 2025-03-03) holds 2 memories" in warnings, warnings
    assert as_json(home, "list") == []

    first = as_json(home, "import", source, "--saved-memories")
    assert first["imported"] == 3, first
    warnings = "\n".join(first["warnings"])
    assert "2 written before it and absent from it are not imported (deleted or reworded in ChatGPT since)" in warnings
    assert "1 in it that no write of the export made is imported from it" in warnings, warnings
    assert "made after it" not in warnings  # the forget came before March's list, which shows it done
    memories = {m["content"]: m for m in saved(home)}
    # The dog (forgotten) and the invoices (deleted in ChatGPT's settings) were written before March's
    # list and are not in it; Python is, first written in October; Rust was written after it.
    assert set(memories) == {"User prefers Python for scripting.", "User bakes sourdough at 70% hydration.",
                             "User is learning Rust."}, memories
    python = memories["User prefers Python for scripting."]
    assert python["created_at"] == pytest.approx(1729951866.125)
    assert python["metadata"]["chatgpt"]["saved_memory"] == "bio"
    rust = memories["User is learning Rust."]
    assert rust["created_at"] == pytest.approx(1741000005.25) and rust["metadata"]["chatgpt"]["conversation"] == MARCH
    sourdough = memories["User bakes sourdough at 70% hydration."]
    assert sourdough["created_at"] == pytest.approx(1732924800.0)  # its entry's date, 2024-11-30, midnight UTC
    assert sourdough["metadata"] == {"chatgpt": {"saved_memory": "model_set_context", "conversation": MARCH,
                                                 "message": "67c58a40-0000-4000-8000-000000000003"}}
    assert all((m["category"], sorted(m["tags"])) == ("core", ["chatgpt", "saved-memory"]) for m in memories.values())
    again = as_json(home, "import", source, "--saved-memories")
    assert (again["imported"], again["skipped"]) == (0, 3), again


def test_a_list_engram_cannot_read_is_not_used_and_the_writes_stand(tmp_path: Path) -> None:
    conversations = json.loads((LISTED / "conversations.json").read_text(encoding="utf-8"))
    march = conversations[1]["mapping"]["67c58a40-0000-4000-8000-000000000003"]["message"]["content"]
    settings = load_settings(home=tmp_path, embeddings={"provider": "none"})
    with Engram.from_settings(settings) as mem:
        summary = mem.import_from(json.dumps(conversations), saved_memories=True)
        assert summary.imported == 3, summary
        march["model_set_context"] = "User prefers Python for scripting. User bakes sourdough."  # no numbered entries
        other = mem.for_agent("other")
        summary = other.import_from(json.dumps(conversations), saved_memories=True)
        # January's list is then the latest read: it holds the dog and the invoices (the dog's forget
        # came after it, and is counted, not applied), and Rust was written after it.
        assert sorted(m.content for m in other.list()) == sorted(
            ["User prefers Python for scripting.", "  User's dog is named Miso 🐕.\r\nHe is a shiba inu.",
             "User's invoices go to sam@example.com.", "User is learning Rust."]), summary
        warnings = "\n".join(summary.warnings)
        assert "list of saved memories (model_set_context) in a shape engram does not read, not used" in warnings
        assert "(model_set_context, 2025-01-26) holds 3 memories: 0 written before it" in warnings, warnings
        assert "1 request to forget made after it (the memory each meant may be imported still: review them)" in warnings
        for every in conversations:  # no list but empty ones: the writes are all there is, as before
            for node in every["mapping"].values():
                if node.get("message") and node["message"]["content"]["content_type"] == "model_editable_context":
                    node["message"]["content"]["model_set_context"] = ""
        third = mem.for_agent("third")
        summary = third.import_from(json.dumps(conversations), saved_memories=True)
        assert summary.imported == 4 and "latest list" not in "\n".join(summary.warnings), summary
        assert len(mem.list()) == 3  # the first agent's import is as it was
