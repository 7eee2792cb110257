"""The memory folder's sync state handed from one database to another and back
(``wiring.hand_over_sync_state``, as ``engram migrate`` up and ``--from URL`` back use it): the
database the state returns to takes it back and syncs the folder again, instead of being refused
as the store that handed it away; the one it left is the one refused now."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from engram.config import load_settings
from engram.engine import Engram
from engram.files.state import HandedOver, database_identity
from engram.files.sync import FileSync
from engram.files.wiring import hand_over_sync_state
from engram.store.sqlite import SqliteMemoryStore


def _sync(settings, path: Path):  # noqa: ANN001, ANN202 - Settings, SyncReport
    engram = Engram.from_settings(settings.model_copy(update={"path": path}))
    try:
        return FileSync.from_settings(engram, settings.model_copy(update={"path": path})).sync()
    finally:
        engram.close()


def _identity(path: Path) -> str:
    return database_identity(SqliteMemoryStore.name, str(path))


def test_a_state_handed_away_and_back_syncs_its_first_database_again(tmp_path: Path) -> None:
    home = tmp_path / "home"
    settings = load_settings(home=home, embeddings={"provider": "none"})
    first, second = tmp_path / "first.db", tmp_path / "second.db"
    engram = Engram.from_settings(settings.model_copy(update={"path": first}))
    try:
        engram.remember("the office wifi is on channel 11", tags=["notes"])
        engram.remember("the printer is on floor 2", tags=["notes"])
    finally:
        engram.close()
    assert _sync(settings, first).conflicts == []
    with closing(sqlite3.connect(first)) as source, closing(sqlite3.connect(second)) as copy:
        source.backup(copy)  # the other database holds the same rows, as a verified copy does

    state = home / "memory" / ".engram-sync.json"
    assert hand_over_sync_state(settings, _identity(first), _identity(second)) == state.resolve()
    with pytest.raises(HandedOver):
        _sync(settings, first)
    assert not _sync(settings, second).changed

    assert hand_over_sync_state(settings, _identity(second), _identity(first)) == state.resolve()
    assert hand_over_sync_state(settings, _identity(second), _identity(first)) is None  # run again: nothing
    synced = _sync(settings, first)
    assert not synced.changed and synced.conflicts == []
    with pytest.raises(HandedOver):
        _sync(settings, second)
