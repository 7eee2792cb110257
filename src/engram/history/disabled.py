"""The history of memory turned off (``backend = "disabled"`` with ``history.backend`` left at its
default): every read answers empty and nothing is kept, not even in process, as the disabled memory
store keeps nothing (sclaw: memory disabled means "no errors, no facts, no persistence", its history
tier included). ``History`` over it is switched off (``MEMORY_OFF``), so each door says an append
was not stored rather than answering as if it were.
"""

from __future__ import annotations

from collections.abc import Sequence

from engram.history.base import check_message, check_messages, check_summary
from engram.history.inmemory import InMemoryHistoryStore
from engram.model import Message


class DisabledHistoryStore(InMemoryHistoryStore):
    """Reads of the in-memory store over shelves that no write fills: checked, then dropped."""

    name = "disabled"

    def for_agent(self, agent: str) -> DisabledHistoryStore:
        return DisabledHistoryStore(agent=agent)

    def append(self, key: str, message: Message) -> None:
        self._id(key)
        check_message(message)

    def append_many(self, key: str, messages: Sequence[Message]) -> None:
        self._id(key)
        check_messages(messages)

    def set_summary(self, key: str, summary: str) -> None:
        self._id(key)
        check_summary(summary)
