"""Link expansion on a dense graph: recall at depth 1-3 against depth 0, in the same run.

    python bench/links.py [--nodes 200] [--links 6000] [--limit 10] [--repeat 30] [--json]

``--nodes`` memories in one SQLite store, ``--links`` random links among them (the issue's dense
case: 200 nodes, 6,000 links, ~60 per memory), text-only recall (no embedder, result cache off,
touch off) of a query matching every memory, ``--limit`` 10. Each hop of the expansion adds at
most ``limit`` neighbours (the hits taking turns), asks the store for the frontier's neighbour
ids in one call and loads only the rows it keeps, so its cost follows what it may return, not
the graph's links. The depths take turns within each repeat, so a noisy spell on the shared
machine hits them alike; wall and CPU time (of this thread, steadier when the host is busy) are
both printed. Also run by ``bench/speed.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from engram.config import RecallSettings
from engram.engine import Engram
from engram.store.sqlite import SqliteMemoryStore


def run(nodes: int = 200, links: int = 6000, repeat: int = 30, limit: int = 10) -> dict[str, Any]:
    rng = random.Random(5)
    with tempfile.TemporaryDirectory() as tmp:
        engram = Engram(SqliteMemoryStore(Path(tmp) / "graph.db"), recall_settings=RecallSettings(cache_ttl_s=0))
        ids = [r.memory.id for r in engram.remember_many(
            [{"content": f"graph node {i} about topic {i % 7}"} for i in range(nodes)])]
        pairs: set[tuple[str, str]] = set()
        with engram.store.db.write():
            while len(pairs) < min(links, nodes * (nodes - 1) // 2):
                a, b = sorted(rng.sample(ids, 2))
                if (a, b) not in pairs:
                    pairs.add((a, b))
                    engram.store.link(a, b)

        def recall(depth: int) -> Any:
            return engram.recall("graph node topic", depth=depth, limit=limit, mode="text", touch=False)

        depths = (0, 1, 2, 3)
        hits = {depth: len(recall(depth).hits) for depth in depths}  # warm: pages cached, plans made
        wall: dict[int, list[float]] = {depth: [] for depth in depths}
        cpu: dict[int, list[float]] = {depth: [] for depth in depths}
        for _ in range(repeat):
            for depth in depths:
                start, start_cpu = time.perf_counter(), time.thread_time()
                recall(depth)
                wall[depth].append(time.perf_counter() - start)
                cpu[depth].append(time.thread_time() - start_cpu)
        rows: dict[str, Any] = {
            str(depth): {"median_ms": statistics.median(wall[depth]) * 1000,
                         "median_cpu_ms": statistics.median(cpu[depth]) * 1000, "hits": hits[depth]}
            for depth in depths}
        engram.close()
    base, base_cpu = rows["0"]["median_ms"], rows["0"]["median_cpu_ms"]
    for row in rows.values():
        row["ratio_to_depth0"] = row["median_ms"] / base
        row["cpu_ratio_to_depth0"] = row["median_cpu_ms"] / base_cpu if base_cpu else None
    return {"nodes": nodes, "links": len(pairs), "limit": limit, "depths": rows, "load_average": os.getloadavg()[0]}


def print_rows(result: dict[str, Any]) -> None:
    print(f"Link expansion, {result['nodes']} memories, {result['links']} links, limit {result['limit']} "
          f"(median ms, ratio to depth 0; "
          f"CPU time too, steadier on a busy host; load average {result['load_average']:.1f})")
    for depth, row in result["depths"].items():
        cpu = row["cpu_ratio_to_depth0"]
        print(f"  depth {depth}: {row['median_ms']:7.2f} ms  x{row['ratio_to_depth0']:.1f}   "
              f"cpu {row['median_cpu_ms']:6.2f} ms  x{cpu or 0:.1f}  ({row['hits']} hits)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=200)
    parser.add_argument("--links", type=int, default=6000)
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = run(args.nodes, args.links, args.repeat, args.limit)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print_rows(result)


if __name__ == "__main__":
    main()
