"""One agent's stats (``Engram.visible_stats``) on a large shared store, beside one COUNT of its view.

    python bench/agent_stats.py [--size 100000] [--repeat 15] [--backends sqlite,postgres] [--json]

``--size`` memories in one store shared by two agents: each holds 45% (a tenth of it over five
sessions), the remaining 10% are global, so an agent (no session) reads half the store. Scopes,
categories and types (custom ones too) are drawn at random; 2% are superseded, a quarter are linked
(pairs within one scope), 90% have a vector (16-d, stored straight through ``set_vectors``).
Loaded with ``import_memories`` in batches, then ``ANALYZE``-d.

Timed, taking turns within each repeat so a noisy spell on the shared machine hits both alike:
``visible_stats()`` of agent ``a`` and, as the yardstick, one read of every row of the table
(``SELECT SUM(LENGTH(content)) FROM memories``: no index can shorten it, so a version's indexes
leave it alone). The ratio between them is the figure to compare between versions; the
milliseconds move with the machine's load (printed beside them). PostgreSQL is a
throw-away server (``engram.testing.pg_server``), started only when ``postgres`` is asked for.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from engram.config import RecallSettings
from engram.engine import Engram
from engram.model import Category, Memory, Scope

BATCH = 5000
TYPES = ("learned", "experience", "decision", "social", "recipe", "habit")


def _scope(rng: random.Random) -> Scope:
    draw = rng.random()
    if draw < 0.1:
        return Scope()
    agent = "a" if draw < 0.55 else "b"
    return Scope(agent, f"s{rng.randrange(5)}") if rng.random() < 0.1 else Scope(agent)


def _load(engram: Engram, size: int) -> None:
    rng = random.Random(3)
    categories = list(Category)
    by_scope: dict[Scope, list[str]] = {}
    for offset in range(0, size, BATCH):
        batch = [
            Memory(id=f"m{i:08d}", key=f"k{i}", content=f"memory number {i} of the stats bench",
                   scope=_scope(rng), category=rng.choice(categories), type=rng.choice(TYPES),
                   created_at=1.7e9 + i, updated_at=1.7e9 + i)
            for i in range(offset, min(size, offset + BATCH))
        ]
        engram.store.import_memories(batch)
        for memory in batch:
            by_scope.setdefault(memory.scope, []).append(memory.id)
        vectors = [(m.id, np.random.default_rng(i).random(16, dtype=np.float32))
                   for i, m in enumerate(batch) if rng.random() < 0.9]
        engram.store.set_vectors("bench:stats:16", vectors)
    for ids in by_scope.values():
        for memory_id in rng.sample(ids, len(ids) // 50):  # 2% superseded
            engram.store.set_superseded(memory_id, rng.choice(ids), now=1.8e9)
        for _ in range(len(ids) // 8):  # a link per 8 memories: a quarter of them linked
            a, b = rng.sample(ids, 2)
            engram.store.link(a, b)


def _open(backend: str, folder: Path, server: Any) -> Any:
    if backend == "sqlite":
        from engram.store.sqlite import SqliteMemoryStore

        return SqliteMemoryStore(folder / "stats.db")
    from engram.db.postgres import PgDatabase
    from engram.store.postgres import PostgresMemoryStore

    server.execute("CREATE DATABASE stats_bench")
    return PostgresMemoryStore(PgDatabase.connect(server.url("stats_bench")))


def _analyze(engram: Engram) -> None:
    if engram.store.name == "sqlite":
        with engram.store.db.write() as conn:
            conn.execute("ANALYZE")
    else:
        engram.store.db.transact(lambda conn: conn.execute("ANALYZE"))


def _read_all(engram: Engram) -> None:
    with engram.store.db.read() as conn:
        conn.execute("SELECT SUM(LENGTH(content)) FROM memories").fetchone()


def run(size: int = 100_000, repeat: int = 15, backends: tuple[str, ...] = ("sqlite",)) -> dict[str, Any]:
    from engram.testing import pg_server

    rows: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        server = pg_server.start(folder / "pg") if "postgres" in backends else None
        try:
            for backend in backends:
                store = _open(backend, folder, server)
                engram = Engram(store, recall_settings=RecallSettings(cache_ttl_s=0))
                start = time.perf_counter()
                _load(engram, size)
                _analyze(engram)
                load_s = time.perf_counter() - start
                agent = engram.for_agent("a")
                stats = agent.visible_stats()  # warm: pages cached, plans made
                _read_all(engram)
                wall: dict[str, list[float]] = {"stats": [], "scan": []}
                for _ in range(repeat):
                    for name, call in (("stats", agent.visible_stats), ("scan", functools.partial(_read_all, engram))):
                        began = time.perf_counter()
                        call()
                        wall[name].append((time.perf_counter() - began) * 1000)
                stats_ms, scan_ms = statistics.median(wall["stats"]), statistics.median(wall["scan"])
                rows[backend] = {
                    "load_s": load_s, "stats_ms": stats_ms, "scan_ms": scan_ms,
                    "ratio_to_scan": stats_ms / scan_ms, "memories_seen": stats.memories,
                    "by_scope": stats.by_scope, "links": stats.links, "vectors": stats.vectors,
                    "load_average": os.getloadavg()[0],
                }
                engram.close()
        finally:
            if server is not None:
                server.stop()
    return {"size": size, "repeat": repeat, "backends": rows}


def print_rows(result: dict[str, Any]) -> None:
    print(f"visible_stats of one agent, {result['size']:,} memories shared by two agents "
          f"(median of {result['repeat']}; ratio to one read of every row)")
    for backend, row in result["backends"].items():
        print(f"  {backend:<9} stats {row['stats_ms']:8.1f} ms   every row {row['scan_ms']:7.1f} ms   "
              f"x{row['ratio_to_scan']:.2f}   ({row['memories_seen']:,} seen, {row['links']:,} links, "
              f"{row['vectors']:,} vectors; load average {row['load_average']:.1f}; loaded in {row['load_s']:.0f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--backends", default="sqlite")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = run(args.size, args.repeat, tuple(b for b in args.backends.split(",") if b))
    if args.json:
        print(json.dumps(result))
    else:
        print_rows(result)


if __name__ == "__main__":
    main()
