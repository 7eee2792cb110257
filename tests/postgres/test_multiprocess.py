"""Four processes store, recall, link and forget against one database at once; afterwards the
data is exactly the union of the acknowledged writes and no operation failed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from engram.db.postgres import PgDatabase
from engram.engine import Engram
from engram.store.postgres import PostgresMemoryStore

WORKERS = 4


def test_four_processes_share_one_database(pg_url: str, tmp_path: Path) -> None:
    env = {**os.environ, "ENGRAM_DATABASE_URL": pg_url}
    start_at = time.time() + 3.0  # interpreter start-up takes ~1 s on a busy machine
    logs = [tmp_path / f"worker{i}.json" for i in range(WORKERS)]
    procs = [
        subprocess.Popen([sys.executable, str(Path(__file__).with_name("_worker.py")), str(i), str(start_at), str(log)],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for i, log in enumerate(logs)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err  # no operation failed in any worker
    results = [json.loads(log.read_text()) for log in logs]

    store = PostgresMemoryStore(PgDatabase.connect(pg_url))
    try:
        mem = Engram(store, agent="team")
        everything = {m.key: m for m in store.iter_all()}
        stored = {k for r in results for k in r["stored"]}
        forgotten = {k for r in results for k in r["forgotten"]}
        own = {k for k in everything if k.startswith("w")}
        assert own == stored - forgotten

        shared_ids = {i for r in results for i in r["shared"]}
        common = [m for m in everything.values() if m.content.startswith("common topic fact")]
        assert len(common) == 6 and {m.id for m in common} == shared_ids  # one per text, same id everywhere

        racing = sorted(k for r in results for k in r["racing"])
        assert racing == ["racing-key", "racing-key-2", "racing-key-3", "racing-key-4"]

        expected_links = {
            frozenset(pair) for r in results for pair in r["links"] if not set(pair) & forgotten
        }
        actual_links = {frozenset((m.key, everything_by_id.key)) for m in everything.values()
                        for everything_by_id in store.get_many(list(m.links))}
        assert actual_links == expected_links

        # Recall strengthening lost no update: each count equals the recalls that returned it.
        returned: dict[str, int] = {}
        for r in results:
            for memory_id, n in r["recalled"].items():
                returned[memory_id] = returned.get(memory_id, 0) + n
        for memory in everything.values():
            assert memory.recall_count == returned.get(memory.id, 0), memory.key
        assert mem.count() == len(everything)
    finally:
        store.close()
