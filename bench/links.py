"""Link expansion on a dense graph: recall at depth 1-3 against depth 0, in the same run.

    python bench/links.py [--nodes 200] [--links 6000] [--repeat 20] [--json]

``--nodes`` memories in one SQLite store, ``--links`` random links among them (the issue's dense
case: 200 nodes, 6,000 links), text-only recall (no embedder, result cache off, touch off) of a
query matching every memory, limit 10. Expansion asks the store once per hop
(``neighbours_of_many``) and never loads a neighbour it already returned, so its cost follows
what it can return, not the number of links. Also run by ``bench/speed.py``.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from engram.config import RecallSettings
from engram.engine import Engram
from engram.store.sqlite import SqliteMemoryStore


def run(nodes: int = 200, links: int = 6000, repeat: int = 20) -> dict[str, Any]:
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
        rows: dict[str, Any] = {}
        for depth in (0, 1, 2, 3):
            samples, returned = [], 0
            for _ in range(repeat):
                start = time.perf_counter()
                result = engram.recall("graph node topic", depth=depth, limit=10, mode="text", touch=False)
                samples.append(time.perf_counter() - start)
                returned = len(result.hits)
            rows[str(depth)] = {"median_ms": statistics.median(samples) * 1000, "hits": returned}
        engram.close()
    base = rows["0"]["median_ms"]
    for row in rows.values():
        row["ratio_to_depth0"] = row["median_ms"] / base
    return {"nodes": nodes, "links": len(pairs), "depths": rows}


def print_rows(result: dict[str, Any]) -> None:
    print(f"Link expansion, {result['nodes']} memories, {result['links']} links (median ms, ratio to depth 0)")
    for depth, row in result["depths"].items():
        print(f"  depth {depth}: {row['median_ms']:7.2f} ms  x{row['ratio_to_depth0']:.1f}  ({row['hits']} hits)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=200)
    parser.add_argument("--links", type=int, default=6000)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = run(args.nodes, args.links, args.repeat)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print_rows(result)


if __name__ == "__main__":
    main()
