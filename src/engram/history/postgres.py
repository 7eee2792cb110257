"""The PostgreSQL HistoryStore: conversation history shared by every engram process on one database.

Messages are keyed by (agent, conversation, seq) as on SQLite (migrations ``postgres/0003_history``
and ``0006_history_agent``); a store acts for one agent and ``for_agent`` gives another's on the
same pool.
An append (one message, or a batch in one transaction) takes a transaction-scoped advisory lock
on the conversation before reading ``MAX(seq)``, so two processes can never take the same number
and numbers follow commit order: a reader never sees message 7 before message 6 has committed,
and positions (``discard``) stay meaningful while others append. Each call is one short transaction from the pool of
``db/postgres.py``; tool calls are JSONB, metadata JSON (kept as written).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from psycopg.types.json import Json, Jsonb

from engram.db.pg_settings import PostgresSettings
from engram.db.postgres import PgDatabase
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

_INSERT = (
    f"INSERT INTO history_messages (agent, conversation, seq, {MESSAGE_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
)


def lock_conversation(conn: Any, agent: str, key: str) -> int:
    """Serialise appends to one conversation (across processes: ``engram migrate`` merging into it
    too) and return its last seq."""
    conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (f"engram-history\x1f{agent}\x1f{key}",))
    row = conn.execute("SELECT COALESCE(MAX(seq), 0) FROM history_messages WHERE agent = %s AND conversation = %s",
                       (agent, key)).fetchone()
    return int(row[0])


class PostgresHistoryStore(SqlHistoryStore):
    """HistoryStore on a shared PostgreSQL database (see module docstring); the reads it shares
    with SQLite are ``SqlHistoryStore``'s."""

    name = "postgres"
    _mark = "%s"

    def __init__(self, db: PgDatabase, *, agent: str = DEFAULT_AGENT, owns_db: bool = True) -> None:
        """Wrap a connected, migrated database (see ``open``) for ``agent``; ``owns_db`` closes it on ``close``."""
        self.db = db
        self.agent = check_agent(agent)
        self._owns_db = owns_db

    @classmethod
    def open(cls, dsn: str, settings: PostgresSettings | None = None, *,
             agent: str = DEFAULT_AGENT) -> PostgresHistoryStore:
        """Connect to (and migrate) the database at ``dsn``; raises ``ConfigError``/``StorageError``."""
        return cls(PgDatabase.connect(dsn, settings), agent=agent)

    @classmethod
    def on(cls, db: PgDatabase, *, agent: str = DEFAULT_AGENT) -> PostgresHistoryStore:
        """Share a pool another component opened (the memory store's)."""
        return cls(db, agent=agent, owns_db=False)

    def for_agent(self, agent: str) -> PostgresHistoryStore:
        """``agent``'s conversations on the same pool (closing it leaves the pool open)."""
        return PostgresHistoryStore(self.db, agent=agent, owns_db=False)

    @staticmethod
    def _message(row: Sequence[Any]) -> Message:
        role, content, tool_calls, tool_call_id, metadata, created_at = row
        calls = tuple(ToolCall(c["id"], c["name"], c.get("arguments", "{}")) for c in tool_calls)
        return Message(Role(role), content, calls, tool_call_id, metadata, created_at)

    def _insert(self, key: str, messages: list[Message]) -> None:
        rows = [_row(m) for m in messages]
        if not rows:
            return

        def work(conn: Any) -> None:
            last = lock_conversation(conn, self.agent, key)
            with conn.cursor() as cur:
                cur.executemany(_INSERT, [(self.agent, key, last + i + 1, *row) for i, row in enumerate(rows)])

        self.db.transact(work)

    def set_summary(self, key: str, summary: str) -> None:
        key, summary = normal_key(key), check_summary(summary)  # NUL refused there, as on every backend

        def work(conn: Any) -> None:
            # Under the conversation's lock: a compaction comparing the summary it read sees this one.
            lock_conversation(conn, self.agent, key)
            self._set_summary(conn, key, summary)

        self.db.transact(work)

    def discard(self, key: str, start: int, stop: int) -> int:
        key = normal_key(key)
        start, stop = check_range(start, stop)
        if stop == start:
            return 0

        def work(conn: Any) -> int:
            # Under the append lock, so the positions counted here are the ones removed.
            lock_conversation(conn, self.agent, key)
            cursor = conn.execute(
                "DELETE FROM history_messages WHERE agent = %s AND conversation = %s AND seq IN (SELECT seq FROM "
                "history_messages WHERE agent = %s AND conversation = %s ORDER BY seq LIMIT %s OFFSET %s)",
                (self.agent, key, self.agent, key, stop - start, start),
            )
            return int(cursor.rowcount)

        return self.db.transact(work)

    def pop_newest(self, key: str) -> Message | None:
        key = normal_key(key)

        def work(conn: Any) -> Message | None:
            # Under the append lock: no other pop, append or discard of the conversation comes between.
            lock_conversation(conn, self.agent, key)
            row = conn.execute(
                f"DELETE FROM history_messages WHERE agent = %s AND conversation = %s AND seq = (SELECT MAX(seq) FROM "
                f"history_messages WHERE agent = %s AND conversation = %s) RETURNING {MESSAGE_COLUMNS}",
                (self.agent, key, self.agent, key)).fetchone()
            return None if row is None else self._message(row)

        return self.db.transact(work)

    def discard_if_unchanged(self, key: str, read: Sequence[Message], start: int, stop: int, *,
                             summary: str | None = None, summary_read: str | None = None) -> bool:
        key = normal_key(key)
        read, start, stop = check_read(read, start, stop)
        if summary is not None:
            summary = check_summary(summary)
        summary_read = None if summary_read is None else check_summary_read(summary_read)

        def work(conn: Any) -> bool:
            # Compared as read, under the append lock: the rows removed are the ones the caller saw.
            lock_conversation(conn, self.agent, key)
            rows = conn.execute(
                f"SELECT seq, {MESSAGE_COLUMNS} FROM history_messages WHERE agent = %s AND conversation = %s"
                " ORDER BY seq LIMIT %s",
                (self.agent, key, len(read))).fetchall()
            if [self._message(r[1:]) for r in rows] != read:
                return False
            # set_summary takes the same lock, so it cannot slip in after this
            if summary_read is not None and self._summary(conn, key) != summary_read:
                return False
            if summary is not None:
                self._set_summary(conn, key, summary)
            gone = [r[0] for r in rows[start:stop]]
            if gone:
                conn.execute("DELETE FROM history_messages WHERE agent = %s AND conversation = %s AND seq = ANY(%s)",
                             (self.agent, key, gone))
            return True

        return self.db.transact(work)

    def purge(self, key: str) -> None:
        key = normal_key(key)

        def work(conn: Any) -> None:
            lock_conversation(conn, self.agent, key)
            conn.execute("DELETE FROM history_messages WHERE agent = %s AND conversation = %s", (self.agent, key))
            conn.execute("DELETE FROM history_summaries WHERE agent = %s AND conversation = %s", (self.agent, key))

        self.db.transact(work)

    def conversations(self) -> list[str]:
        # An empty summary row (one a clear wrote before clearing deleted the row) is no conversation.
        with self.db.read() as conn:
            rows = conn.execute(
                "SELECT conversation FROM history_messages WHERE agent = %s UNION "
                "SELECT conversation FROM history_summaries WHERE agent = %s AND summary <> '' ORDER BY 1",
                (self.agent, self.agent),
            ).fetchall()
        return [r[0] for r in rows]


def _row(message: Message) -> tuple[Any, ...]:
    # NUL, which PostgreSQL text cannot hold, was refused by check_message.
    return (
        message.role.value,
        message.content,
        Jsonb([c.to_dict() for c in message.tool_calls]),
        message.tool_call_id,
        Json(dict(message.metadata)),
        message.created_at,
    )
