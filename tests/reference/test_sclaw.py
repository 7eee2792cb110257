"""sclaw (reference 001) behaviours: history assembly on a real SQLite file; its YAML configuration."""

from __future__ import annotations

from pathlib import Path

from engram.history.service import History
from engram.history.sqlite import SqliteHistoryStore
from engram.model import Role


def test_assemble_puts_one_system_prompt_first_then_the_summary(tmp_path: Path) -> None:
    # sclaw: "The summary is stored via `SetSummary` and prepended as a system message on the next
    # assembly pass" - after the system prompt, and a new system prompt replaces the stored one.
    store = SqliteHistoryStore.open(tmp_path / "memory.db")
    try:
        history = History(store)
        history.append("telegram:42", "system", "You are a careful assistant.")
        history.append("telegram:42", "user", "hello")
        store.set_summary("telegram:42:", "The user greeted us.")
        fresh = history.assemble("telegram:42", "SYS")
        assert [m.role for m in fresh] == [Role.SYSTEM, Role.SYSTEM, Role.USER]
        assert fresh[0].content == "SYS" and "The user greeted us." in fresh[1].content
        kept = history.assemble("telegram:42")
        assert kept[0].content == "You are a careful assistant." and kept[2].content == "hello"
    finally:
        store.close()
