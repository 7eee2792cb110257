"""Where a file's audit entries land in PostgreSQL's trail (``db/transfer.py``).

Each SQLite file numbers its audit trail from 1, and the target's trail may already hold entries
under those numbers: another file's, or ones written on PostgreSQL. A file's entries are therefore
renumbered, in **spans**: the entries a run of ``engram migrate`` finds beyond those numbered
before are given numbers after every one the target's trail has handed out (the sequence set past
them at once, under a lock, so a server writing meanwhile numbers after them), while entries
numbered by an earlier run keep their span. So a resumed copy lands where it began, and a file
used since its copy (remembering, forgetting: each adds entries) is copied again without its
copied entries landing twice or its new ones on entries written there since.

The spans are remembered in the target's ``engram_meta`` under the file's first lasting entry
(a change: the oldest recall entries are pruned, ``audit.py``, which would give the file another
name), as JSON ``[[first seq, last seq, offset], ...]``. A bare number there (written before spans)
is one offset for every entry, as it was then.
"""

from __future__ import annotations

import bisect
import hashlib
import json
from collections.abc import Callable
from typing import Any

from engram.db import transfer_rows
from engram.db.postgres import PgDatabase
from engram.db.sqlite import Database

Span = tuple[int, int, int]  # (first seq, last seq, offset) of the file's entries
_PREFIX = "migrated_audit_offset:"
_SEQUENCE = "pg_get_serial_sequence('audit_log', 'seq')::regclass"
# Read entries are the ones ``audit.py`` prunes (its _PRUNE_READS); every other entry stays.
_LASTING = "NOT (memory_id IS NULL AND action = 'recalled')"


def _name(entry: tuple[Any, ...]) -> str:
    return _PREFIX + hashlib.sha256(transfer_rows.canonical("audit_log", entry)).hexdigest()[:32]


def spans(source: Database, target: PgDatabase) -> list[Span]:
    """The file's audit entries in spans, each with how far it is renumbered in the target: those
    an earlier run numbered as it did, the rest after every number the target has handed out
    (or as they are, into a trail without entries or holding this file's first entry under its own
    number: a copy an earlier version began). Empty when the file has no audit entries."""
    with source.read() as conn:
        first = conn.execute(f"SELECT {transfer_rows.AUDIT_COLUMNS} FROM audit_log ORDER BY seq LIMIT 1").fetchone()
        lasting = conn.execute(f"SELECT {transfer_rows.AUDIT_COLUMNS} FROM audit_log WHERE {_LASTING}"
                               " ORDER BY seq LIMIT 1").fetchone()
        last = conn.execute("SELECT MAX(seq) FROM audit_log").fetchone()[0]
    if first is None:
        return []
    first = tuple(first)
    # The name written is the lasting entry's; the first entry's is looked up too, as a file whose
    # trail held only recalls at its earlier copy (or an earlier version of this code) named it so.
    names = list(dict.fromkeys(_name(tuple(entry)) for entry in (lasting, first) if entry is not None))

    def work(conn: Any) -> list[Span]:
        conn.execute("LOCK TABLE audit_log IN EXCLUSIVE MODE")  # no entry is numbered while spans are claimed
        known = dict(conn.execute("SELECT name, value FROM engram_meta WHERE name = ANY(%s)", (names,)).fetchall())
        found = next((known[name] for name in names if name in known), None)
        handed = conn.execute(f"SELECT GREATEST(COALESCE((SELECT MAX(seq) FROM audit_log), 0),"
                              f" COALESCE(pg_sequence_last_value({_SEQUENCE}), 0))").fetchone()[0]
        claimed = _parse(found, first[0], last) if found is not None else []
        if not claimed:
            there = conn.execute(f"SELECT {transfer_rows.AUDIT_COLUMNS} FROM audit_log WHERE seq = %s",
                                 (first[0],)).fetchone()
            same = there is not None and (transfer_rows.canonical("audit_log", tuple(there))
                                          == transfer_rows.canonical("audit_log", first))
            claimed = [(first[0], last, 0 if handed == 0 or same else handed)]
        elif last > claimed[-1][1]:  # entries written to the file since: after every number handed out
            start, end, offset = claimed[-1]
            if handed - end == offset:  # nothing numbered there since: the span goes on
                claimed[-1] = (start, last, offset)
            else:
                claimed.append((end + 1, last, handed - end))
        conn.execute(f"SELECT setval({_SEQUENCE}, GREATEST(%s, %s, 1))", (claimed[-1][1] + claimed[-1][2], handed))
        conn.execute("INSERT INTO engram_meta (name, value) VALUES (%s, %s)"
                     " ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value", (names[0], json.dumps(claimed)))
        return claimed

    return target.transact(work)


def _parse(value: str, first: int, last: int) -> list[Span]:
    """The spans remembered (``value``), or an earlier version's single offset as one span."""
    try:
        found = json.loads(value)
    except ValueError:
        return []
    if isinstance(found, int):
        return [(first, last, found)]
    if isinstance(found, list) and all(isinstance(s, list) and len(s) == 3 and all(isinstance(n, int) for n in s)
                                       for s in found):
        return [(s[0], s[1], s[2]) for s in found]
    return []


def shift(claimed: list[Span]) -> Callable[[tuple[Any, ...]], tuple[Any, ...]]:
    """An audit_log row of the file as it lands in the target: its seq moved by its span's offset."""
    starts = [start for start, _, _ in claimed]

    def moved(row: tuple[Any, ...]) -> tuple[Any, ...]:
        at = max(bisect.bisect_right(starts, row[0]) - 1, 0)
        return (row[0] + claimed[at][2], *row[1:])

    return moved


def advance_sequence(conn: Any) -> None:
    """After a copy: new entries are numbered after the copied ones (which kept their seq, renumbered
    by their span), and after any number the sequence handed out already."""
    conn.execute(
        "SELECT setval(s, GREATEST((SELECT MAX(seq) FROM audit_log), COALESCE(pg_sequence_last_value(s), 0), 1))"
        " FROM CAST(pg_get_serial_sequence('audit_log', 'seq') AS regclass) AS s"
    )
