"""Which files a PostgreSQL database already holds a verified copy of (``engram migrate`` run again).

A copy fills the rows the target lacks, so once PostgreSQL is in use, copying the same file again
would bring back what was removed there since (a memory forgotten, history compacted or undone, a
link unlinked, a token deleted). Each verified copy is therefore recorded in the target's
``engram_meta`` under ``migrated:<fingerprint>``, the fingerprint being a SHA-256 over the file's
own rows (``transfer.fingerprint``: read from the file alone, not renumbered for the target), with
the file's resolved path and the time. Keyed by the rows rather than the path: the same rows are the
same copy wherever the file lies now (a home moved, ``--from`` spelled another way), and another file
put at the path (a backup restored) is not taken for it. The path is kept beside them to tell a file
changed since its copy (the same path, other rows) and say so in the report. A file without rows has
no fingerprint (all such files would share one): it is neither looked up nor recorded, only copied
(nothing) and verified, as it holds nothing that could bring back a row removed there.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engram.db.postgres import PgDatabase

_PREFIX = "migrated:"


@dataclass(frozen=True)
class EarlierCopy:
    """What the target records of this file: when these very rows were copied and verified, or
    when another version of the file at the same path was (its rows changed since)."""

    unchanged_at: str | None = None
    changed_since: str | None = None


def _shown(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def earlier_copy(target: PgDatabase, fingerprint: str, path: Path) -> EarlierCopy:
    """Look up the verified copies the target records: this fingerprint's, else the latest of the same path."""
    with target.read() as conn:
        rows = conn.execute("SELECT name, value FROM engram_meta WHERE name LIKE %s", (_PREFIX + "%",)).fetchall()
    same_path: list[float] = []
    for name, value in rows:
        record = _parse(value)
        if record is None:
            continue
        if name == _PREFIX + fingerprint:
            return EarlierCopy(unchanged_at=_shown(record["at"]))
        if record["source"] == str(path.resolve()):
            same_path.append(record["at"])
    return EarlierCopy(changed_since=_shown(max(same_path)) if same_path else None)


def _parse(value: str) -> dict[str, Any] | None:
    try:
        record = json.loads(value)
    except ValueError:
        return None
    ok = isinstance(record, dict) and isinstance(record.get("at"), int | float) and isinstance(record.get("source"), str)
    return record if ok else None


def record_copy(target: PgDatabase, fingerprint: str, path: Path, at: float) -> None:
    """Remember a verified copy of the file's rows (``fingerprint``), taken from ``path`` at ``at``."""
    value = json.dumps({"source": str(path.resolve()), "at": at})
    target.transact(lambda conn: conn.execute(
        "INSERT INTO engram_meta (name, value) VALUES (%s, %s) ON CONFLICT (name) DO NOTHING",
        (_PREFIX + fingerprint, value)))
