"""Starting the memory folder's syncer from settings, and waiting on it.

``attach_from_settings`` is what an interface calls at start-up (``engram.root``): the folder
writer is attached when ``files.enabled`` (and the backend persists anything); with it off on an
encrypted store, a folder written before the key was set is named as still holding memories in
clear. ``database_agent`` says whose database the engine's is (``per_agent_databases``), which
decides the part of the folder it syncs. ``wait_for`` polls for what the watcher does.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engram.config import Settings
    from engram.engine import Engram

    from .sync import FileSync

log = logging.getLogger("engram.files")


def database_agent(engram: Engram, settings: Settings) -> str | None:
    """The agent whose own database ``engram``'s is (``per_agent_databases``, a backend keeping a
    file per agent), else None: a database of every agent."""
    if not settings.per_agent_databases or engram.backend.path is None:
        return None
    return settings.agent if engram.backend.path == settings.database_path(settings.agent) else None


def attach_from_settings(engram: Engram, settings: Settings) -> FileSync | None:
    """What an interface calls at start-up: attach the folder writer when ``files.enabled``
    (and the backend persists anything). Returns the syncer, or None."""
    if not settings.files.enabled or settings.backend == "disabled":
        if settings.privacy.encrypted:
            _warn_of_plain_copies(settings.files.folder(settings.home))
        return None
    from .sync import FileSync  # which imports this module for ``database_agent``

    syncer = FileSync.from_settings(engram, settings)
    syncer.attach()
    return syncer


def _warn_of_plain_copies(folder: Path) -> None:
    """An encrypted store's memory folder is off (see ``Settings``), but one written before the key
    was set still holds every memory in clear: engram neither updates nor deletes it (it may be
    the user's own copy), so it says so."""
    try:
        stale = folder.is_dir() and any(path.is_file() for path in folder.rglob("*"))
    except OSError:
        return
    if stale:
        log.warning("the memory folder %s holds plain-text copies of memories written before encryption was "
                    "set; engram no longer updates it: delete it, or set files.enabled to keep it in step", folder)


def wait_for(predicate: Callable[[], bool], timeout: float = 10.0, interval: float = 0.05) -> bool:
    """Poll ``predicate`` until it is true or ``timeout`` passes (used by callers of the watcher)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()
