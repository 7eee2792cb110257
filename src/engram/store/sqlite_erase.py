"""What the SQLite store's full-text index does so an erase leaves none of a memory's words in it.

FTS5 does not remove a deleted document's terms from its index: it adds delete markers (which
hold the terms too) to a new segment, and both stay in the file until segments merge into the
oldest one. ``optimize`` merges them all, at a cost that grows with the index. FTS5's own
``secure-delete`` option (SQLite 3.42+) instead removes a document's entries where they are, at a
cost that grows with the document; once set, SQLite before 3.42 (the ``sqlite3`` of many Pythons)
refuses to read the index ("invalid fts5 file format"). So:

- the first erase on a file whose SQLite has it merges the index once (what earlier deletes left)
  and turns the option on: from then on every delete and update removes its terms in place, and
  an erase merges nothing (``purge``);
- without it, every erase merges the whole index (``purge``);
- an engram on an older SQLite that opens such a file turns the option off and, once a delete used
  it (FTS5 then marks the index as a format older SQLite refuses), rebuilds the index from the
  memories (``readable``), once, instead of failing every search.

The pages a merge or an in-place removal frees are zeroed by ``PRAGMA secure_delete``, which every
connection sets (``db/sqlite.py``).
"""

from __future__ import annotations

from typing import Any

from engram.db.sqlite import Database

# FTS5 keeps its settings in this shadow table of ``memories_fts`` (migration 0006).
_CONFIG = "memories_fts_config"


def in_place_available(conn: Any) -> bool:
    """Whether the SQLite behind ``conn`` has FTS5's ``secure-delete`` (3.42 and later)."""
    version = conn.execute("SELECT sqlite_version()").fetchone()[0]
    return tuple(int(part) for part in version.split(".")[:2]) >= (3, 42)


def in_place(conn: Any) -> bool:
    """Whether ``memories_fts`` removes a deleted document's terms where they are."""
    row = conn.execute(f"SELECT v FROM {_CONFIG} WHERE k = 'secure-delete'").fetchone()
    return row is not None and int(row[0]) == 1


def purge(conn: Any) -> None:
    """Inside an erase's write transaction, after the delete: leave none of the deleted documents'
    terms in the index (see the module docstring)."""
    if in_place(conn):
        return
    conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('optimize')")
    if in_place_available(conn):
        conn.execute("INSERT INTO memories_fts (memories_fts, rank) VALUES ('secure-delete', 1)")


def readable(db: Database) -> bool:
    """On a SQLite before 3.42, undo what an engram on 3.42+ set (see the module docstring): the
    ``secure-delete`` setting, which this SQLite would not follow (its deletes would leave terms
    that a later erase, trusting the setting, would not merge away), and once a delete used it
    (FTS5 then marks the index version 5, which this SQLite refuses to read), the index itself,
    rebuilt from the memories: a cost that grows with the store, paid once. Whether it did."""
    with db.read() as conn:
        if in_place_available(conn):
            return False
        setting = in_place(conn)
        version = int(conn.execute(f"SELECT v FROM {_CONFIG} WHERE k = 'version'").fetchone()[0])
    if not setting and version <= 4:
        return False
    with db.write() as conn:
        conn.execute(f"DELETE FROM {_CONFIG} WHERE k = 'secure-delete'")
        if version > 4:
            conn.execute(f"UPDATE {_CONFIG} SET v = 4 WHERE k = 'version'")
            conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('rebuild')")
    return True
