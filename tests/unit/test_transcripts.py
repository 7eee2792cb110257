"""Transcripts in ClawCode's markdown, and substantive turns indexed as conversation memories."""

from __future__ import annotations

from pathlib import Path

from engram.engine import Engram
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
    assert memory.metadata == {"session": "sess_123", "turn": 2, "time": "2026-02-09T10:00:05Z"}
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
    assert transcripts.transcript_path(tmp_path, "../../etc/passwd").parent == tmp_path
