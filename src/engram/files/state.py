"""The sync state: what each entry and file looked like when files and database last agreed.

Kept in ``.engram-sync.json`` inside the memory folder (a dot-file, so sync never reads it as
memories). Per entry: the file it is in and the hash of its editable fields at the last sync;
per file: the hash of its whole text when it was last fully in sync. Comparing both sides with
this record tells which side changed, so a change on both sides is a conflict rather than a
silent overwrite. Several processes (``engram watch`` and a CLI writing) may sync the same
folder, so every change takes an exclusive lock on ``.engram-sync.lock`` and re-reads the state.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from .paths import Folder

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: one process per folder
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger("engram.files")

STATE_FILE = ".engram-sync.json"
LOCK_FILE = ".engram-sync.lock"


class EntryState(NamedTuple):
    """Where an entry is and the hash of its editable fields (a tuple: json writes it as the
    ``[path, digest]`` pair the state file holds, with no copy made per entry)."""

    path: str
    digest: str


@dataclass
class SyncState:
    format: str
    database: str = ""
    entries: dict[str, EntryState] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> str:
        # Compact and unsorted (entries keep the order they were recorded in): json's C encoder
        # writes it, and the state is rewritten on every change, so at 10,000 memories an indented,
        # sorted one cost ~45 ms a store (the indent makes json use its pure-Python encoder).
        return json.dumps({
            "version": 1, "format": self.format, "database": self.database,
            "entries": self.entries,
            "files": self.files,
        }, separators=(",", ":"))

    def forget_file(self, rel: str) -> None:
        self.files.pop(rel, None)

    def ids_in(self, rel: str) -> set[str]:
        return {i for i, e in self.entries.items() if e.path == rel}


_STATE_MAX_BYTES = 1 << 31


def load(folder: Folder, fmt: str, database: str) -> SyncState:
    """The stored state; an unreadable state, or one recorded for another format or another
    database (a fresh or replaced database file), starts afresh: every entry then counts as
    unsynced, which can only add or report conflicts, never remove."""
    try:
        # Not bounded by files.max_file_bytes (a limit for hand-edited files): the state grows with
        # the number of memories, and a refused state would make every sync start afresh.
        data = json.loads(folder.read_text(STATE_FILE, max_bytes=_STATE_MAX_BYTES))
    except FileNotFoundError:
        return SyncState(fmt, database)
    except (ValueError, OSError) as exc:
        log.warning("sync state %s unreadable (%s); starting afresh", STATE_FILE, exc)
        return SyncState(fmt, database)
    if data.get("format") != fmt or data.get("database") != database:
        return SyncState(fmt, database)
    entries = {i: EntryState(p, d) for i, (p, d) in data.get("entries", {}).items()}
    return SyncState(fmt, database, entries, dict(data.get("files", {})))


def save(folder: Folder, state: SyncState) -> os.stat_result:
    """Write the state; returns the written file's ``stat`` (``Folder.write_text``).

    Without waiting for the disk (no fsync): a sync pass writes the memory files it changed first,
    each on disk before it is renamed into place, then this record, so a power loss can only bring
    back an older record beside newer files, never the reverse. Read against an older record an
    entry that files and database both hold alike is in sync whatever the record says (``_settle``
    compares the two sides first), so the next pass finds nothing to do, except for an entry the
    database changed again after its file was written: that reads as changed on both sides, the
    database version is kept and the file's (engram's own earlier copy) is set aside as a
    ``.conflict``. A crash of the process alone loses nothing (the rename is done). The database
    itself commits with ``synchronous=NORMAL``, which makes the same promise. The fsync cost a
    quick pass several milliseconds of waiting on this project's disks, with every store through
    the server waiting for that pass."""
    return folder.write_text(STATE_FILE, state.to_json(), durable=False)


@contextlib.contextmanager
def locked(folder: Folder) -> Iterator[None]:
    """Hold the folder's sync lock (between processes; threads use the syncer's own lock)."""
    if fcntl is None:
        yield
        return
    path: Path = folder.resolve(LOCK_FILE)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
