"""``Engram.import_from`` takes what ``engram import`` takes: engram's own memory folder and
snapshots as well as other systems' data; a source of another type, or a path handed over as a
``str``, is a ``ValidationError`` naming ``source``; an empty or mistyped folder names its path."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from engram.engine import Engram
from engram.errors import StorageError, ValidationError
from engram.files.export import export_folder
from engram.store.sqlite import SqliteMemoryStore
from tests.importers.test_import_cli import ENGRAM, FIXTURES


def test_an_engram_memory_folder_imports_from_the_library(tmp_path: Path) -> None:
    with Engram(SqliteMemoryStore(tmp_path / "a.db"), agent="default") as source:
        source.remember("The user prefers tea", key="tea")
        source.remember("The user lives in Lisbon", key="home")
        export_folder(source.list(), tmp_path / "folder", format="markdown")
    with Engram(SqliteMemoryStore(tmp_path / "b.db"), agent="default") as mem:
        summary = mem.import_from(tmp_path / "folder")
        assert (summary.kind, summary.imported, summary.skipped) == ("folder", 2, 0)
        assert mem.get("tea").content == "The user prefers tea"
        assert mem.import_from(tmp_path / "folder", "folder").skipped == 2


def test_a_snapshot_document_imports_from_the_library_by_kind(tmp_path: Path) -> None:
    with Engram(SqliteMemoryStore(tmp_path / "a.db"), agent="a") as mem:
        summary = mem.import_from(json.dumps({"memories": [{"content": "x", "key": "k"}]}), "snapshot")
        assert (summary.kind, summary.imported) == ("snapshot", 1)


@pytest.mark.parametrize(("source", "problem"), [
    (123, "source: got int"),
    (b"{}", "source: got bytes"),
    ({"MEMORY.md": 5}, 'source: the folder entry "MEMORY.md" is not text'),
    (str(FIXTURES / "mem0.json"), "source: '"),
    ("mem0.json", "source: 'mem0.json' is not a document (the text given is read as the document itself"),
])
def test_a_source_of_another_type_is_named(tmp_path: Path, source: object, problem: str) -> None:
    with Engram(SqliteMemoryStore(tmp_path / "a.db"), agent="a") as mem:
        with pytest.raises(ValidationError) as raised:
            mem.import_from(source, "mem0")  # type: ignore[arg-type]
        assert str(raised.value).startswith(problem) and "Path" in str(raised.value), str(raised.value)
        if isinstance(source, str):
            with pytest.raises(ValidationError, match="is not a document"):
                mem.import_from(source)  # detected: not read as a malformed snapshot


@pytest.mark.parametrize("contents", [{}, {"notes.txt": "nothing engram reads"}])
def test_an_empty_or_mistyped_folder_is_an_error_naming_it(tmp_path: Path, contents: dict[str, str]) -> None:
    folder = tmp_path / "emptydir"
    folder.mkdir()
    for name, text in contents.items():
        (folder / name).write_text(text, encoding="utf-8")
    done = subprocess.run([ENGRAM, "--home", str(tmp_path / "home"), "import", str(folder)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and f"{folder} holds no memory files" in done.stderr, (done.returncode, done.stderr)
    with Engram(SqliteMemoryStore(tmp_path / "a.db"), agent="a") as mem, pytest.raises(ValidationError):
        mem.import_from(folder)


def test_a_conversation_whose_history_write_fails_imports_none_of_its_messages(isolated_home: Path) -> None:
    with Engram.from_settings(embeddings={"provider": "none"}) as mem:
        # The database refuses the conversation's fourth message, after its first three went in.
        with mem.history.store.db.write() as conn:
            conn.execute("CREATE TRIGGER refuse BEFORE INSERT ON history_messages WHEN NEW.content = "
                         "'You decided to repaint the garage door green in April.' "
                         "BEGIN SELECT RAISE(ABORT, 'refused'); END")
        with pytest.raises(StorageError, match="refused"):
            mem.import_from(FIXTURES / "clawless")
        assert mem.history.all("telegram:12345") == []
        with mem.history.store.db.write() as conn:
            conn.execute("DROP TRIGGER refuse")
        summary = mem.import_from(FIXTURES / "clawless")
        # The other conversation may have gone in before the refused one (newest conversations go
        # first): found present now. The refused one's four come in whole.
        assert summary.messages_imported + summary.messages_skipped == 6 and summary.messages_imported >= 4
        assert mem.history.count("telegram:12345") == 4


def test_mem0_platform_fields_import_from_the_library(tmp_path: Path) -> None:
    """The platform's ``owner``, ``organization`` and ``structured_attributes`` are kept in
    ``metadata["mem0"]``; the owner chooses no agent (``user_id`` does, or the importing agent)."""
    attributes = json.loads((FIXTURES / "mem0-platform.json").read_text())["results"][0]["structured_attributes"]
    with Engram(SqliteMemoryStore(tmp_path / "a.db"), agent="a") as mem:
        assert mem.import_from(FIXTURES / "mem0-platform.json").agents == ("alice",)
    with Engram(SqliteMemoryStore(tmp_path / "a.db"), agent="alice") as mem:
        kept = next(m for m in mem.list() if m.content == "Trying to balance work and workouts").metadata["mem0"]
        assert (kept["owner"], kept["organization"], kept["structured_attributes"]) == ("dana-ops", "acme-health", attributes)
    with Engram(SqliteMemoryStore(tmp_path / "b.db"), agent="a") as mem:
        assert mem.import_from(FIXTURES / "mem0-platform.json", keep_agents=False).imported == 2
        assert {m.scope.agent for m in mem.list()} == {"a"}
        assert {m.metadata["mem0"]["owner"] for m in mem.list()} == {"dana-ops"}


def test_mcp_memory_fork_dates_import_from_the_library(tmp_path: Path) -> None:
    with Engram(SqliteMemoryStore(tmp_path / "a.db"), agent="a") as mem:
        assert mem.import_from(FIXTURES / "mcp-memory-fork.jsonl").imported == 2
        marta = mem.get("marta-ruiz")
        assert (marta.created_at, marta.updated_at) == (pytest.approx(1743581649.512), pytest.approx(1747672831.007))
        assert marta.metadata["mcp_memory"]["version"] == 3 and marta.metadata["relations"][0]["version"] == 1


def test_mcp_memory_mixed_text_and_object_observations_import_from_the_library(tmp_path: Path) -> None:
    """One entity's list holding text and the temporal fork's objects (an object without a time or a
    durability, and a member the fork does not write, included): every text in order, each object kept
    as it is, the times read from those that have one."""
    source = tmp_path / "memory.jsonl"
    observations = ["Speaks fluent Spanish",
                    {"content": "Graduated in 2019", "timestamp": "2025-01-15T10:30:00.000Z", "durability": "permanent"},
                    {"content": "Prefers morning meetings", "durability": "short-term", "source": "chat"},
                    "  ",
                    {"content": " Moved to Lisbon ", "timestamp": "2025-03-01T08:00:00.000Z"}]
    source.write_text(json.dumps({"type": "entity", "name": "John_Smith", "entityType": "person",
                                  "observations": observations}) + "\n")
    with Engram(SqliteMemoryStore(tmp_path / "a.db"), agent="a") as mem:
        assert mem.import_from(source).imported == 1
        john = mem.get("john-smith")
        assert john.content == ("John_Smith (person)\n- Speaks fluent Spanish\n- Graduated in 2019\n"
                                "- Prefers morning meetings\n-  Moved to Lisbon ")
        assert john.metadata["mcp_memory"]["observations"] == [observations[1], observations[2], observations[4]]
        assert (john.created_at, john.updated_at) == (pytest.approx(1736937000.0), pytest.approx(1740816000.0))


def test_a_documents_text_handed_over_as_a_path_is_named_not_an_os_error(tmp_path: Path) -> None:
    # A Path of a document's text too long for a file name escaped as OSError, repeating it whole.
    long = json.dumps({"memories": [{"key": f"k{n}", "content": "x" * 50} for n in range(200)]})
    with Engram(SqliteMemoryStore(tmp_path / "a.db"), agent="default") as mem:
        with pytest.raises(ValidationError) as refused:
            mem.import_from(Path(long))
        assert refused.value.field == "path" and "File name too long" in str(refused.value), refused.value
        assert len(str(refused.value)) < 300 and "given as a str, not a Path" in str(refused.value)
        assert mem.import_from(long).imported == 200  # the same text as a str is the document


def test_a_clawless_file_engram_shared_between_agents_imports_each_line_into_its_agents_history(
        isolated_home: Path, tmp_path: Path) -> None:
    # A conversation-history.jsonl written by engram's jsonl history for several agents names each
    # line's agent. Imported as the default agent, alice's exchange joined the default agent's
    # history, where the default agent (and every token of it) read alice's words.
    source = tmp_path / "clawless"
    source.mkdir()
    lines = [{"userMessage": "I live in Lyon", "botResponse": "Lovely", "chatId": "42", "platform": "telegram",
              "timestamp": "2026-02-10T08:15:00.000Z"},
             {"userMessage": "Alice secret: the hint is giraffe", "botResponse": "Noted", "chatId": "42",
              "platform": "telegram", "timestamp": "2026-02-10T08:16:00.000Z", "agent": "alice"}]
    (source / "conversation-history.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    with Engram.from_settings(embeddings={"provider": "none"}) as mem:
        summary = mem.import_from(source, "clawless")
        assert summary.messages_imported == 4
        assert [m.content for m in mem.history.all("telegram:42")] == ["I live in Lyon", "Lovely"]
    with Engram.from_settings(embeddings={"provider": "none"}, agent="alice") as alice:
        assert [m.content for m in alice.history.all("telegram:42")] == ["Alice secret: the hint is giraffe", "Noted"]
    with Engram.from_settings(embeddings={"provider": "none"}, agent="bob") as bob:  # into one agent: all its own
        assert bob.import_from(source, "clawless", keep_agents=False).messages_imported == 4
        assert bob.history.count("telegram:42") == 4
