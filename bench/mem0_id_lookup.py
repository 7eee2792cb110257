"""What finding a memory by the id mem0 gave it costs the mem0 facade, through the index and without.

    python bench/mem0_id_lookup.py [--memories 10000] [--owners 100] [--rounds 200] [--dir DIR] [--json]

``engram.compat.mem0.Memory.get`` takes the id mem0 gave a memory it brought (``import_mem0``,
``engram import``), kept at ``metadata["mem0"]["id"]``; after engram's own id (a primary-key read)
misses, the facade asks the store for the memory with that mem0 id (``_by_mem0_id``), which SQLite
answers through the index ``memories_mem0_id`` (schema step 0015). The store is one shared SQLite
file of ``--memories`` memories of ``--owners`` users, imported through the facade (no embedding
model). Measured in the same run: ``get`` by mem0 id with the index, the same lookups with the index
dropped (the scan every lookup was before step 0015), and ``get`` by engram's id as the floor,
taking turns so a noisy spell on the shared machine hits each alike.

Prints median wall times, the scan's as a ratio to the index's, and the load average (the machine
is shared: compare ratios, not milliseconds); ``--json``: the same as one JSON document. No figure
is asserted anywhere.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from engram.compat.mem0 import Memory
from engram.engine import Engram
from engram.model import MemoryFilter, Scope


def build(home: Path, size: int, owners: int) -> tuple[Memory, list[str], list[str]]:
    """The facade over a store of ``size`` imported memories; their mem0 ids and engram ids."""
    facade = Memory(Engram.from_settings(home=home, embeddings={"provider": "none"}, files={"enabled": False}))
    items = [{"id": f"7f3e{i:08d}-0000-4000-8000-000000000000", "memory": f"fact number {i} about topic {i % 97}",
              "hash": f"h{i}", "metadata": {"n": i}, "created_at": "2025-03-01T08:00:00+00:00",
              "user_id": f"user{i % owners}"} for i in range(size)]
    for start in range(0, size, 2000):
        facade.import_mem0({"results": items[start:start + 2000]})
    mem0_ids = [item["id"] for item in items]
    everyone = MemoryFilter(scopes=tuple(Scope.parse(scope) for scope in facade.engram.stats().by_scope))
    engram_ids = [m.id for m in facade.engram.store.list(everyone, limit=size)]
    return facade, mem0_ids, engram_ids


def median_ms(lookup: Callable[[str], object], ids: list[str]) -> float:
    times = []
    for memory_id in ids:
        started = time.perf_counter()
        assert lookup(memory_id) is not None
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--owners", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        facade, mem0_ids, engram_ids = build(Path(tmp), args.memories, args.owners)
        rng = random.Random(11)
        asked = [rng.choice(mem0_ids) for _ in range(args.rounds)]
        by_engram_id = [rng.choice(engram_ids) for _ in range(args.rounds)]
        db = facade.engram.store.db
        with db.read() as conn:  # put back as the migration made it
            (index_sql,) = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'memories_mem0_id'").fetchone()
        indexed, scanned, floor = [], [], []
        for chunk in range(0, args.rounds, 20):
            part = asked[chunk:chunk + 20]
            indexed.append(median_ms(facade.get, part))
            with db.write() as conn:
                conn.execute("DROP INDEX memories_mem0_id")
            scanned.append(median_ms(facade.get, part))
            with db.write() as conn:
                conn.execute(index_sql)
            floor.append(median_ms(facade.get, by_engram_id[chunk:chunk + 20]))
        facade.close()
    figures = {"memories": args.memories, "owners": args.owners, "rounds": args.rounds,
               "mem0_id_indexed_ms": round(statistics.median(indexed), 3),
               "mem0_id_scan_ms": round(statistics.median(scanned), 3),
               "engram_id_ms": round(statistics.median(floor), 3),
               "load_average": os.getloadavg()[0]}
    figures["scan_over_index"] = round(figures["mem0_id_scan_ms"] / figures["mem0_id_indexed_ms"], 1)
    if args.json:
        print(json.dumps(figures))
        return
    print(f"{args.memories} memories of {args.owners} users, one shared SQLite file; medians of {args.rounds} lookups"
          f" (load {figures['load_average']:.2f})")
    print(f"  get(mem0 id), index memories_mem0_id  {figures['mem0_id_indexed_ms']:8.3f} ms")
    print(f"  get(mem0 id), index dropped (scan)    {figures['mem0_id_scan_ms']:8.3f} ms"
          f"   {figures['scan_over_index']}x the index")
    print(f"  get(engram id), primary key           {figures['engram_id_ms']:8.3f} ms")


if __name__ == "__main__":
    main()
