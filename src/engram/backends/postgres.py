"""The PostgreSQL backend: one connection pool per database URL, shared by every store in it.

Memories, every agent's conversations, the exchange index, the audit trail and API tokens are
tables of the one shared database (migrations ``db/migrations/postgres``), so every engram process
and server on it sees the same state. There is no file to back up here: that is the database's.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from engram.errors import ConfigError, StorageError

if TYPE_CHECKING:
    from engram.audit import AuditLog
    from engram.auth import TokenStore
    from engram.backends.base import FileCare
    from engram.config import Settings
    from engram.db.postgres import PgDatabase
    from engram.history.base import HistoryStore
    from engram.history.semantic import ExchangeEmbedder, ExchangeIndex
    from engram.store.index_settings import FullTextSettings
    from engram.store.postgres import PostgresMemoryStore


class PostgresBackend:
    name = "postgres"
    history_name = "postgres"
    path: Path | None = None
    care: FileCare | None = None

    def __init__(self, db: PgDatabase, full_text: FullTextSettings | None = None, ef_search: int = 200) -> None:
        """Wrap a connected, migrated pool (see ``open``); closing the backend closes it."""
        from engram.store.postgres import PostgresMemoryStore

        self.db = db
        self._memory = PostgresMemoryStore(db, full_text=full_text, ef_search=ef_search)
        self._audit: AuditLog | None = None

    @classmethod
    def open(cls, settings: Settings, agent: str = "default") -> PostgresBackend:
        """Connect to (and migrate) ``database_url``; raises ``ConfigError``/``StorageError``."""
        from engram.db.postgres import PgDatabase

        if not settings.database_url:
            # Named with where it was chosen: the operator who set it in a config file long ago, or
            # in the environment of a service, has to find that place to give the URL beside it.
            raise ConfigError(f"the postgres backend, chosen by {settings.named('backend')}, needs database_url "
                              "(ENGRAM_DATABASE_URL=postgresql://...)")
        if settings.privacy.encrypted:
            # The key encrypts a SQLite file; ignored here, it would let its owner believe the
            # memories are protected while the server keeps them in clear.
            raise ConfigError(_refused_with_a_key(settings))
        try:
            db = PgDatabase.connect(settings.database_url, settings.postgres)
        except StorageError as exc:
            # The DSN is named redacted; which setting (and variable or file) gave it is what the
            # operator has to find to fix a wrong host, port or password.
            raise StorageError(f"{settings.named('database_url')}: {exc}") from exc
        return cls(db, settings.full_text, settings.postgres.hnsw_ef_search)

    @property
    def memory(self) -> PostgresMemoryStore:
        return self._memory

    def history_store(self, agent: str) -> HistoryStore:
        from engram.history.postgres import PostgresHistoryStore

        return PostgresHistoryStore(self.db, agent=agent, owns_db=False)

    def exchange_index(self, embedder: ExchangeEmbedder, agent: str, **options: Any) -> ExchangeIndex | None:
        from engram.history.pg_semantic import PgExchangeIndex

        return PgExchangeIndex(self.db, embedder, agent=agent, **options)

    def audit_log(self) -> AuditLog:
        from engram.audit import PostgresAuditLog

        if self._audit is None:
            self._audit = PostgresAuditLog(self.db)
        return self._audit

    def token_store(self) -> TokenStore | None:
        from engram.auth import PostgresTokenStore

        return PostgresTokenStore(self.db, owns_db=False)

    def warm(self) -> None:
        pass  # the HNSW index is kept by PostgreSQL as vectors are written

    def close(self) -> None:
        self.db.close()


def _refused_with_a_key(settings: Settings) -> str:
    """Why a key and PostgreSQL do not go together, naming the setting that chose PostgreSQL
    (``backend``, which ``database_url`` alone switches, else ``history.backend`` for the
    conversations only, where ``backend = "sqlite"`` is already so) and where its URL was given."""
    if settings.backend == "postgres":
        setting, kept = "backend", "memories, history and the audit trail"
    else:
        setting, kept = "history.backend", "the conversation history"
    return (f"privacy.encryption_key is set but {setting} = \"postgres\" (the database of"
            f" {settings.named('database_url')}) cannot encrypt with it: PostgreSQL keeps {kept} in clear on its"
            " server (encrypt the server's disk); remove the key (privacy.encryption_key,"
            f" privacy.encryption_key_file) to use PostgreSQL, or set {setting} = \"sqlite\" to keep it encrypted")
