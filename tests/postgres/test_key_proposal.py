"""A taken key gets the next free ``-N`` suffix in its scope on PostgreSQL too (``store/free_key.py``):
keys are looked up by equality (index seeks under any collation), a few batches of them, and the
scope's ``p-...`` keys are never all read, however many are taken."""

from __future__ import annotations

from typing import Any

from engram.db.postgres import PgDatabase
from engram.engine import Engram
from engram.store import postgres


def test_a_taken_key_gets_the_next_free_suffix_past_the_first_sixteen_too(pg_url: str) -> None:
    store = postgres.PostgresMemoryStore(PgDatabase.connect(pg_url))
    try:
        def free(agent: str, proposed: str) -> str:
            return store.db.transact(lambda conn: store._free_key(conn, agent, "", proposed))

        engram = Engram(store)
        for key in ("apple", "apple-2", "apple-4", "apple,pie"):
            engram.remember(f"memory keyed {key}", key=key)
        engram.for_agent("someone-else").remember("another agent's apple-3", key="apple-3")
        assert free("default", "apple") == "apple-3"
        assert free("someone-else", "apple") == "apple"
        assert free("default", "pear") == "pear"
        taken = ["pear", *(f"pear-{n}" for n in range(2, 19))]  # past the first 16
        engram.remember_many([{"content": f"memory keyed {key}", "key": key} for key in taken if key != "pear-17"])
        assert free("default", "pear") == "pear-17"
        engram.remember("memory keyed pear-17", key="pear-17")
        assert free("default", "pear") == "pear-19"
    finally:
        store.close()


class _Counting:
    """A connection that counts the rows its queries return."""

    def __init__(self, conn: Any) -> None:
        self.conn, self.rows = conn, 0

    def execute(self, *args: Any) -> list[Any]:
        rows = self.conn.execute(*args).fetchall()
        self.rows += len(rows)
        return rows


def test_a_long_run_of_suffixes_is_not_read_to_find_the_next_one(pg_url: str) -> None:
    store = postgres.PostgresMemoryStore(PgDatabase.connect(pg_url))
    try:
        engram = Engram(store)
        keys = ["apple", *(f"apple-{n}" for n in range(2, 3001))]
        engram.remember_many([{"content": f"memory keyed {key}", "key": key} for key in keys])
        counting: list[_Counting] = []

        def free(conn: Any) -> str:
            counting.append(_Counting(conn))
            return store._free_key(counting[-1], "default", "", "apple")

        assert store.db.transact(free) == "apple-3001"
        # A few batches of look-ups find ~60 taken keys; reading the apple-N keys returned 3,000.
        assert counting[-1].rows < 100, counting[-1].rows
    finally:
        store.close()
