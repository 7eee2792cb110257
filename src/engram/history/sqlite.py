"""The SQLite HistoryStore: messages keyed by (conversation, seq) beside the memories.

It lives in the same database file as the memories by default and shares ``db.sqlite.Database``
(WAL, ``BEGIN IMMEDIATE`` writes, busy timeout), so appends from several processes queue for
the write lock instead of failing, and ``seq`` is taken inside the same transaction as the
insert: two writers can never get the same one. Messages are clustered by conversation
(``WITHOUT ROWID``), so ``get_recent`` is one short range scan whatever the table's size.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from engram.db.migrate import migrate
from engram.db.sqlite import Database
from engram.history.base import check_range, check_recent, check_summary
from engram.history.keys import normal_key
from engram.model import Message, Role, ToolCall

_COLUMNS = "role, content, tool_calls, tool_call_id, metadata, created_at"


class SqliteHistoryStore:
    name = "sqlite"

    def __init__(self, db: Database, *, owns_db: bool = True) -> None:
        """Wrap an open, migrated database (see ``open``); ``owns_db`` closes it on ``close``."""
        self.db = db
        self._owns_db = owns_db

    @classmethod
    def open(cls, path: Path | str, *, busy_timeout_ms: int = 30_000) -> SqliteHistoryStore:
        """Open (creating and migrating) the database at ``path``; raises ``StorageError``."""
        db = Database(path, busy_timeout_ms=busy_timeout_ms)
        migrate(db)
        return cls(db)

    @classmethod
    def on(cls, db: Database) -> SqliteHistoryStore:
        """Share a database another component opened (the memory store's); migrates it."""
        migrate(db)
        return cls(db, owns_db=False)

    def append(self, key: str, message: Message) -> None:
        key = normal_key(key)
        row = _row(message)
        with self.db.write() as conn:
            conn.execute(
                f"INSERT INTO history_messages (conversation, seq, {_COLUMNS}) VALUES (?, "
                "(SELECT COALESCE(MAX(seq), 0) + 1 FROM history_messages WHERE conversation = ?), ?, ?, ?, ?, ?, ?)",
                (key, key, *row),
            )

    def append_many(self, key: str, messages: Sequence[Message]) -> None:
        """Append several messages in one transaction (bulk loads, benchmarks)."""
        key = normal_key(key)
        with self.db.write() as conn:
            (last,) = conn.execute(
                "SELECT COALESCE(MAX(seq), 0) FROM history_messages WHERE conversation = ?", (key,)
            ).fetchone()
            conn.executemany(
                f"INSERT INTO history_messages (conversation, seq, {_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(key, last + i + 1, *_row(m)) for i, m in enumerate(messages)],
            )

    def get_recent(self, key: str, n: int) -> list[Message]:
        key, n = normal_key(key), check_recent(n)
        if n == 0:
            return []
        with self.db.read() as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM history_messages WHERE conversation = ? ORDER BY seq DESC LIMIT ?", (key, n)
            ).fetchall()
        return [_message(r) for r in reversed(rows)]

    def get_all(self, key: str) -> list[Message]:
        key = normal_key(key)
        with self.db.read() as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM history_messages WHERE conversation = ? ORDER BY seq", (key,)
            ).fetchall()
        return [_message(r) for r in rows]

    def count(self, key: str) -> int:
        key = normal_key(key)
        with self.db.read() as conn:
            return int(conn.execute("SELECT COUNT(*) FROM history_messages WHERE conversation = ?", (key,)).fetchone()[0])

    def set_summary(self, key: str, summary: str) -> None:
        key, summary = normal_key(key), check_summary(summary)
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO history_summaries (conversation, summary, updated_at) VALUES (?, ?, ?) "
                "ON CONFLICT (conversation) DO UPDATE SET summary = excluded.summary, updated_at = excluded.updated_at",
                (key, summary, time.time()),
            )

    def get_summary(self, key: str) -> str:
        key = normal_key(key)
        with self.db.read() as conn:
            row = conn.execute("SELECT summary FROM history_summaries WHERE conversation = ?", (key,)).fetchone()
        return row[0] if row else ""

    def discard(self, key: str, start: int, stop: int) -> int:
        key = normal_key(key)
        start, stop = check_range(start, stop)
        if stop == start:
            return 0
        with self.db.write() as conn:
            cursor = conn.execute(
                "DELETE FROM history_messages WHERE conversation = ? AND seq IN (SELECT seq FROM history_messages "
                "WHERE conversation = ? ORDER BY seq LIMIT ? OFFSET ?)",
                (key, key, stop - start, start),
            )
            return int(cursor.rowcount)

    def purge(self, key: str) -> None:
        key = normal_key(key)
        with self.db.write() as conn:
            conn.execute("DELETE FROM history_messages WHERE conversation = ?", (key,))
            conn.execute("DELETE FROM history_summaries WHERE conversation = ?", (key,))

    def conversations(self) -> list[str]:
        with self.db.read() as conn:
            rows = conn.execute(
                "SELECT DISTINCT conversation FROM history_messages UNION SELECT conversation FROM history_summaries "
                "ORDER BY 1"
            ).fetchall()
        return [r[0] for r in rows]

    def close(self) -> None:
        if self._owns_db:
            self.db.close()


def _row(message: Message) -> tuple[Any, ...]:
    return (
        message.role.value,
        message.content,
        json.dumps([c.to_dict() for c in message.tool_calls], ensure_ascii=False),
        message.tool_call_id,
        json.dumps(dict(message.metadata), ensure_ascii=False),
        message.created_at,
    )


def _message(row: Sequence[Any]) -> Message:
    role, content, tool_calls, tool_call_id, metadata, created_at = row
    calls = tuple(ToolCall(c["id"], c["name"], c.get("arguments", "{}")) for c in json.loads(tool_calls))
    return Message(Role(role), content, calls, tool_call_id, json.loads(metadata), created_at)
