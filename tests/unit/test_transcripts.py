"""Transcripts in ClawCode's markdown, and substantive turns indexed as conversation memories."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engram.engine import Engram
from engram.errors import ValidationError
from engram.files import transcripts
from engram.model import make_message
from engram.store.sqlite import SqliteMemoryStore

T0 = 1_770_631_200.0  # 2026-02-09T10:00:00Z


def talk() -> list:
    return [
        make_message("user", "Hi!", created_at=T0 + 1),
        make_message("assistant", "Hello! How can I help?", created_at=T0 + 2),
        make_message("user", "What programming languages should I use for my project backend?", created_at=T0 + 5),
        make_message("assistant", "", tool_calls=[{"id": "c", "name": "search"}], created_at=T0 + 6),
        make_message("tool", "results", tool_call_id="c", created_at=T0 + 7),
        make_message("assistant", "Python for backend services, TypeScript for the frontend.", created_at=T0 + 8),
        make_message("user", "ok thanks", created_at=T0 + 83),
        make_message("assistant", "You're welcome!", created_at=T0 + 84),
    ]


def test_turns_and_the_substantive_filter() -> None:
    found = transcripts.turns(talk())
    assert [t.number for t in found] == [1, 2, 3]
    assert found[1].agent == "Python for backend services, TypeScript for the frontend."
    assert [transcripts.is_substantive(t) for t in found] == [False, True, False]


def test_indexing_stores_substantive_turns_and_marks_them(tmp_path: Path) -> None:
    engram = Engram(SqliteMemoryStore(tmp_path / "memory.db"))
    path = transcripts.index_and_write(engram, tmp_path / "transcripts", "sess_123", talk())
    stored = engram.list(limit=10)
    assert len(stored) == 1
    memory = stored[0]
    assert memory.category.value == "conversation" and memory.key == "transcript:sess_123:2"
    assert set(memory.tags) == {"transcript", "session:sess_123"}
    assert memory.metadata == {"session": "sess_123", "turn": 2, "time": "2026-02-09T10:00:05Z", "at": 1770631205.0,
                               "asked": memory.metadata["asked"], "order": 0}
    assert len(memory.metadata["asked"]) == 16  # a digest, not the user's words
    assert memory.created_at == T0 + 5
    assert "TypeScript" in memory.content
    assert engram.recall("programming languages backend").memories[0].id == memory.id
    text = path.read_text("utf-8")
    assert text.startswith("# Session Transcript: sess_123\nStarted: 2026-02-09T10:00:01Z\n")
    assert "## Turn 2 (10:00:05)\n**User**: What programming languages" in text
    assert "**Agent**: Python for backend services" in text
    assert text.count("[Indexed: ") == 1
    assert "[Indexed: What programming languages should I use for my project backend?]" in text
    transcripts.index_and_write(engram, tmp_path / "transcripts", "sess_123", talk())
    assert engram.count() == 1  # indexing again changes nothing
    engram.close()


def test_session_ids_become_safe_file_names(tmp_path: Path) -> None:
    assert transcripts.transcript_path(tmp_path, "../../etc/passwd", agent="alice").parent == tmp_path / "alice"
    assert transcripts.transcript_path(tmp_path, "telegram:42", agent="alice") == tmp_path / "alice" / "telegram_42.md"
    with pytest.raises(ValidationError):
        transcripts.transcript_path(tmp_path, "telegram:42", agent="../bob")


def test_file_names_are_one_per_conversation() -> None:
    """Two conversations never share a transcript file, however sanitising treats their keys;
    the two spellings of one key do share it."""
    name = transcripts.file_name
    assert name("telegram:42") == name("telegram:42:") == "telegram_42"
    assert name("slack:C1:T7").startswith("slack_C1_T7__")  # a capital: see the case-insensitive test below
    assert name("web:a/b") != name("web:a_b")
    assert (name("web:a/b"), name("web:a_b")) == ("web_a_b__60222680ed14", "web_a_b__8c44408a6d5e")  # stable: docs/history.md
    # A plain key shaped like another key's digested name still gets a name of its own.
    lookalike = "web:a:" + name("web:a_b").removeprefix("web_a_")
    keys = ["telegram:42", "telegram_42:x", "telegram:4:2", "web:a/b", "web:a_b", "web_a:b", "web:a:b", lookalike,
            "cli:sess_123", "cli:sess-123", "x" * 128 + ":" + "y" * 128 + ":z", "x" * 128 + ":" + "y" * 128 + ":w",
            "sess_123", "sess-123", "../../etc/passwd", "..:..", "web:é", "web:e"]
    names = [name(key) for key in keys]
    assert len(set(names)) == len(keys), names
    assert all(0 < len(n) <= transcripts.MAX_PLAIN_NAME and not n.startswith(".") and "/" not in n for n in names)


def test_no_two_transcript_names_meet_on_a_case_insensitive_file_system() -> None:
    # macOS's and Windows' default file systems take web_Abc.md and web_abc.md for one file.
    name = transcripts.file_name
    keys = ["web:Abc", "web:abc", "web:ABC", "slack:C1:T7", "slack:c1:t7", "Sess-1", "sess-1", "web:a_B", "web:a_b",
            "telegram:42", "con", "CON", "web:a.", "nul.x"]
    folded = [name(key).casefold() for key in keys]
    assert len(set(folded)) == len(keys), dict(zip(keys, folded, strict=True))
    # Names Windows refuses (a device name, with any extension) are digested too.
    assert all(n.split(".")[0] not in ("con", "nul") for n in folded)


def test_agents_differing_in_case_or_holding_colons_keep_their_own_transcripts(tmp_path: Path) -> None:
    folder = tmp_path / "transcripts"
    written = {}
    for agent, key in [("Alice", "web:Abc"), ("Alice", "web:abc"), ("alice", "web:Abc"), ("alice", "web:abc"),
                       ("adk:app:u1", "web:abc")]:
        written[agent, key] = transcripts.write(folder, key, [make_message("user", f"{agent} on {key}", created_at=T0)],
                                                agent=agent)
    on_disk = [p.relative_to(folder) for p in sorted(folder.rglob("*.md"))]
    assert len({str(p).casefold() for p in on_disk}) == len(written) == len(on_disk)
    for (agent, key), path in written.items():
        assert path.read_text("utf-8").count(f"{agent} on {key}") == 1
    assert written["adk:app:u1", "web:abc"].parent.name == "adk+app+u1"
    assert all(":" not in str(p) for p in on_disk)


def test_an_agents_transcripts_folder_as_an_earlier_version_named_it_is_moved(tmp_path: Path) -> None:
    folder = tmp_path / "transcripts"
    (folder / "Alice").mkdir(parents=True)
    (folder / "Alice" / "telegram_42.md").write_text("# Session Transcript: telegram:42\n", "utf-8")
    path = transcripts.write(folder, "telegram:7", [make_message("user", "hello there", created_at=T0)], agent="Alice")
    assert path == folder / "!alice" / "telegram_7.md"
    assert sorted(os.listdir(folder)) == ["!alice"]
    assert (folder / "!alice" / "telegram_42.md").read_text("utf-8").startswith("# Session Transcript: telegram:42")


def test_two_agents_with_one_key_keep_separate_transcripts(tmp_path: Path) -> None:
    folder = tmp_path / "transcripts"
    mine = [make_message("user", "alice asks about the billing service", created_at=T0)]
    theirs = [make_message("user", "bob asks about the weather in Oslo", created_at=T0)]
    alice = transcripts.write(folder, "telegram:42", mine, agent="alice")
    bob = transcripts.write(folder, "telegram:42", theirs, agent="bob")
    assert alice != bob
    assert "billing service" in alice.read_text("utf-8") and "billing" not in bob.read_text("utf-8")
    assert "Oslo" in bob.read_text("utf-8")


def test_indexing_writes_the_transcript_of_the_engrams_agent(tmp_path: Path) -> None:
    engram = Engram(SqliteMemoryStore(tmp_path / "memory.db"))
    alice = engram.for_agent("alice")
    path = transcripts.index_and_write(alice, tmp_path / "transcripts", "sess_123", talk())
    assert path.parent == tmp_path / "transcripts" / "alice"
    assert [m.key for m in alice.list(scope="agent")] == ["transcript:sess_123:2"]
    assert engram.list(scope="agent") == []
    engram.close()


def test_an_empty_conversation_states_no_start() -> None:
    # It used to say "Started: 1970-01-01T00:00:00Z": the epoch stood in for the missing first message.
    assert transcripts.render("sess_123", []) == "# Session Transcript: sess_123\n"
