"""Starting the memory folder's syncer from settings, and waiting on it.

``attach_from_settings`` is what an interface calls at start-up (``engram.root``): the folder
writer is attached when ``files.enabled`` (and the backend persists anything). On an encrypted
store, a folder engram no longer writes on its own (the memory folder when off, the transcripts
folder when ``history.transcripts_dir`` is unset) but which still holds files written before the
key was set, or automatically, is named as holding them in clear. Files written there on request
while the key is set (``engram history transcript``, ``engram sync`` / ``watch`` / ``conflicts
resolve``, ``engram export`` into the folder) are the user's choice, not a leftover:
``note_written_on_request`` records them and the warning leaves them out.
``database_agent`` says whose database the engine's is (``per_agent_databases``), which decides
the part of the folder it syncs. ``hand_over_sync_state`` gives the folder's sync state to the
database ``engram migrate`` copied the store into. ``wait_for`` polls for what the watcher does.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
import time
from collections.abc import Callable, Iterable
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


def hand_over_sync_state(settings: Settings, source: str, target: str, agent: str | None = None) -> Path | None:
    """After ``engram migrate`` verified its copy of the database ``source`` into ``target`` (each
    ``state.database_identity``): the sync state of the memory folder (``files.dir``) recorded
    against ``source`` is recorded against ``target`` (``state.hand_over``), so the first sync on
    the new database compares both sides with the state they last agreed in. Done whether or not
    ``files.enabled`` is on now: the state still describes that folder against that database, and
    a folder switched on later then syncs as it would have on the old one. The state file written,
    or None when the folder holds no state of ``source`` (no folder, never synced, or already
    handed over: a second migrate leaves the state the new database keeps as it is). ``agent``: whose
    own database ``source`` is (``per_agent_databases``; the configured agent by default)."""
    from . import state as sync_state
    from .paths import Folder

    root = settings.files.folder(settings.home)
    if not root.is_dir():
        return None
    folder = Folder(root, max_file_bytes=settings.files.max_file_bytes)
    # An agent's own SQLite file (per_agent_databases) kept a state of its own (left in place: it
    # is still that file's); the target, a database of every agent, keeps the shared one.
    found_in = [sync_state.files_for(agent or settings.agent), sync_state.SHARED] if settings.per_agent_databases else [
        sync_state.SHARED]
    if sync_state.hand_over(folder, settings.files.format, source, target, found_in) is None:
        return None
    return folder.resolve(sync_state.SHARED.state)


# Kept at the top of the memory folder and of the transcripts folder: each file engram wrote there
# on request while an encryption key was set, by its path in the folder, with its modification
# time (ns) just after. The warning about plain copies leaves out a file that is listed with its
# time unchanged: written since the key was set because the user asked for it. A file not listed
# (written before the key was set, or automatically while a folder was switched on) or changed
# since (copied over, rewritten by something else) is counted. Names and times only: no content.
REQUESTED_FILE = ".engram-requested.json"


def _watched_folders(settings: Settings) -> list[Path]:
    """The folders the plain-copies warning looks at (whether or not it warns about them now)."""
    return [settings.files.folder(settings.home), settings.transcripts_folder()]


def note_written_on_request(settings: Settings, paths: Iterable[Path]) -> None:
    """Record ``paths``, just written on the user's request, as asked for (``REQUESTED_FILE``), so
    the plain-copies warning does not name them at every start. Only with an encryption key set
    (before it, every plain file is a copy the key came too late for) and only files inside the
    memory or transcripts folder; other paths are ignored. A record that cannot be written is
    logged, not raised: the file itself was written, and the cost is a warning at the next start."""
    if not settings.privacy.encrypted:
        return
    paths = list(paths)
    for folder in _watched_folders(settings):
        root = folder.resolve()
        found: dict[str, int] = {}
        for path in paths:
            try:
                resolved = path.resolve()
                if resolved.is_file() and resolved.is_relative_to(root) and resolved.name != REQUESTED_FILE:
                    found[resolved.relative_to(root).as_posix()] = resolved.stat().st_mtime_ns
            except OSError:
                continue
        if found:
            try:
                _save_requested(root, {**_requested(root), **found})
            except OSError as exc:
                log.warning("could not record the files written on request in %s: %s", folder, exc)


def _requested(folder: Path) -> dict[str, int]:
    """``REQUESTED_FILE``'s record; empty when missing or unreadable (every file then counts)."""
    try:
        data = json.loads((folder / REQUESTED_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool)}


def _save_requested(folder: Path, record: dict[str, int]) -> None:
    fd, temp = tempfile.mkstemp(prefix=f"{REQUESTED_FILE}.", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(record, handle, indent=1, sort_keys=True)
        os.replace(temp, folder / REQUESTED_FILE)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _warn_of_plain_copies(settings: Settings) -> None:
    """An encrypted store's memory folder is off unless asked for, and so are automatic
    transcripts (see ``Settings``), but a folder written before the key was set still holds those
    memories or conversations in clear: engram neither updates nor deletes it (it may be the
    user's own copy), so it says so. Files written there on request since the key was set
    (``note_written_on_request``) are not counted."""
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
    """Log ``message`` (``%s``: the folder) when ``folder`` holds a file not written there on
    request since the key was set (``REQUESTED_FILE``)."""
    try:
        if not folder.is_dir():
            return
        requested = _requested(folder)
        stale = any(_plain_copy(folder, path, requested) for path in folder.rglob("*"))
    except OSError:
        return
    if stale:
        log.warning(message, folder)


def _plain_copy(folder: Path, path: Path, requested: dict[str, int]) -> bool:
    if not path.is_file() or path == folder / REQUESTED_FILE:
        return False
    return requested.get(path.relative_to(folder).as_posix()) != path.stat().st_mtime_ns


def wait_for(predicate: Callable[[], bool], timeout: float = 10.0, interval: float = 0.05) -> bool:
    """Poll ``predicate`` until it is true or ``timeout`` passes (used by callers of the watcher)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()
