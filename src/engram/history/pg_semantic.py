"""The semantic store of exchanges on PostgreSQL: ``ExchangeIndex`` with its rows in the shared
database (``history_exchanges``, migration ``postgres/0003_history``).

Ranking is ``ExchangeIndex``'s numpy path (exact, over one conversation's rows; sqlite-vec is
SQLite's); only storage differs. Inserts and the FIFO prune run in one short transaction; embedding happens before it.
"""

from __future__ import annotations

from typing import Any

from engram.db.postgres import PgDatabase
from engram.history.keys import normal_key
from engram.history.semantic import ExchangeEmbedder, ExchangeIndex
from engram.model import Exchange

_PRUNE_LOCK = 0x656E6778  # one pruner at a time, so concurrent prunes never over-delete


class PgExchangeIndex(ExchangeIndex):
    def __init__(self, db: PgDatabase, embedder: ExchangeEmbedder, **options: Any) -> None:  # type: ignore[override]
        """Use a connected, migrated PostgreSQL database (the history store's pool, not owned).
        ``for_agent`` (inherited) builds the same class over the same pool for another agent."""
        super().__init__(db, embedder, **options)  # type: ignore[arg-type]

    def _known(self, fingerprints: list[str]) -> set[str]:
        with self.db.read() as conn:
            rows = conn.execute(
                "SELECT fingerprint FROM history_exchanges WHERE identity = %s AND fingerprint = ANY(%s)",
                (self.identity, fingerprints),
            ).fetchall()
        return {r[0] for r in rows}

    def _cutoff(self) -> float | None:
        with self.db.read() as conn:
            row = conn.execute(
                "SELECT created_at FROM history_exchanges WHERE agent = %s ORDER BY created_at DESC, id DESC"
                " LIMIT 1 OFFSET %s", (self.agent, self.max_entries - 1)).fetchone()
        return None if row is None else float(row[0])

    def _store(self, rows: list[tuple[Any, ...]]) -> None:
        def work(conn: Any) -> None:
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO history_exchanges (agent, conversation, user_text, assistant_text, created_at,"
                    " fingerprint, identity, vector) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (fingerprint)"
                    " DO UPDATE SET"
                    " identity = excluded.identity, vector = excluded.vector",
                    rows,
                )
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_PRUNE_LOCK,))
            conn.execute(
                "DELETE FROM history_exchanges WHERE agent = %s AND id NOT IN "
                "(SELECT id FROM history_exchanges WHERE agent = %s ORDER BY created_at DESC, id DESC LIMIT %s)",
                (self.agent, self.agent, self.max_entries),
            )

        self.db.transact(work)

    def _stale(self) -> list[Exchange]:
        with self.db.read() as conn:
            rows = conn.execute(
                "SELECT conversation, user_text, assistant_text, created_at FROM history_exchanges"
                " WHERE agent = %s AND (identity IS DISTINCT FROM %s OR vector IS NULL)", (self.agent, self.identity)
            ).fetchall()
        return [Exchange(*row) for row in rows]

    def _candidates(self, conversation: str | None) -> list[tuple[Any, ...]]:
        where, params = "agent = %s AND identity = %s AND vector IS NOT NULL", [self.agent, self.identity]
        if conversation is not None:
            where += " AND conversation = %s"
            params.append(conversation)
        with self.db.read() as conn:
            return conn.execute(
                f"SELECT conversation, user_text, assistant_text, created_at, vector FROM history_exchanges WHERE {where}",
                params,
            ).fetchall()

    def _ranks_in_sql(self) -> bool:
        return False  # ranked by ExchangeIndex in numpy over the conversation's rows

    def count(self) -> int:
        with self.db.read() as conn:
            return int(conn.execute("SELECT COUNT(*) FROM history_exchanges WHERE agent = %s",
                                    (self.agent,)).fetchone()[0])

    def forget_conversation(self, conversation: str) -> int:
        key = normal_key(conversation)
        return int(self.db.transact(
            lambda conn: conn.execute("DELETE FROM history_exchanges WHERE agent = %s AND conversation = %s",
                                      (self.agent, key)).rowcount
        ))

    def _delete(self, fingerprints: list[str]) -> int:
        return int(self.db.transact(
            lambda conn: conn.execute("DELETE FROM history_exchanges WHERE agent = %s AND fingerprint = ANY(%s)",
                                      (self.agent, fingerprints)).rowcount
        ))

    def close(self) -> None:
        """The pool belongs to the history store."""
