"""A closed engine's conversation history refuses every read and write with one clear error, on
every local history backend, and writes nothing.

Review: after ``close`` a history held from before (``h = mem.history``) went on appending and
answering on the JSON-lines and in-memory stores (a JSON-lines append after close reached the file),
SQLite's failed with its raw "Cannot operate on a closed database", and ``mem.history`` itself
opened a new history on the shut engine."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from engram.config import load_settings
from engram.engine import Engram
from engram.errors import StorageError
from engram.history.service import History

KEY = "telegram:42"

CALLS: dict[str, Callable[[History], Any]] = {
    "append": lambda h: h.append(KEY, "user", "written after close"),
    "append_many": lambda h: h.append_many(KEY, [{"role": "user", "content": "written after close"}]),
    "recent": lambda h: h.recent(KEY),
    "all": lambda h: h.all(KEY),
    "count": lambda h: h.count(KEY),
    "summary": lambda h: h.summary(KEY),
    "set_summary": lambda h: h.set_summary(KEY, "a summary after close"),
    "conversations": lambda h: h.conversations(),
    "pop_newest": lambda h: h.pop_newest(KEY),
    "purge": lambda h: h.purge(KEY),
    "semantic_recall": lambda h: h.semantic_recall("hello"),
    "assemble": lambda h: h.assemble(KEY),
    "compact": lambda h: h.compact(KEY, force=True),
    "another agent's view": lambda h: h.for_agent("bob").recent(KEY),
}


def _open(home: Path, history: str) -> Engram:
    settings = load_settings(home=home, history={"backend": history}, files={"enabled": False})
    return Engram.from_settings(settings, mirror=False)


@pytest.mark.parametrize("backend", ["sqlite", "jsonl", "inmemory"])
@pytest.mark.parametrize("call", sorted(CALLS))
def test_a_closed_engines_history_refuses_and_writes_nothing(tmp_path: Path, backend: str, call: str) -> None:
    mem = _open(tmp_path, backend)
    history = mem.history
    history.append(KEY, "user", "said before close")
    history.set_summary(KEY, "the summary before close")
    mem.close()

    with pytest.raises(StorageError, match="^this conversation history is closed: open a new engram"):
        CALLS[call](history)
    with pytest.raises(StorageError, match="^this engram is closed: open a new one to use its conversation history"):
        mem.history  # noqa: B018 - the property is the call under test: it opened a new history on the shut engine

    if backend != "inmemory":  # what the file holds: the message and summary from before, nothing after
        with _open(tmp_path, backend) as again:
            assert [m.content for m in again.history.all(KEY)] == ["said before close"]
            assert again.history.summary(KEY) == "the summary before close"
