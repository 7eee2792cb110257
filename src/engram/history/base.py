"""The HistoryStore contract: one narrow Protocol every history backend implements.

A store keeps, per conversation key (``history.keys``), an ordered list of ``Message`` records
and at most one summary. It is dumb on purpose: validation of tool-call pairs, trimming to
``max_history_len`` and semantic indexing live once in ``history.service``. Every method is
safe to call from several threads, and from several processes on the same storage.
``engram.testing.history_contract`` pins the behaviour; a backend is done when it passes.

A store acts for one agent (``agent``): it reads, changes and deletes only that agent's
conversations, so two agents may use the same conversation key without meeting. ``for_agent``
hands out another agent's store on the same storage (connection, pool or file).

Positions are counted from the oldest message (0-based), so ``discard(key, start, stop)`` keeps
meaning the same messages while other writers append at the end.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from engram.errors import ValidationError
from engram.model import MAX_MESSAGE_CHARS, Message, make_scope

DEFAULT_AGENT = "default"


@runtime_checkable
class HistoryStore(Protocol):
    name: str
    agent: str

    def for_agent(self, agent: str) -> HistoryStore:
        """The store of ``agent``'s conversations on the same storage; closing it leaves the
        storage open for this one. Raises ``ValidationError`` for a bad agent name."""
        ...

    def append(self, key: str, message: Message) -> None:
        """Add ``message`` at the end of the conversation. Raises ``ValidationError`` for a bad
        key, ``StorageError`` when the write failed (then nothing was written)."""
        ...

    def get_recent(self, key: str, n: int) -> list[Message]:
        """The ``n`` most recent messages, oldest first (fewer when there are fewer; [] for 0).
        Raises ``ValidationError`` for a negative ``n`` or a bad key."""
        ...

    def get_all(self, key: str) -> list[Message]:
        """Every message of the conversation, oldest first."""
        ...

    def count(self, key: str) -> int:
        """How many messages the conversation holds (sclaw's ``Len``)."""
        ...

    def set_summary(self, key: str, summary: str) -> None:
        """Store the compaction summary, replacing any previous one."""
        ...

    def get_summary(self, key: str) -> str:
        """The stored summary, or ``""`` when there is none."""
        ...

    def discard(self, key: str, start: int, stop: int) -> int:
        """Remove the messages at positions ``start``..``stop - 1`` (oldest is 0); returns how many."""
        ...

    def purge(self, key: str) -> None:
        """Remove every message and the summary of the conversation."""
        ...

    def conversations(self) -> list[str]:
        """Every conversation key that holds messages or a summary."""
        ...

    def close(self) -> None: ...


def check_agent(agent: str) -> str:
    """Validate an agent name (as ``Scope`` does); raises ``ValidationError``."""
    make_scope(agent, None)
    return agent


def check_recent(n: int) -> int:
    """Validate ``get_recent``'s ``n``; raises ``ValidationError``."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValidationError("n", f"{n!r} is not a message count", "an integer >= 0")
    return n


def check_range(start: int, stop: int) -> tuple[int, int]:
    """Validate ``discard``'s positions; raises ``ValidationError``."""
    for name, value in (("start", start), ("stop", stop)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValidationError(name, f"{value!r} is not a position", "an integer >= 0")
    if stop < start:
        raise ValidationError("stop", f"{stop} is before start {start}", "stop >= start")
    return start, stop


def check_summary(summary: str) -> str:
    if not isinstance(summary, str):
        raise ValidationError("summary", f"got {type(summary).__name__}", "text")
    if len(summary) > MAX_MESSAGE_CHARS:
        raise ValidationError("summary", f"is {len(summary)} characters", f"up to {MAX_MESSAGE_CHARS}")
    return summary
