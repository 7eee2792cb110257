"""Skipping the start-up integrity check for a file that was closed cleanly and checked recently.

``PRAGMA quick_check`` reads every page: ~1 s at 100k memories, ~6 s at 1M, paid by every fresh
``engram recall``. Its purpose is to stop a process from writing to (and serving from) a file that
is already damaged, and to point at the last good backup. Damage comes from a crash or kill in
the middle of writing, from other programs and from the disk itself.

So a process that opened a file which passed the check (or was itself stamped) leaves a stamp
when it closes the last connection cleanly: the file's size and modification time, with the
time of the last real check. The next start skips the check when

- the stamp matches the file exactly (nothing touched it since the clean close: a crash leaves a
  non-empty ``-wal`` file or a changed main file, and so does any other writer), and
- the last real check is younger than ``MAX_AGE_S`` (damage from the disk or from other
  programs that keep the modification time is still found within a day).

Anything else (no stamp, another process holding the file open, a stale stamp) runs the check as
before. ``startup_check = "full"`` always checks.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

MAX_AGE_S = 24 * 3600


def stamp_path(db_path: Path) -> Path:
    return db_path.with_name(db_path.name + ".clean")


def _state(db_path: Path) -> list[int] | None:
    """``[size, mtime_ns]`` of a database no connection has changes pending for; None otherwise."""
    wal = Path(str(db_path) + "-wal")
    try:
        if wal.exists() and wal.stat().st_size > 0:
            return None
        info = db_path.stat()
    except OSError:
        return None
    return [info.st_size, info.st_mtime_ns]


def verified_at(db_path: Path, now: float | None = None) -> float | None:
    """When the file was last really checked, if its clean-close stamp still vouches for it."""
    try:
        stamp = json.loads(stamp_path(db_path).read_text())
        state, checked = stamp["state"], float(stamp["checked_at"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    now = time.time() if now is None else now
    if state != _state(db_path) or not 0 <= now - checked < MAX_AGE_S:
        return None
    return checked


def mark(db_path: Path, checked_at: float) -> None:
    """Stamp a file this process verified and has just closed (no-op while others hold it open)."""
    state = _state(db_path)
    target = stamp_path(db_path)
    if state is None:
        target.unlink(missing_ok=True)
        return
    temporary = target.with_name(target.name + f".{os.getpid()}.tmp")
    try:
        temporary.write_text(json.dumps({"state": state, "checked_at": checked_at}))
        os.replace(temporary, target)
    except OSError:  # a read-only folder only costs the next start its check
        temporary.unlink(missing_ok=True)
