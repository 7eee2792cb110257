"""Reads without a transaction around them (``PgDatabase.read(statements_alone=True)``, used on
recall's path to save the BEGIN and COMMIT round trips): the connection goes back to the pool
as it came (transactions again, so ``transact`` stays atomic), after an error too, and inside
``transact`` such a read still joins the transaction and sees its writes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from engram.db.pg_settings import PostgresSettings
from engram.db.postgres import PgDatabase
from engram.errors import StorageError


@pytest.fixture
def db(pg_url: str) -> Iterator[PgDatabase]:
    # One connection: every call below gets the same one back from the pool.
    database = PgDatabase.connect(pg_url, PostgresSettings(pool_min_size=1, pool_max_size=1))
    database.transact(lambda conn: conn.execute("CREATE TABLE t (n INTEGER UNIQUE)"))
    yield database
    database.close()


def test_a_read_alone_runs_outside_a_transaction_and_gives_the_connection_back_as_it_came(db: PgDatabase) -> None:
    with db.read(statements_alone=True) as conn:
        assert conn.autocommit
        assert conn.execute("SELECT count(*) FROM t").fetchone()[0] == 0
        assert conn.info.transaction_status.name == "IDLE"  # no transaction left open
    with db.read() as conn:
        assert not conn.autocommit

    def half_done(conn: Any) -> None:
        conn.execute("INSERT INTO t VALUES (1)")
        conn.execute("INSERT INTO t VALUES (1)")  # refused: the first insert goes too

    with pytest.raises(StorageError):
        db.transact(half_done)
    with db.read(statements_alone=True) as conn:
        assert conn.execute("SELECT count(*) FROM t").fetchone()[0] == 0


def test_a_failed_read_alone_leaves_the_connection_usable(db: PgDatabase) -> None:
    with pytest.raises(StorageError), db.read(statements_alone=True) as conn:
        conn.execute("SELECT * FROM no_such_table")
    with db.read() as conn:
        assert not conn.autocommit
        assert conn.execute("SELECT 1").fetchone()[0] == 1


def test_a_read_alone_inside_transact_joins_it(db: PgDatabase) -> None:
    def work(conn: Any) -> int:
        conn.execute("INSERT INTO t VALUES (7)")
        with db.read(statements_alone=True) as inner:
            assert inner is conn and not inner.autocommit
            return int(inner.execute("SELECT count(*) FROM t").fetchone()[0])

    assert db.transact(work) == 1
