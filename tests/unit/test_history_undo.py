"""An undone message is not recalled, on every local history backend (tests/history_undo.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.engine import Engram
from engram.files import transcripts
from tests.history_undo import KEY, QUESTION, batch_turns_each_keep_a_memory, undone_answer_is_not_recalled


@pytest.mark.parametrize("backend", ["sqlite", "jsonl", "inmemory"])
def test_an_undone_answer_leaves_long_term_memory(tmp_path: Path, backend: str) -> None:
    def open_engine(agent: str) -> Engram:
        return Engram.from_settings(home=tmp_path, path=tmp_path / "memory.db", embeddings={"provider": "none"},
                                    history={"transcript_auto_index": True, "backend": backend}, agent=agent)

    undone_answer_is_not_recalled(open_engine)


def test_an_undo_forgets_a_turn_indexed_by_hand(tmp_path: Path) -> None:
    """Without automatic indexing, a turn ``history transcript --index`` stored is forgotten too,
    whichever spelling of the key (``cli:trip`` as typed, ``cli:trip:`` as stored) it was indexed under."""
    for backend in ("sqlite", "inmemory"):
        mem = Engram.from_settings(home=tmp_path / backend, path=tmp_path / backend / "memory.db",
                                   embeddings={"provider": "none"}, history={"backend": backend})
        try:
            mem.history.append(KEY, "user", QUESTION)
            mem.history.append(KEY, "assistant", "Zephyrair flies there daily from the old terminal.")
            transcripts.index(mem, KEY, mem.history.all(KEY))
            mem.for_agent("bob").history.append(KEY, "user", QUESTION)
            transcripts.index(mem.for_agent("bob"), KEY, mem.for_agent("bob").history.all(KEY))
            assert mem.count() == 1
            mem.history.pop_newest(KEY)
            assert mem.count() == 0 and not mem.recall("Zephyrair terminal")
            assert mem.for_agent("bob").count() == 1  # bob's turn stays
        finally:
            mem.close()


@pytest.mark.parametrize("backend", ["sqlite", "jsonl"])  # the scenario reopens the history
def test_turns_appended_in_one_batch_keep_a_memory_each(tmp_path: Path, backend: str) -> None:
    def open_engine(agent: str) -> Engram:
        return Engram.from_settings(home=tmp_path, path=tmp_path / "memory.db", embeddings={"provider": "none"},
                                    history={"transcript_auto_index": True, "backend": backend}, agent=agent)

    batch_turns_each_keep_a_memory(open_engine)
