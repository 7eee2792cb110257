"""Starting the memory folder's syncer from settings, and waiting on it.

``attach_from_settings`` is what an interface calls at start-up (``engram.root``): the folder
writer is attached when ``files.enabled`` (and the backend persists anything). On an encrypted
store, a folder engram no longer writes (the memory folder when off, the transcripts folder when
``history.transcripts_dir`` is unset) but which still holds files is named as holding them in
clear: written before the key was set, or on request (``engram history transcript``).
``database_agent`` says whose database the engine's is (``per_agent_databases``), which decides
the part of the folder it syncs. ``wait_for`` polls for what the watcher does.
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
    _warn_of_plain_copies(settings)
    if not settings.files.enabled or settings.backend == "disabled":
        return None
    from .sync import FileSync  # which imports this module for ``database_agent``

    syncer = FileSync.from_settings(engram, settings)
    syncer.attach()
    return syncer


def _warn_of_plain_copies(settings: Settings) -> None:
    """An encrypted store's memory folder is off unless asked for, and so are automatic
    transcripts (see ``Settings``), but a folder written before the key was set still holds those
    memories or conversations in clear: engram neither updates nor deletes it (it may be the
    user's own copy), so it says so."""
    if not settings.privacy.encrypted:
        return
    if not settings.files.enabled or settings.backend == "disabled":
        _warn_if_holding_files(settings.files.folder(settings.home),
                               "the memory folder %s holds plain-text copies of memories written before encryption "
                               "was set; engram no longer updates it: delete it, or set files.enabled to keep it in step")
    if settings.automatic_transcripts_folder() is None:
        _warn_if_holding_files(settings.transcripts_folder(),
                               "the transcripts folder %s holds plain-text copies of conversations, which encryption "
                               "does not protect; engram no longer writes to it on its own: delete it, or set "
                               "history.transcripts_dir to keep transcripts written")


def _warn_if_holding_files(folder: Path, message: str) -> None:
    """Log ``message`` (``%s``: the folder) when ``folder`` holds any file."""
    try:
        stale = folder.is_dir() and any(path.is_file() for path in folder.rglob("*"))
    except OSError:
        return
    if stale:
        log.warning(message, folder)


def wait_for(predicate: Callable[[], bool], timeout: float = 10.0, interval: float = 0.05) -> bool:
    """Poll ``predicate`` until it is true or ``timeout`` passes (used by callers of the watcher)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()
