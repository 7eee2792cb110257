"""The Backend contract: one object per configured database.

A backend owns its connection (a SQLite ``Database``, a PostgreSQL pool, files, or process
memory) and hands out every store that lives there: the memory store, each agent's history
store, the exchange index, the audit trail, the token store, and — for a SQLite file — backups,
VACUUM and encryption (``FileCare``). Every store it hands out shares that one connection, so a
process opens each database once, whatever reads or writes it; closing the backend closes it.

What a backend cannot hold it says by returning None (a JSON-files backend keeps no tokens), and
the composition root (``engram.root``) puts that part elsewhere. Nothing asks a store what it is
made of: capabilities are asked of the backend, never sniffed from a store's attributes.

Backends are chosen by name through ``engram.registry`` (kind ``backend`` for the memory
database, kind ``history`` for a history kept apart from it); a plug-in registers its own the
same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from engram.audit import AuditLog
    from engram.auth import TokenStore
    from engram.db.sqlite import Database
    from engram.history.base import HistoryStore
    from engram.history.semantic import ExchangeEmbedder, ExchangeIndex
    from engram.lifecycle.backup import BackupInfo, Backups
    from engram.store.base import MemoryStore


@dataclass(frozen=True, slots=True)
class FileCare:
    """Backups, restore and VACUUM of one SQLite file, through the backend's own connection."""

    db: Database
    backups: Backups

    @property
    def encrypted(self) -> bool:
        return self.db.encrypted

    def backup(self, reason: str = "manual") -> BackupInfo:
        """Take a backup now from the open connection (writers may keep running)."""
        return self.backups.create(reason, source=self.db)

    def vacuum(self) -> tuple[int, int]:
        """VACUUM the file; its size in bytes before and after."""
        from engram.lifecycle.backup import vacuum

        return vacuum(self.db)

    def scrub(self) -> None:
        """After an erase, leave no trace of deleted or rewritten rows in the file: FTS5 keeps a
        deleted document's terms in its older index segments until they merge (``optimize`` merges
        them all now), SQLite keeps freed pages' bytes until they are reused (VACUUM rebuilds the
        file without them), and the WAL keeps earlier page images until a checkpoint truncates it.
        Not ``PRAGMA secure_delete``: it zeroes only what is freed while it is on, and earlier writes
        (an update of the memory, a page split) left copies of its bytes elsewhere; nor FTS5's
        ``secure-delete``, which leaves what earlier deletes wrote in the index and, once used, makes
        it unreadable to SQLite before 3.42 (``bench/erase_cost.py``; docs/privacy.md)."""
        from engram.lifecycle.backup import vacuum

        with self.db.write() as conn:
            conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('optimize')")
        vacuum(self.db)


@runtime_checkable
class Backend(Protocol):
    """One opened database and the stores it hands out (see the module docstring)."""

    name: str
    # The ``history.backend`` name this database can hold conversations for, or None.
    history_name: str | None
    # The file or folder holding the data (sidecar files such as metrics go beside it), or None.
    path: Path | None

    @property
    def memory(self) -> MemoryStore:
        """The memory store (one per backend)."""
        ...

    def history_store(self, agent: str) -> HistoryStore:
        """``agent``'s conversation history in this database. Raises ``ConfigError`` when
        ``history_name`` is None."""
        ...

    def exchange_index(self, embedder: ExchangeEmbedder, agent: str, **options: Any) -> ExchangeIndex | None:
        """``agent``'s semantic index of exchanges in this database, or None when it keeps none."""
        ...

    def audit_log(self) -> AuditLog:
        """The audit trail of this database (one per backend)."""
        ...

    def token_store(self) -> TokenStore | None:
        """API tokens kept in this database, or None (then they live in ``home/auth.db``)."""
        ...

    @property
    def care(self) -> FileCare | None:
        """Backups, VACUUM and encryption of the file, or None when the backend has no such file."""
        ...

    def warm(self) -> None:
        """Build derived search structures now (a vector index) rather than in the next recall."""
        ...

    def close(self) -> None:
        """Close the connection; every store handed out is closed with it."""
        ...
