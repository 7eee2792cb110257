"""A SQLite store as an earlier engram left it, for the tests of a migration step on old data."""

from __future__ import annotations

import sqlite3
import time

from engram.db import migrate as migrations


def sqlite_steps_before(conn: sqlite3.Connection, version: int) -> None:
    """Run every SQLite step below ``version`` on ``conn``, recorded as an earlier engram recorded
    them: opening the store afterwards runs ``version`` and those after it on that schema."""
    conn.execute(migrations._RECORD_TABLE)
    for step in migrations.available("sqlite"):
        if step.version >= version:
            continue
        for statement in migrations._statements(step.sql):
            conn.execute(statement)
        conn.execute("INSERT INTO schema_migrations VALUES (?, ?, ?)", (step.version, step.name, time.time()))

