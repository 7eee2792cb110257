"""The in-memory HistoryStore (sclaw's InMemoryHistoryStore): one process, no persistence."""

from __future__ import annotations

import threading

from engram.history.base import check_range, check_recent, check_summary
from engram.history.keys import normal_key
from engram.model import Message


class InMemoryHistoryStore:
    name = "inmemory"

    def __init__(self) -> None:
        self._messages: dict[str, list[Message]] = {}
        self._summaries: dict[str, str] = {}
        self._lock = threading.RLock()

    def append(self, key: str, message: Message) -> None:
        key = normal_key(key)
        with self._lock:
            self._messages.setdefault(key, []).append(message)

    def get_recent(self, key: str, n: int) -> list[Message]:
        key, n = normal_key(key), check_recent(n)
        with self._lock:
            return list(self._messages.get(key, [])[-n:]) if n else []

    def get_all(self, key: str) -> list[Message]:
        key = normal_key(key)
        with self._lock:
            return list(self._messages.get(key, []))

    def count(self, key: str) -> int:
        key = normal_key(key)
        with self._lock:
            return len(self._messages.get(key, []))

    def set_summary(self, key: str, summary: str) -> None:
        key, summary = normal_key(key), check_summary(summary)
        with self._lock:
            self._summaries[key] = summary

    def get_summary(self, key: str) -> str:
        key = normal_key(key)
        with self._lock:
            return self._summaries.get(key, "")

    def discard(self, key: str, start: int, stop: int) -> int:
        key = normal_key(key)
        start, stop = check_range(start, stop)
        with self._lock:
            messages = self._messages.get(key, [])
            removed = len(messages[start:stop])
            del messages[start:stop]
            return removed

    def purge(self, key: str) -> None:
        key = normal_key(key)
        with self._lock:
            self._messages.pop(key, None)
            self._summaries.pop(key, None)

    def conversations(self) -> list[str]:
        with self._lock:
            return sorted({k for k, v in self._messages.items() if v} | set(self._summaries))

    def close(self) -> None:
        pass
