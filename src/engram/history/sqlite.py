"""The SQLite HistoryStore: messages keyed by (agent, conversation, seq) beside the memories.

A store acts for one agent (``agent``) and sees only that agent's conversations; ``for_agent``
gives another agent's store on the same connection.

It lives in the same database file as the memories by default and shares ``db.sqlite.Database``
(WAL, ``BEGIN IMMEDIATE`` writes, busy timeout), so appends from several processes queue for
the write lock instead of failing, and ``seq`` is taken inside the same transaction as the
insert: two writers can never get the same one. Messages are clustered by conversation
(``WITHOUT ROWID``), so ``get_recent`` is one short range scan whatever the table's size.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from engram.db.migrate import migrate
from engram.db.sqlite import Database
from engram.history.base import (
    DEFAULT_AGENT,
    check_agent,
    check_range,
    check_read,
    check_summary,
    check_summary_read,
)
from engram.history.keys import normal_key
from engram.history.sql_store import MESSAGE_COLUMNS, SqlHistoryStore
from engram.model import Message, Role, ToolCall

# engram_meta's mark that a per-agent database's owner took what migration 0007 left unattributed.
_ADOPTED = "history_adopted_by"


class SqliteHistoryStore(SqlHistoryStore):
    """HistoryStore on a SQLite database (see module docstring); the reads it shares with
    PostgreSQL are ``SqlHistoryStore``'s."""

    name = "sqlite"
    _mark = "?"

    def __init__(self, db: Database, *, agent: str = DEFAULT_AGENT, owns_db: bool = True) -> None:
        """Wrap an open, migrated database (see ``open``) for ``agent``; ``owns_db`` closes it on ``close``."""
        self.db = db
        self.agent = check_agent(agent)
        self._owns_db = owns_db

    @classmethod
    def open(cls, path: Path | str, *, busy_timeout_ms: int = 30_000, agent: str = DEFAULT_AGENT,
             key: str | None = None) -> SqliteHistoryStore:
        """Open (creating and migrating) the database at ``path`` (SQLCipher ``key`` when encrypted);
        raises ``StorageError``, ``IntegrityError`` for a wrong key."""
        db = Database(path, busy_timeout_ms=busy_timeout_ms, key=key)
        migrate(db)
        return cls(db, agent=agent)

    @classmethod
    def on(cls, db: Database, *, agent: str = DEFAULT_AGENT) -> SqliteHistoryStore:
        """Share a database another component opened (the memory store's); migrates it."""
        migrate(db)
        return cls(db, agent=agent, owns_db=False)

    def for_agent(self, agent: str) -> SqliteHistoryStore:
        """``agent``'s conversations on the same connection (closing it leaves the connection open)."""
        return SqliteHistoryStore(self.db, agent=agent, owns_db=False)

    @staticmethod
    def _message(row: Sequence[Any]) -> Message:
        role, content, tool_calls, tool_call_id, metadata, created_at = row
        # Most messages have neither: skip the JSON parser for them (get_recent's main cost).
        calls = () if tool_calls == "[]" else tuple(
            ToolCall(c["id"], c["name"], c.get("arguments", "{}")) for c in json.loads(tool_calls))
        return Message(Role(role), content, calls, tool_call_id, {} if metadata == "{}" else json.loads(metadata), created_at)

    def adopt_unowned(self) -> int:
        """Give this agent the conversations migration 0007 could not attribute (it gave them to
        the default agent). Only for a database that holds one agent's history (per-agent
        databases), where every such conversation was this agent's; returns how many messages.

        Only what was there when 0007 ran (written before it), and only once per database (marked
        in ``engram_meta``): the default agent's own conversations, written later into this file
        through a view of the engine that opened it (``engram -a alice serve`` with a token of
        agent ``default``), are that agent's, and were handed to this one at its next start."""
        if self.agent == DEFAULT_AGENT:
            return 0
        with self.db.write() as conn:
            if conn.execute("SELECT 1 FROM engram_meta WHERE name = ?", (_ADOPTED,)).fetchone():
                return 0
            conn.execute("INSERT INTO engram_meta (name, value) VALUES (?, ?)", (_ADOPTED, self.agent))
            (migrated_at,) = conn.execute("SELECT applied_at FROM schema_migrations WHERE version = 7").fetchone()
            moved = conn.execute("UPDATE history_messages SET agent = ? WHERE agent = ? AND created_at <= ?",
                                 (self.agent, DEFAULT_AGENT, migrated_at)).rowcount
            conn.execute("UPDATE history_summaries SET agent = ? WHERE agent = ? AND updated_at <= ?",
                         (self.agent, DEFAULT_AGENT, migrated_at))
            # The exchange index is derived data keyed by the owner: dropped, and re-warmed from history.
            conn.execute("DELETE FROM history_exchanges WHERE agent = ? AND created_at <= ?", (DEFAULT_AGENT, migrated_at))
        return int(moved)

    def _insert(self, key: str, messages: list[Message]) -> None:
        if not messages:
            return
        rows = [_row(m) for m in messages]  # encoded before the transaction opens
        # BEGIN IMMEDIATE holds the write lock from the MAX(seq) read to the commit, so the numbers
        # taken here are still free when the rows go in.
        with self.db.write() as conn:
            (last,) = conn.execute(
                "SELECT COALESCE(MAX(seq), 0) FROM history_messages WHERE agent = ? AND conversation = ?", (self.agent, key)
            ).fetchone()
            conn.executemany(
                f"INSERT INTO history_messages (agent, conversation, seq, {MESSAGE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(self.agent, key, last + i + 1, *row) for i, row in enumerate(rows)],
            )

    def set_summary(self, key: str, summary: str) -> None:
        key, summary = normal_key(key), check_summary(summary)
        with self.db.write() as conn:
            self._set_summary(conn, key, summary)

    def discard(self, key: str, start: int, stop: int) -> int:
        key = normal_key(key)
        start, stop = check_range(start, stop)
        if stop == start:
            return 0
        with self.db.write() as conn:
            cursor = conn.execute(
                "DELETE FROM history_messages WHERE agent = ? AND conversation = ? AND seq IN (SELECT seq FROM "
                "history_messages WHERE agent = ? AND conversation = ? ORDER BY seq LIMIT ? OFFSET ?)",
                (self.agent, key, self.agent, key, stop - start, start),
            )
            return int(cursor.rowcount)

    def pop_newest(self, key: str) -> Message | None:
        key = normal_key(key)
        # One write transaction (the write lock held from the read to the delete): no other pop,
        # append or discard comes between.
        with self.db.write() as conn:
            row = conn.execute(
                f"SELECT seq, {MESSAGE_COLUMNS} FROM history_messages WHERE agent = ? AND conversation = ? "
                "ORDER BY seq DESC LIMIT 1", (self.agent, key)).fetchone()
            if row is None:
                return None
            conn.execute("DELETE FROM history_messages WHERE agent = ? AND conversation = ? AND seq = ?",
                         (self.agent, key, row[0]))
        return self._message(row[1:])

    def discard_if_unchanged(self, key: str, read: Sequence[Message], start: int, stop: int, *,
                             summary: str | None = None, summary_read: str | None = None) -> bool:
        key = normal_key(key)
        read, start, stop = check_read(read, start, stop)
        summary = None if summary is None else check_summary(summary)
        summary_read = None if summary_read is None else check_summary_read(summary_read)
        with self.db.write() as conn:
            rows = conn.execute(
                f"SELECT seq, {MESSAGE_COLUMNS} FROM history_messages WHERE agent = ? AND conversation = ? ORDER BY seq LIMIT ?",
                (self.agent, key, len(read))).fetchall()
            # Compared as read, under the write lock: the rows removed are the ones the caller saw.
            if [self._message(r[1:]) for r in rows] != read:
                return False
            if summary_read is not None and self._summary(conn, key) != summary_read:
                return False
            if summary is not None:
                self._set_summary(conn, key, summary)
            conn.executemany("DELETE FROM history_messages WHERE agent = ? AND conversation = ? AND seq = ?",
                             [(self.agent, key, r[0]) for r in rows[start:stop]])
        return True

    def purge(self, key: str) -> None:
        key = normal_key(key)
        with self.db.write() as conn:
            conn.execute("DELETE FROM history_messages WHERE agent = ? AND conversation = ?", (self.agent, key))
            conn.execute("DELETE FROM history_summaries WHERE agent = ? AND conversation = ?", (self.agent, key))

    def conversations(self) -> list[str]:
        # An empty summary row (one a clear wrote before clearing deleted the row) is no conversation.
        with self.db.read() as conn:
            rows = conn.execute(
                "SELECT conversation FROM history_messages WHERE agent = ? UNION "
                "SELECT conversation FROM history_summaries WHERE agent = ? AND summary <> '' ORDER BY 1",
                (self.agent, self.agent),
            ).fetchall()
        return [r[0] for r in rows]


def _row(message: Message) -> tuple[Any, ...]:
    return (
        message.role.value,
        message.content,
        json.dumps([c.to_dict() for c in message.tool_calls], ensure_ascii=False),
        message.tool_call_id,
        json.dumps(dict(message.metadata), ensure_ascii=False),
        message.created_at,
    )
