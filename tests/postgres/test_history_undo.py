"""An undone message is not recalled with history and memories in PostgreSQL (tests/history_undo.py)."""

from __future__ import annotations

from pathlib import Path

from engram.engine import Engram
from engram.history.postgres import PostgresHistoryStore
from tests.history_undo import batch_turns_each_keep_a_memory, undone_answer_is_not_recalled


def test_an_undone_answer_leaves_long_term_memory(pg_url: str, tmp_path: Path) -> None:
    def open_engine(agent: str) -> Engram:
        mem = Engram.from_settings(home=tmp_path / agent, database_url=pg_url, embeddings={"provider": "none"},
                                   history={"transcript_auto_index": True}, agent=agent)
        assert isinstance(mem.history.store, PostgresHistoryStore)
        return mem

    undone_answer_is_not_recalled(open_engine)


def test_turns_appended_in_one_batch_keep_a_memory_each(pg_url: str, tmp_path: Path) -> None:
    def open_engine(agent: str) -> Engram:
        return Engram.from_settings(home=tmp_path / agent, database_url=pg_url, embeddings={"provider": "none"},
                                    history={"transcript_auto_index": True}, agent=agent)

    batch_turns_each_keep_a_memory(open_engine)
