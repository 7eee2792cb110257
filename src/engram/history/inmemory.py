"""The in-memory HistoryStore (sclaw's InMemoryHistoryStore): one process, no persistence.

Every agent's conversations live in one ``_Shelves`` object, keyed by (agent, conversation);
``for_agent`` gives another agent's store over the same shelves.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from engram.history.base import (
    DEFAULT_AGENT,
    check_agent,
    check_message,
    check_messages,
    check_range,
    check_read,
    check_recent,
    check_summary,
    check_summary_read,
)
from engram.history.keys import normal_key
from engram.model import Message


class _Shelves:
    """What the stores of every agent share."""

    def __init__(self) -> None:
        self.messages: dict[tuple[str, str], list[Message]] = {}
        self.summaries: dict[tuple[str, str], str] = {}
        self.lock = threading.RLock()


class InMemoryHistoryStore:
    name = "inmemory"

    def __init__(self, *, agent: str = DEFAULT_AGENT, shelves: _Shelves | None = None) -> None:
        self.agent = check_agent(agent)
        self._shelves = shelves or _Shelves()
        self._lock = self._shelves.lock

    def for_agent(self, agent: str) -> InMemoryHistoryStore:
        return InMemoryHistoryStore(agent=agent, shelves=self._shelves)

    def _id(self, key: str) -> tuple[str, str]:
        return (self.agent, normal_key(key))

    def append(self, key: str, message: Message) -> None:
        ident = self._id(key)
        message = check_message(message)
        with self._lock:
            self._shelves.messages.setdefault(ident, []).append(message)

    def append_many(self, key: str, messages: Sequence[Message]) -> None:
        """Append ``messages`` under the lock, after checking them all: all or none."""
        ident, batch = self._id(key), check_messages(messages)
        if batch:
            with self._lock:
                self._shelves.messages.setdefault(ident, []).extend(batch)

    def get_recent(self, key: str, n: int) -> list[Message]:
        ident, n = self._id(key), check_recent(n)
        with self._lock:
            return list(self._shelves.messages.get(ident, [])[-n:]) if n else []

    def get_all(self, key: str) -> list[Message]:
        ident = self._id(key)
        with self._lock:
            return list(self._shelves.messages.get(ident, []))

    def count(self, key: str) -> int:
        ident = self._id(key)
        with self._lock:
            return len(self._shelves.messages.get(ident, []))

    def set_summary(self, key: str, summary: str) -> None:
        ident, summary = self._id(key), check_summary(summary)
        with self._lock:
            if summary:
                self._shelves.summaries[ident] = summary
            else:  # no summary: no entry, which conversations() would list
                self._shelves.summaries.pop(ident, None)

    def get_summary(self, key: str) -> str:
        ident = self._id(key)
        with self._lock:
            return self._shelves.summaries.get(ident, "")

    def discard(self, key: str, start: int, stop: int) -> int:
        ident = self._id(key)
        start, stop = check_range(start, stop)
        with self._lock:
            messages = self._shelves.messages.get(ident, [])
            removed = len(messages[start:stop])
            del messages[start:stop]
            return removed

    def pop_newest(self, key: str) -> Message | None:
        ident = self._id(key)
        with self._lock:
            messages = self._shelves.messages.get(ident)
            return messages.pop() if messages else None

    def discard_if_unchanged(self, key: str, read: Sequence[Message], start: int, stop: int, *,
                             summary: str | None = None, summary_read: str | None = None) -> bool:
        ident = self._id(key)
        read, start, stop = check_read(read, start, stop)
        summary = None if summary is None else check_summary(summary)
        summary_read = None if summary_read is None else check_summary_read(summary_read)
        with self._lock:
            messages = self._shelves.messages.get(ident, [])
            if messages[: len(read)] != read:
                return False
            if summary_read is not None and self._shelves.summaries.get(ident, "") != summary_read:
                return False
            if summary is not None:
                self._shelves.summaries[ident] = summary
            del messages[start:stop]
            return True

    def purge(self, key: str) -> None:
        ident = self._id(key)
        with self._lock:
            self._shelves.messages.pop(ident, None)
            self._shelves.summaries.pop(ident, None)

    def conversations(self) -> list[str]:
        with self._lock:
            keys = [k for k, v in self._shelves.messages.items() if v] + list(self._shelves.summaries)
        return sorted({conversation for agent, conversation in keys if agent == self.agent})

    def close(self) -> None:
        pass
