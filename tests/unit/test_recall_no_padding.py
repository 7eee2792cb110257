"""Recall's promise, on a real SQLite file: "Nothing relevant gives an empty result with a note
saying why, never padding" (engram.search) - no hits scored 0.000 after the ones that match."""

from __future__ import annotations

from pathlib import Path

from engram.engine import Engram
from engram.store.sqlite import SqliteMemoryStore
from engram.testing.fakes import HashingEmbedder


def _fill(mem: Engram) -> None:
    for i in range(12):
        mem.remember(f"project note number {i} about topic{i}")


def test_a_term_in_every_row_does_not_pad_the_result(tmp_path: Path) -> None:
    mem = Engram(SqliteMemoryStore(tmp_path / "memory.db"), agent="alice")
    try:
        _fill(mem)
        # 'project' is in every row, so it tells them apart by nothing: only topic3 is relevant.
        result = mem.recall("project topic3", mode="text")
        assert [h.memory.content for h in result] == ["project note number 3 about topic3"]
        assert all(h.score > 0.001 for h in result)
        # Asked for on its own, the common term still finds the rows that hold it.
        assert len(mem.recall("project", mode="text", limit=20)) == 12
    finally:
        mem.close()


def test_a_model_change_answers_from_text_without_padding(tmp_path: Path) -> None:
    store = SqliteMemoryStore(tmp_path / "memory.db")
    try:
        _fill(Engram(store, agent="alice", embedder=HashingEmbedder(model="one")))
        switched = Engram(store, agent="alice", embedder=HashingEmbedder(model="two"))
        result = switched.recall("project topic3")
        assert result.mode == "text" and any("reindex" in note for note in result.notes)
        assert [h.memory.content for h in result] == ["project note number 3 about topic3"]
    finally:
        store.close()
