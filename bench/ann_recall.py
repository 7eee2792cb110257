"""The SQLite store's vector side at scale: HNSW with and without exact re-scoring, against exact search.

    python bench/ann_recall.py --store DIR/memory.db [--size 1000000] [--queries 200] [--rerank 0,100,200]

The store is bench/speed.py's (LoCoMo turns with real MiniLM vectors, then recombined turns whose
vectors are perturbed mixes of two real ones: dense near-duplicates, the hard case for a graph
index); it is built at ``--store`` when missing (~15 min of CPU at 1M) and reused afterwards.
Queries are LoCoMo questions embedded by the local model (cached), so timings exclude embedding.

Printed, from one run taking turns query by query (the machine is shared: read the ratios):
``search_vector`` (limit 10) for each ``vector_index.rerank`` asked for, with the share of the
exact top 10 it returns and its latency beside exact numpy search over the same file; then
``Engram.recall`` in hybrid and vector mode with the default settings; the load average.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import speed  # bench/speed.py: its store builder, query embedder and timing helpers

from engram.config import RecallSettings
from engram.embed import Embedder, EmbeddingCache
from engram.embed.local import LocalProvider
from engram.engine import Engram
from engram.model import MemoryFilter, Scope
from engram.store.index_settings import VectorIndexSettings
from engram.store.sqlite import SqliteMemoryStore

FILT = MemoryFilter(scopes=(Scope(), Scope(speed.AGENT)))


def _ms(samples: list[float]) -> str:
    ordered = sorted(samples)
    return f"{statistics.median(ordered) * 1000:.2f} / {ordered[int(0.95 * (len(ordered) - 1))] * 1000:.2f}"


def _ids(store: SqliteMemoryStore, query: np.ndarray) -> tuple[float, list[str]]:
    started = time.perf_counter()
    hits = store.search_vector(query, FILT, limit=10)
    return time.perf_counter() - started, [m.id for m, _ in hits]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", type=Path, required=True, help="the store file (built there when missing)")
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rerank", default="0,100", help="vector_index.rerank values to compare")
    args = parser.parse_args()

    turns, questions = speed.load_texts(speed.DEFAULT_DATA)
    queries = questions[: args.queries]
    cache_dir = Path(os.environ.get("ENGRAM_TEST_CACHE_DIR", Path.home() / ".cache" / "engram-tests"))
    cache_dir.mkdir(parents=True, exist_ok=True)
    embedder = Embedder(LocalProvider(), cache=EmbeddingCache(cache_dir / "embeddings.db"))
    table = dict(zip(queries, embedder.embed(queries), strict=True))
    if not args.store.exists():
        print(f"building {args.size:,} memories at {args.store} ...", flush=True)
        args.store.parent.mkdir(parents=True, exist_ok=True)
        built = speed.build_store(args.store, args.size, turns, embedder.embed(turns), str(embedder.identity))
        print(f"  inserts {built['insert_s']:.0f} s, HNSW graph {built['index_build_s']:.0f} s", flush=True)

    settings = [int(r) for r in args.rerank.split(",")]
    stores: dict[str, SqliteMemoryStore] = {
        f"hnsw, rerank {r}": SqliteMemoryStore(args.store, vector_index=VectorIndexSettings(rerank=r)) for r in settings
    }
    stores["exact"] = SqliteMemoryStore(args.store, vector_index=VectorIndexSettings(enabled=False))
    for store in stores.values():
        store.search_vector(table[queries[0]], FILT, limit=10)  # warm: graph mapped, exact matrix loaded
    times: dict[str, list[float]] = {name: [] for name in stores}
    found: dict[str, list[list[str]]] = {name: [] for name in stores}
    for query in queries:  # settings take turns query by query: a noisy spell hits them alike
        for name, store in stores.items():
            took, ids = _ids(store, table[query])
            times[name].append(took)
            found[name].append(ids)
    for store in stores.values():
        store.close()

    engram = Engram(SqliteMemoryStore(args.store), agent=speed.AGENT,
                    embedder=speed.PrecomputedEmbedder(embedder.identity, table, embedder),
                    recall_settings=RecallSettings(cache_ttl_s=0))
    for query in queries:  # every text recall embeds is in the table before timing
        engram.recall(query, mode="vector", touch=False)
    recall: dict[str, list[float]] = {"hybrid": [], "vector": []}
    for query in queries:
        for mode, samples in recall.items():
            started = time.perf_counter()
            engram.recall(query, mode=mode, touch=False)
            samples.append(time.perf_counter() - started)
    engram.close()

    count = len(turns)
    print(f"\n{args.size:,} memories ({min(count, args.size):,} real MiniLM vectors, the rest near-duplicate mixes);"
          f" {len(queries)} LoCoMo questions; load average {os.getloadavg()[0]:.1f}")
    print(f"{'search_vector, limit 10':<26} {'p50 / p95 ms':>16} {'x exact':>8} {'share of exact top 10':>22}")
    exact_median = statistics.median(times["exact"])
    for name in stores:
        print(f"{name:<26} {_ms(times[name]):>16} {statistics.median(times[name]) / exact_median:>8.3f}"
              f" {speed.overlap(found[name], found['exact']):>22.3f}")
    for mode, samples in recall.items():
        print(f"Engram.recall {mode + ' (defaults)':<12} {_ms(samples):>16}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
