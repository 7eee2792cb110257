"""What the SQLite and PostgreSQL history stores do in the same SQL, written once.

Both keep messages in ``history_messages`` keyed by (agent, conversation, seq) and summaries in
``history_summaries``, and read them with the same statements; they differ in the driver's
placeholder (``?`` / ``%s``), how a message's JSON columns are encoded and decoded, and how a
write keeps other writers out (SQLite's ``BEGIN IMMEDIATE``, PostgreSQL's advisory lock per
conversation). Each backend sets ``_mark`` and ``_message`` and implements its writes; the reads
below, and the summary upsert both write with, are these.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, ClassVar

from engram.history.base import check_message, check_messages, check_recent
from engram.history.keys import normal_key
from engram.model import Message

MESSAGE_COLUMNS = "role, content, tool_calls, tool_call_id, metadata, created_at"


class SqlHistoryStore:
    """The part of a SQL HistoryStore both backends share (see module docstring)."""

    db: Any  # the backend's database: ``read()`` opens a connection for one read
    agent: str
    _owns_db: bool
    _mark: ClassVar[str]  # the driver's placeholder

    @staticmethod
    def _message(row: Sequence[Any]) -> Message:
        """A ``MESSAGE_COLUMNS`` row as its message."""
        raise NotImplementedError

    def _insert(self, key: str, messages: list[Message]) -> None:
        """Append checked ``messages`` to conversation ``key`` in one transaction."""
        raise NotImplementedError

    def append(self, key: str, message: Message) -> None:
        self._insert(normal_key(key), [check_message(message)])

    def append_many(self, key: str, messages: Sequence[Message]) -> None:
        """Append ``messages`` in one transaction: all of them or, on any error, none."""
        self._insert(normal_key(key), check_messages(messages))

    def get_recent(self, key: str, n: int) -> list[Message]:
        key, n = normal_key(key), check_recent(n)
        if n == 0:
            return []
        m = self._mark
        with self.db.read() as conn:
            rows = conn.execute(
                f"SELECT {MESSAGE_COLUMNS} FROM history_messages WHERE agent = {m} AND conversation = {m}"
                f" ORDER BY seq DESC LIMIT {m}",
                (self.agent, key, n),
            ).fetchall()
        return [self._message(r) for r in reversed(rows)]

    def get_all(self, key: str) -> list[Message]:
        key = normal_key(key)
        m = self._mark
        with self.db.read() as conn:
            rows = conn.execute(
                f"SELECT {MESSAGE_COLUMNS} FROM history_messages WHERE agent = {m} AND conversation = {m} ORDER BY seq",
                (self.agent, key),
            ).fetchall()
        return [self._message(r) for r in rows]

    def count(self, key: str) -> int:
        key = normal_key(key)
        m = self._mark
        with self.db.read() as conn:
            row = conn.execute(f"SELECT COUNT(*) FROM history_messages WHERE agent = {m} AND conversation = {m}",
                               (self.agent, key)).fetchone()
        return int(row[0])

    def get_summary(self, key: str) -> str:
        key = normal_key(key)
        with self.db.read() as conn:
            return self._summary(conn, key)

    def _summary(self, conn: Any, key: str) -> str:
        """Conversation ``key``'s summary on ``conn`` ("" when it has none)."""
        m = self._mark
        row = conn.execute(f"SELECT summary FROM history_summaries WHERE agent = {m} AND conversation = {m}",
                           (self.agent, key)).fetchone()
        return row[0] if row else ""

    def _set_summary(self, conn: Any, key: str, summary: str) -> None:
        """Write conversation ``key``'s summary on ``conn``, inside the caller's transaction. ``""``
        (no summary) deletes the row rather than storing an empty one: a cleared summary of a
        conversation that never was left a row ``conversations`` listed, with 0 messages."""
        m = self._mark
        if not summary:
            conn.execute(f"DELETE FROM history_summaries WHERE agent = {m} AND conversation = {m}", (self.agent, key))
            return
        conn.execute(
            f"INSERT INTO history_summaries (agent, conversation, summary, updated_at) VALUES ({m}, {m}, {m}, {m})"
            " ON CONFLICT (agent, conversation) DO UPDATE SET summary = excluded.summary, updated_at = excluded.updated_at",
            (self.agent, key, summary, time.time()),
        )

    def close(self) -> None:
        if self._owns_db:
            self.db.close()
