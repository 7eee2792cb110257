"""Memories whose entries left the memory folder: forgotten, but never silently in bulk.

A sync pass collects, per scope, the entries removed from their files while unchanged in the
database since the last sync, and settles them together:

- entries whose file vanished entirely or was left with zero bytes (an editor crash, a ``git
  checkout``) are not deletions:
  the sync writes the file again from the database and keeps each entry as a ``file-vanished``
  conflict, which a person confirms one by one (``engram conflicts resolve ID --take file``);
- when the rest would forget every memory a file held, or more than ``files.max_forget_share`` of
  the scope's synced memories, the database is backed up first (the engine's guard: the same
  automatic backup as before a bulk forget) and the report says so. A backend without database
  backups gets the memories written as a snapshot into ``.engram-backups/`` in the folder instead
  (``engram import`` reads it). If the backup fails, nothing is forgotten.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from engram import snapshot
from engram.model import Memory

from .layout import directly_in
from .paths import Folder
from .state import SyncState

# Inside the memory folder; dot-folders are never read as memory files.
SNAPSHOT_DIR = ".engram-backups"


@dataclass(frozen=True, slots=True)
class Removal:
    """A memory whose entry is gone from ``file`` (its place at the last sync)."""

    entry_id: str
    file: str
    memory: Memory


def needs_backup(removals: Sequence[Removal], st: SyncState, scope_dir: str, share: float) -> bool:
    """True when ``removals`` empty a file of its memories or exceed ``share`` of the scope's."""
    by_file: dict[str, set[str]] = defaultdict(set)
    for removal in removals:
        by_file[removal.file].add(removal.entry_id)
    if any(st.ids_in(rel) <= ids for rel, ids in by_file.items()):
        return True
    tracked = sum(1 for e in st.entries.values() if directly_in(e.path, scope_dir))
    return len(removals) > share * max(tracked, 1)


def back_up(guard: Callable[[str], None] | None, folder: Folder, removals: Sequence[Removal]) -> str:
    """Take the backup: the engine's ``guard`` (its automatic backup), or without one a snapshot
    in the folder; returns the sentence the sync report shows. Raises what the backup raises."""
    count = f"{len(removals)} {'memory' if len(removals) == 1 else 'memories'}"
    if guard is not None:
        guard("sync-forget")
        return f"backed up the database before forgetting {count} removed from memory files (engram backup --list)"
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
    rel = f"{SNAPSHOT_DIR}/forgotten-{stamp}.json"
    folder.write_text(rel, snapshot.dump([r.memory for r in removals]))
    return f"saved the {count} removed from memory files in {rel} before forgetting them (engram import restores them)"
