"""Open each built-in memory backend from settings (called through ``engram.registry``)."""

from __future__ import annotations

from engram.config import Settings
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
