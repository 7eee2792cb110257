"""The SQLite backend: one ``Database`` (one connection) per file, shared by every store in it.

Memories, each agent's conversations, the exchange index, the audit trail and API tokens are
tables of the same file, so they share its WAL, its write lock, its busy timeout and — with
``privacy.encryption_key`` — its SQLCipher key: nothing reopens the file without the key.
Opening checks the file's integrity first and backs it up before a migration changes its shape.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engram.backends.base import FileCare
from engram.errors import ConfigError, IntegrityError, StorageError
from engram.text import counted

log = logging.getLogger("engram.backends.sqlite")

if TYPE_CHECKING:
    from engram.audit import AuditLog
    from engram.auth import TokenStore
    from engram.config import Settings
    from engram.history.base import HistoryStore
    from engram.history.semantic import ExchangeEmbedder, ExchangeIndex
    from engram.lifecycle.backup import Backups
    from engram.store.sqlite import SqliteMemoryStore


def backups_for(settings: Settings, db_path: Path, agent: str | None = None) -> Backups:
    """The backups of ``db_path``, the database of ``agent`` (the settings' own by default), as
    configured (``lifecycle.backup``), encrypted with the key. With ``per_agent_databases`` and
    one ``lifecycle.backup.folder`` for all, each agent's go into a subfolder of it named as its
    own folder is (``Settings.agent_folder``): every agent's file is ``memory.db``, and in one
    folder each agent listed, pruned and restored every agent's backups as its own."""
    from engram.lifecycle.backup import Backups

    folder = settings.lifecycle.backup.folder
    where = Path(folder).expanduser() if folder else db_path.parent / "backups"
    if folder and settings.per_agent_databases:
        where = where / settings.agent_folder(agent).name
    return Backups(db_path, where, keep=settings.lifecycle.backup.keep, key=settings.privacy.key())


def history_path(settings: Settings, agent: str) -> Path:
    """The SQLite history file: ``history.path``, else the memory database (a ``.db`` file), else
    ``home/memory.db`` (beside a JSON memory file, say)."""
    if settings.history.path is not None:
        return Path(settings.history.path)
    memory_db = settings.model_copy(update={"backend": "sqlite"}).database_path(agent)
    return memory_db if memory_db.suffix == ".db" else settings.home / "memory.db"


def warn_left_in_shared_file(settings: Settings, agent: str, memory: SqliteMemoryStore) -> int:
    """Warn (and return how many) when the shared database holds ``agent``'s memories, or global
    ones, that its own database (``per_agent_databases``) does not: switching the setting on for a
    home in use made them vanish from sight without a word (nothing is moved or deleted). Said at
    each start until they are brought over (ids are kept by an export and import), or the shared
    file is moved away. A shared file that cannot be read is not this warning's business."""
    from engram.db.sqlite import connect, db_errors

    shared = settings.path or settings.home / "memory.db"
    if memory.path is None or not shared.is_file() or shared.resolve() == Path(memory.path).resolve():
        return 0
    try:
        conn = connect(str(shared), key=settings.privacy.key(), readonly=True)
    except (IntegrityError, StorageError):
        return 0
    try:
        rows = conn.execute("SELECT id FROM memories WHERE agent IN (?, '')", (agent,)).fetchall()
        conversations = conn.execute("SELECT count(DISTINCT conversation) FROM history_messages WHERE agent = ?",
                                     (agent,)).fetchone()[0]
    except db_errors():  # not (yet) an engram store of this shape
        return 0
    finally:
        conn.close()
    if not rows:
        return 0
    with memory.db.read() as own:
        held = {row[0] for row in own.execute("SELECT id FROM memories WHERE agent IN (?, '')", (agent,))}
    missing = sum(1 for (memory_id,) in rows if memory_id not in held)
    if missing:
        history_there = settings.history.path is not None and Path(settings.history.path).resolve() == shared.resolve()
        talk = ("" if history_there or not conversations else
                f"; its {counted(conversations, 'conversation')} {'is' if conversations == 1 else 'are'} there too:"
                f" history.path = {shared} keeps using them")
        log.warning(
            "per_agent_databases is on, but %s (the database every agent shared while it was off) holds %s"
            " of agent %r or global ones that its own database %s does not: not lost, out of sight. Bring them over"
            " with `ENGRAM_PER_AGENT_DATABASES=false engram -a %s export FILE.json`, then `engram -a %s import"
            " FILE.json`, or move %s away to silence this%s",
            shared, counted(missing, "memory"), agent, memory.path, agent, agent, shared, talk)
    return missing


class SqliteBackend:
    name = "sqlite"

    def __init__(self, memory: SqliteMemoryStore, *, backups: Backups | None = None, history_name: str | None = "sqlite",
                 keeps_tokens: bool = True, owner: str | None = None) -> None:
        """Wrap an opened memory store (see ``open``): every other store shares its connection.

        ``owner`` names the agent of a per-agent database: conversations stored before agents
        were recorded become its own when it first opens its history."""
        self._memory = memory
        self.db = memory.db
        self.path: Path | None = memory.path
        self.history_name = history_name
        self._keeps_tokens = keeps_tokens
        self._owner = owner
        self._care = None if backups is None else FileCare(self.db, backups, memory.scrub_vector_index)
        self._audit: AuditLog | None = None

    @classmethod
    def open(cls, settings: Settings, agent: str) -> SqliteBackend:
        """Open the memory database for ``agent``: integrity check first, backup before migrations,
        the SQLCipher key when configured. Raises ``IntegrityError``/``StorageError``."""
        from engram.store.sqlite import SqliteMemoryStore

        path = settings.database_path(agent)
        backups = backups_for(settings, path, agent)
        backups.startup_check(settings.lifecycle.backup.startup_check)
        before = None
        if settings.lifecycle.backup.enabled and settings.lifecycle.backup.before_risky:
            def before(db: Any) -> None:
                backups.create("pre-migration", source=db)
        memory = SqliteMemoryStore(path, busy_timeout_ms=settings.busy_timeout_ms, key=settings.privacy.key(),
                                   before_migrate=before, vector_index=settings.vector_index,
                                   full_text=settings.full_text, after_close=backups.closed_cleanly)
        if settings.per_agent_databases:
            warn_left_in_shared_file(settings, agent, memory)
        backups.warn_if_plain()
        history_here = settings.history.path is None or Path(settings.history.path) == path
        return cls(memory, backups=backups, history_name="sqlite" if history_here else None,
                   keeps_tokens=keeps_tokens(settings),
                   owner=agent if settings.per_agent_databases and settings.history.path is None else None)

    @property
    def memory(self) -> SqliteMemoryStore:
        return self._memory

    @property
    def care(self) -> FileCare | None:
        return self._care

    def history_store(self, agent: str) -> HistoryStore:
        from engram.history.sqlite import SqliteHistoryStore

        if self.history_name is None:
            raise ConfigError(f"history.path points elsewhere: {self.path} keeps no conversations")
        store = SqliteHistoryStore(self.db, agent=agent, owns_db=False)
        if agent == self._owner:
            store.adopt_unowned()
            self._owner = None
        return store

    def exchange_index(self, embedder: ExchangeEmbedder, agent: str, **options: Any) -> ExchangeIndex | None:
        from engram.history.semantic import ExchangeIndex

        return ExchangeIndex(self.db, embedder, agent=agent, **options)

    def audit_log(self) -> AuditLog:
        from engram.audit import SqliteAuditLog

        if self._audit is None:
            self._audit = SqliteAuditLog(self.db)
        return self._audit

    def token_store(self) -> TokenStore | None:
        from engram.auth import TokenStore

        return TokenStore(self.db, owns_db=False) if self._keeps_tokens else None

    def warm(self) -> None:
        self._memory.sync_vector_index()
        self._memory.sync_text_index()

    def close(self) -> None:
        self._memory.close()


class SqliteHistoryBackend:
    """Conversations (and their exchange index) in a SQLite file of their own (``history.path``)."""

    name = "sqlite"
    history_name = "sqlite"

    def __init__(self, db: Any) -> None:
        self.db = db
        self.path: Path | None = Path(db.path)
        self.care: FileCare | None = None

    @classmethod
    def open(cls, settings: Settings, agent: str) -> SqliteHistoryBackend:
        from engram.db.migrate import migrate
        from engram.db.sqlite import Database

        db = Database(history_path(settings, agent), busy_timeout_ms=settings.busy_timeout_ms,
                      key=settings.privacy.key())
        migrate(db)
        return cls(db)

    @property
    def memory(self) -> Any:
        raise ConfigError(f"{self.path} holds conversation history only")

    def history_store(self, agent: str) -> HistoryStore:
        from engram.history.sqlite import SqliteHistoryStore

        return SqliteHistoryStore(self.db, agent=agent, owns_db=False)

    def exchange_index(self, embedder: ExchangeEmbedder, agent: str, **options: Any) -> ExchangeIndex | None:
        from engram.history.semantic import ExchangeIndex

        return ExchangeIndex(self.db, embedder, agent=agent, **options)

    def audit_log(self) -> AuditLog:
        raise ConfigError(f"{self.path} holds conversation history only")

    def token_store(self) -> TokenStore | None:
        return None

    def warm(self) -> None:
        pass

    def close(self) -> None:
        self.db.close()


def keeps_tokens(settings: Settings) -> bool:
    """Whether the SQLite database keeps the API tokens: not an agent's own file
    (``per_agent_databases``): a token names its agent, and one set serves the home, in
    ``home/auth.db`` (``root.open_tokens``)."""
    return not settings.per_agent_databases
