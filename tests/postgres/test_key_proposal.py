"""A taken key gets the next free ``-N`` suffix in its scope on PostgreSQL too: the first
``_KEY_PROBES`` suffixes are looked up by equality (index seeks under any collation), and the
rest by reading the scope's ``p-...`` keys when those are all taken."""

from __future__ import annotations

from engram.db.postgres import PgDatabase
from engram.engine import Engram
from engram.store import postgres


def test_a_taken_key_gets_the_next_free_suffix_past_the_probes_too(pg_url: str) -> None:
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
        taken = ["pear", *(f"pear-{n}" for n in range(2, postgres._KEY_PROBES + 3))]  # past the probes
        engram.remember_many([{"content": f"memory keyed {key}", "key": key} for key in taken if key != "pear-17"])
        assert free("default", "pear") == "pear-17"  # every probe taken: the scope's pear-... keys are read
        engram.remember("memory keyed pear-17", key="pear-17")
        assert free("default", "pear") == f"pear-{postgres._KEY_PROBES + 3}"
    finally:
        store.close()
