"""Real write failures for the contracts' "a storage failure part-way" cases: a trigger in the
database itself that aborts the insert (or the delete) of one row, after the rows before it were
written in the same transaction (what a full disk or a constraint does), not a mock of engram's code."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import psycopg
from psycopg import sql

# The statement a trigger aborts, and the name its row has in the trigger's condition.
Statement = Literal["INSERT", "DELETE"]
_ROW = {"INSERT": "NEW", "DELETE": "OLD"}


@contextlib.contextmanager
def sqlite_insert_fails(path: str | Path, table: str, content: str, on: Statement = "INSERT") -> Iterator[None]:
    """While inside, inserting (``on="DELETE"``: deleting) a row of ``table`` whose ``content`` is
    ``content`` aborts."""
    quoted = content.replace("'", "''")
    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.execute(f"CREATE TRIGGER contract_failing BEFORE {on} ON {table} WHEN {_ROW[on]}.content = '{quoted}' "
                     "BEGIN SELECT RAISE(ABORT, 'injected failure'); END")
        conn.commit()
        try:
            yield
        finally:
            conn.execute("DROP TRIGGER contract_failing")
            conn.commit()


@contextlib.contextmanager
def postgres_insert_fails(url: str, table: str, content: str, on: Statement = "INSERT") -> Iterator[None]:
    """``sqlite_insert_fails`` on the PostgreSQL database at ``url``."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE FUNCTION contract_failing() RETURNS trigger LANGUAGE plpgsql AS "
                     "$$ BEGIN RAISE EXCEPTION 'injected failure'; END $$")
        conn.execute(sql.SQL("CREATE TRIGGER contract_failing BEFORE {} ON {} FOR EACH ROW WHEN "
                             "({}.content = {}) EXECUTE FUNCTION contract_failing()").format(
                                 sql.SQL(on), sql.Identifier(table), sql.SQL(_ROW[on]), sql.Literal(content)))
        try:
            yield
        finally:
            conn.execute(sql.SQL("DROP TRIGGER contract_failing ON {}").format(sql.Identifier(table)))
            conn.execute("DROP FUNCTION contract_failing()")
