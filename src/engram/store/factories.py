"""Open each built-in memory backend from settings (called through ``engram.registry``)."""

from __future__ import annotations

from engram.config import Settings
from engram.errors import ConfigError
from engram.store.base import MemoryStore


def open_sqlite(settings: Settings, agent: str) -> MemoryStore:
    from engram.lifecycle.wiring import open_sqlite_store

    return open_sqlite_store(settings, agent)


def open_jsonfile(settings: Settings, agent: str) -> MemoryStore:
    from engram.store.jsonfile import JsonFileMemoryStore

    return JsonFileMemoryStore(settings.database_path(agent), max_content_chars=settings.max_content_chars)


def open_inmemory(settings: Settings, agent: str) -> MemoryStore:
    from engram.store.inmemory import InMemoryMemoryStore

    return InMemoryMemoryStore()


def open_disabled(settings: Settings, agent: str) -> MemoryStore:
    from engram.store.disabled import DisabledMemoryStore

    return DisabledMemoryStore()


def open_postgres(settings: Settings, agent: str) -> MemoryStore:
    """One shared database for every agent (scopes keep them apart); needs ``database_url``."""
    from engram.db.postgres import PgDatabase
    from engram.store.postgres import PostgresMemoryStore

    if not settings.database_url:
        raise ConfigError("the postgres backend needs database_url (ENGRAM_DATABASE_URL=postgresql://...)")
    return PostgresMemoryStore(PgDatabase.connect(settings.database_url, settings.postgres))
