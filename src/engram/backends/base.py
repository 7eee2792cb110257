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

import time
from collections.abc import Callable
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
    # Takes deleted rows' vectors out of the index files beside the database (``scrub``), or None.
    scrub_sidecars: Callable[[], None] | None = None

    @property
    def encrypted(self) -> bool:
        return self.db.encrypted

    def backup(self, reason: str = "manual") -> BackupInfo:
        """Take a backup now from the open connection (writers may keep running)."""
        return self.backups.create(reason, source=self.db)

    def vacuum(self) -> tuple[int, int]:
        """VACUUM the file; its size in bytes before and after.

        A VACUUM rebuilds the file from its live rows, so no freed byte is left in it, and every
        engram write since zeroes what it frees: the file is marked (``engram_meta`` ``zeroed_since``)
        as the first erase's VACUUM marks it, and an erase after ``engram vacuum`` (or the scheduled
        job) needs none of its own. Only once the VACUUM is done: a failed one leaves no mark."""
        from engram.lifecycle.backup import vacuum

        sizes = vacuum(self.db)
        with self.db.write() as conn:
            conn.execute("INSERT OR IGNORE INTO engram_meta (name, value) VALUES ('zeroed_since', ?)", (str(time.time()),))
        with self.db.read() as conn:  # the mark's page into the file, as the VACUUM's were: the WAL left empty
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return sizes

    def scrub(self) -> None:
        """After an erase, leave no trace of deleted or rewritten rows in the file or its WAL.

        Every engram connection zeroes what a write frees (``PRAGMA secure_delete``, set when it
        opens), so the bytes left are in live pages and in the WAL: FTS5 keeps a deleted document's
        terms in its older index segments and as delete markers until they merge (``optimize``
        merges them; the old segments' pages it frees are zeroed), and the WAL keeps earlier page
        images until a checkpoint truncates it. A file some write reached before engram zeroed what
        it freed (one from an earlier version, never scrubbed) keeps old bytes in free pages and
        free space inside pages: it is vacuumed once, then marked (``engram_meta`` ``zeroed_since``)
        so later erases skip the VACUUM, whose cost grows with the file. Every erase merges the
        full-text index, a cost that grows with that index, not with the file (docs/privacy.md;
        ``bench/erase_cost.py``).

        The vector index saved beside the file (``<database>.usearch``) drops the deleted rows'
        vectors first (``scrub_sidecars``). Raises ``StorageError`` when the WAL cannot be emptied
        (another process's long read) or the VACUUM fails."""
        from engram.db.sqlite import truncate_wal

        if self.scrub_sidecars is not None:
            self.scrub_sidecars()
        with self.db.write() as conn:
            conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('optimize')")
            zeroed = conn.execute("SELECT 1 FROM engram_meta WHERE name = 'zeroed_since'").fetchone() is not None
        if not zeroed:
            self.vacuum()  # which marks the file
        with self.db.read() as conn:
            truncate_wal(conn, self.db.path)


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
