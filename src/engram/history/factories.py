"""Open history backends and the ``History`` pipeline from settings (through ``engram.registry``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engram.agent.compact import Purger
from engram.config import Settings
from engram.errors import ConfigError
from engram.history.base import HistoryStore
from engram.history.semantic import ExchangeEmbedder
from engram.history.service import History
from engram.registry import resolve


def sqlite_path(settings: Settings, agent: str) -> Path:
    """The history database: ``history.path``, else the memory database (a ``.db`` file)."""
    if settings.history.path is not None:
        return settings.history.path
    memory_db = settings.model_copy(update={"backend": "sqlite"}).database_path(agent)
    return memory_db if memory_db.suffix == ".db" else settings.home / "memory.db"


def _own_file(settings: Settings) -> bool:
    """Whether the history file holds one agent's history only (a per-agent database or folder)."""
    return settings.per_agent_databases and settings.history.path is None


def open_sqlite(settings: Settings, agent: str) -> HistoryStore:
    from engram.history.sqlite import SqliteHistoryStore

    store = SqliteHistoryStore.open(sqlite_path(settings, agent), busy_timeout_ms=settings.busy_timeout_ms,
                                    agent=agent, key=settings.privacy.key())
    if _own_file(settings):
        store.adopt_unowned()  # conversations written before agents were recorded are this agent's
    return store


def open_jsonl(settings: Settings, agent: str) -> HistoryStore:
    from engram.history.jsonl import JsonlHistoryStore

    h = settings.history
    path = h.path or (settings.home / "agents" / agent if settings.per_agent_databases else settings.home)
    if h.path is None:
        path = Path(path) / "conversation-history.jsonl"
    return JsonlHistoryStore(path, max_entries=h.max_entries, max_chars_per_entry=h.max_chars_per_entry,
                             max_total_chars=h.max_total_chars, agent=agent,
                             unowned_agent=agent if _own_file(settings) else "default")


def open_inmemory(settings: Settings, agent: str) -> HistoryStore:
    from engram.history.inmemory import InMemoryHistoryStore

    return InMemoryHistoryStore(agent=agent)


def open_postgres(settings: Settings, agent: str) -> HistoryStore:
    """History in the shared PostgreSQL database of ``database_url`` (every agent, each seeing its own)."""
    from engram.history.postgres import PostgresHistoryStore

    if not settings.database_url:
        raise ConfigError("the postgres history backend needs database_url (ENGRAM_DATABASE_URL=postgresql://...)")
    return PostgresHistoryStore.open(settings.database_url, settings.postgres, agent=agent)


def backend_name(settings: Settings) -> str:
    """``history.backend``; left at its default it follows a PostgreSQL memory backend, so that one
    ``database_url`` puts everything in the shared database."""
    h = settings.history
    if "backend" not in h.model_fields_set and settings.backend == "postgres":
        return "postgres"
    return h.backend


def open_history(
    settings: Settings,
    agent: str,
    *,
    embedder: ExchangeEmbedder | None = None,
    purge: Purger | None = None,
    warm: bool = True,
) -> History:
    """The configured history pipeline: backend by name, semantic store when an embedder is
    given (warmed from recent history), compaction settings. Raises ``ConfigError``/``StorageError``."""
    h = settings.history
    store = resolve("history", backend_name(settings))(settings, agent)
    semantic = None
    if embedder is not None and h.semantic:
        options: dict[str, Any] = {"max_entries": h.semantic_max_entries,
                                   "max_chars_per_entry": h.semantic_max_chars_per_entry,
                                   "max_recap_chars": h.max_total_chars}
        db = getattr(store, "db", None)
        if getattr(store, "name", None) == "postgres" and db is not None:
            from engram.history.pg_semantic import PgExchangeIndex

            semantic = PgExchangeIndex(db, embedder, agent=agent, **options)
        else:
            from engram.history.semantic import ExchangeIndex

            semantic = ExchangeIndex.open(sqlite_path(settings, agent), embedder, agent=agent,
                                          busy_timeout_ms=settings.busy_timeout_ms, key=settings.privacy.key(),
                                          **options)
        if warm:
            semantic.warm(store)
    return History(store, max_history_len=h.max_history_len, compaction=h.compaction, semantic=semantic,
                   purge=purge, recap_top_k=h.recap_top_k)
