"""Reading another system's SQLite database (PtrClaw's, sclaw's) for an import: opened read-only,
its tables' rows by name, each value checked for the type the source's schema gives it.

The file is opened with Python's ``sqlite3`` through a ``file:…?mode=ro`` URI, so an import never
writes to it, nor leaves a file beside it (see ``open_readonly``). Each row is named by its table
and SQLite ``rowid`` (``memories row 3``), the place an error points at, as a line number does for
a text source.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from engram.db.foreign import NAMES, columns_by_table, is_sqlite_file, is_wal_mode, schema_kind
from engram.importers.base import fail

Row = Mapping[str, Any]


@contextlib.contextmanager
def open_readonly(path: Path) -> Iterator[sqlite3.Connection]:
    """A read-only connection to the database at ``path``; raises ``SnapshotError`` naming the path
    when it is not a readable SQLite file."""
    if not path.is_file() or not is_sqlite_file(path):
        raise fail("path", f"{path} is not a SQLite database file",
                   "a PtrClaw or sclaw memory.db, or mcp-memory-service's sqlite_vec.db")
    # A WAL database, even opened read-only, gets its -wal and -shm files made when they are
    # missing, and a read-only connection cannot remove them on close: they were left beside the
    # other system's database. With no -wal file the database is whole in its own file and no
    # process has it open (one that has keeps the -wal), so it is read as immutable, creating
    # nothing; with one (the system running, or stopped uncleanly) it is read through it.
    quiet = "&immutable=1" if is_wal_mode(path) and not Path(f"{path}-wal").exists() else ""
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro{quiet}", uri=True)
    except sqlite3.Error as exc:
        raise fail("path", f"cannot open {path}: {exc}", "a readable SQLite database file") from None
    conn.row_factory = sqlite3.Row
    conn.text_factory = _decoded
    try:
        yield conn
    except sqlite3.Error as exc:
        raise fail("path", f"cannot read {path}: {exc}", "a readable SQLite database file") from None
    finally:
        conn.close()


def detect(path: Path) -> str | None:
    """The kind of the database at ``path`` (``ptrclaw-sqlite``, ``sclaw``), or None."""
    with open_readonly(path) as conn:
        return schema_kind(columns_by_table(conn))


def rows(conn: sqlite3.Connection, table: str, needed: tuple[str, ...], optional: tuple[str, ...] = (),
         kind: str = "") -> Iterator[tuple[str, Row]]:
    """Each row of ``table`` in ``rowid`` order as ``(where, {column: value})``: the ``needed``
    columns, and those of ``optional`` the table has (a missing one is absent from the row). A
    missing table or needed column raises ``SnapshotError`` naming it."""
    tables = columns_by_table(conn)
    source = NAMES.get(kind, kind)
    if table not in tables:
        raise fail(table, "no such table", f"a {source} database with its {table} table")
    missing = [c for c in needed if c not in tables[table]]
    if missing:
        raise fail(table, f"has no column {', '.join(missing)}", f"{source}'s {table} columns: {', '.join(needed)}")
    wanted = [*needed, *(c for c in optional if c in tables[table])]
    listed = ", ".join(f'"{c}"' for c in wanted)
    for row in conn.execute(f'SELECT rowid AS "rowid", {listed} FROM "{table}" ORDER BY rowid'):
        yield f"{table} row {row['rowid']}", {c: row[c] for c in wanted}


class _Undecodable(bytes):
    """A TEXT value whose bytes are not UTF-8 (SQLite stores what a program gives it), kept so the
    row and column that hold it are named, as any other bad value is."""


def _decoded(raw: bytes) -> str | _Undecodable:
    # sqlite3 would otherwise fail the whole query, naming neither the table nor the row.
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _Undecodable(raw[max(exc.start - 20, 0):exc.start + 20])


def text(value: Any, where: str, *, empty: bool = True) -> str:
    """A TEXT column's value as it is (never stripped: content round-trips byte for byte)."""
    if isinstance(value, _Undecodable):
        raise fail(where, f"is not UTF-8 text (near {bytes(value)!r})", "UTF-8 text")
    if not isinstance(value, str):
        raise fail(where, f"got {_sql_type(value)}", "text")
    if not empty and not value.strip():
        raise fail(where, "is empty", "non-empty text")
    return value


def optional_text(value: Any, where: str) -> str:
    """A TEXT column that may be NULL or empty ("" then)."""
    return "" if value is None else text(value, where)


def _sql_type(value: Any) -> str:
    if value is None:
        return "NULL"
    return {bytes: "a BLOB", int: f"the integer {value}", float: f"the number {value}"}.get(type(value), "text")
