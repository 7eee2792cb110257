"""Full text at a million memories: recall latency and the share of the exact top 10, two corpora.

    python bench/text_scale.py --dir DIR [--size 1000000] [--queries 200] [--corpus locomo,real] [--json]

Stores are built once under ``DIR`` (``DIR/<corpus>-<size>/memory.db``, ~15-25 minutes each at 1M on
2 cores) and reused by later runs; keep ``DIR`` outside the repository.

Corpora (the output names which figures come from which):

- ``locomo``: ``bench/speed.py``'s store: 2,759 real LoCoMo turns with real MiniLM vectors, then
  recombinations of them ("turn A + half of turn B") with mixed, perturbed vectors; queries are
  LoCoMo questions (vectors from the local model, cached). Few distinct words: common terms
  match a large share of rows, the hard case for ranking.
- ``real``: real English from the machine (``bench/real_corpus.py``: Debian package descriptions,
  manual pages, Python's documentation topics), with ``HashingEmbedder`` vectors (the local model
  embeds ~100 texts/s: 1M texts would take hours); queries are Debian packages' one-line summaries.
  Its vector side means nothing semantically; its text side is the point.

For each corpus, in one run and taking turns query by query (so a noisy spell on the shared
machine hits all alike), ``Engram.recall`` with touch and the result cache off, query embedding
excluded (precomputed), wall time median / p95:

- hybrid and text with the default settings (the Tantivy index above ``full_text.index_threshold``);
- the same with the index off (``full_text.index_enabled = false``): FTS5 with bounded ranking,
  what large stores did before;
- text ranking every match with FTS5 (index off, ``max_ranked_rows = 0``): the exact baseline;
- vector-only recall through the HNSW segments, and through exact numpy search over every vector
  (``vector_index.enabled = false``): the vector side's baseline.

It prints each mode's times as ratios to the exact text baseline's, the share of the exact top 10
each text mode and the vector mode keep, the index build time, the load average and the peak resident memory.
"""

from __future__ import annotations

import os

# The exact vector baseline multiplies a 1M x 384 matrix: BLAS's threads then spin for a while
# after each call, and their CPU counts against whichever mode is timed next (time_in_turns
# reads the process's CPU). One BLAS thread keeps each mode's CPU its own.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import json
import random
import resource
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import real_corpus  # bench/real_corpus.py
import speed  # bench/speed.py: the LoCoMo store builder and the precomputed-query embedder

from engram.config import RecallSettings
from engram.engine import Engram
from engram.model import Scope, make_draft
from engram.store.index_settings import FullTextSettings, VectorIndexSettings
from engram.store.sqlite import SqliteMemoryStore
from engram.testing.fakes import HashingEmbedder

HASH_DIMS = 128


def build_real(path: Path, size: int, embedder: HashingEmbedder) -> dict[str, float]:
    """``size`` memories of real English (fewer if the machine holds less text) with hashing vectors."""
    texts, _ = real_corpus.memories(size)
    store = SqliteMemoryStore(path)
    identity = str(embedder.identity)
    started = time.perf_counter()
    with store.db.write():
        for start in range(0, len(texts), 5000):
            chunk = texts[start : start + 5000]
            ids = []
            for i, content in enumerate(chunk, start):
                draft = make_draft(content, key=f"m{i}", scope=Scope(speed.AGENT), max_content_chars=8000,
                                   created_at=1_700_000_000.0 + i * 60)
                ids.append(store.upsert(draft, proposed_key=f"m{i}", now=1_700_000_000.0 + i * 60).memory.id)
            store.set_vectors(identity, list(zip(ids, embedder.embed(chunk), strict=True)))
    inserted = time.perf_counter() - started
    started = time.perf_counter()
    store.sync_vector_index()
    vector_build = time.perf_counter() - started
    store.close()
    return {"memories": len(texts), "insert_s": inserted, "index_build_s": vector_build}


def ensure_store(corpus: str, folder: Path, size: int,
                 full_text: FullTextSettings | None = None) -> tuple[Path, dict[str, Any]]:
    path = folder / f"{corpus}-{size}" / "memory.db"
    info_path = path.with_name("build.json")
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        print(f"building the {corpus} store of {size:,} memories in {path.parent} ...", file=sys.stderr)
        if corpus == "locomo":
            turns, _ = speed.load_texts(speed.DEFAULT_DATA)
            embedder = _local_embedder()
            info = speed.build_store(path, size, turns, embedder.embed(turns), str(embedder.identity))
            info["memories"] = size
        else:
            info = build_real(path, size, HashingEmbedder(dims=HASH_DIMS))
        info_path.write_text(json.dumps(info))
    info = json.loads(info_path.read_text()) if info_path.exists() else {}
    if "text_index_build_s" not in info:
        store = SqliteMemoryStore(path, full_text=full_text)
        started = time.perf_counter()
        store.sync_text_index()
        info["text_index_build_s"] = time.perf_counter() - started
        store.close()
        info_path.write_text(json.dumps(info))
    return path, info


def _local_embedder() -> Any:
    from engram.embed import Embedder, EmbeddingCache
    from engram.embed.local import LocalProvider

    cache_dir = Path(os.environ.get("ENGRAM_TEST_CACHE_DIR", Path.home() / ".cache" / "engram-tests"))
    cache_dir.mkdir(parents=True, exist_ok=True)
    return Embedder(LocalProvider(), cache=EmbeddingCache(cache_dir / "embeddings.db"))


def queries_for(corpus: str, count: int) -> tuple[list[str], dict[str, np.ndarray], Any]:
    """(queries, their vectors, the embedder) for a corpus."""
    if corpus == "locomo":
        _, questions = speed.load_texts(speed.DEFAULT_DATA)
        chosen = questions[:count]
        embedder: Any = _local_embedder()
    else:
        _, summaries = real_corpus.debian_descriptions()
        pool = [s for s in summaries if len(s.split()) >= 3]
        chosen = random.Random(3).sample(pool, min(count, len(pool)))
        embedder = HashingEmbedder(dims=HASH_DIMS)
    return chosen, dict(zip(chosen, embedder.embed(chosen), strict=True)), embedder


def measure(path: Path, queries: list[str], table: dict[str, np.ndarray], embedder: Any,
            threshold: int | None = None) -> dict[str, Any]:
    no_cache = RecallSettings(cache_ttl_s=0)
    index_on = FullTextSettings() if threshold is None else FullTextSettings(index_threshold=threshold)

    def engine(full_text: FullTextSettings, vector_index: VectorIndexSettings | None = None) -> Engram:
        store = SqliteMemoryStore(path, full_text=full_text, vector_index=vector_index)
        # Recall may embed other words than the question's (a time phrase is read as a filter):
        # those are embedded once by the real embedder in the warm-up pass, before any timing.
        return Engram(store, agent=speed.AGENT, recall_settings=no_cache,
                      embedder=speed.PrecomputedEmbedder(embedder.identity, table, embedder))

    indexed = engine(index_on)
    for query in queries:
        indexed.recall(query, mode="vector", touch=False)
    bounded = engine(FullTextSettings(index_enabled=False))
    exact = engine(FullTextSettings(index_enabled=False, max_ranked_rows=0),
                   VectorIndexSettings(enabled=False))  # exact numpy search over every vector, too
    runs: dict[str, Callable[[str], Any]] = {
        "hybrid": lambda q: indexed.recall(q, mode="hybrid", touch=False),
        "text": lambda q: indexed.recall(q, mode="text", touch=False),
        "hybrid_fts5_bounded": lambda q: bounded.recall(q, mode="hybrid", touch=False),
        "text_fts5_bounded": lambda q: bounded.recall(q, mode="text", touch=False),
        "text_exact": lambda q: exact.recall(q, mode="text", touch=False),
        "vector": lambda q: indexed.recall(q, mode="vector", touch=False),
        "vector_exact": lambda q: exact.recall(q, mode="vector", touch=False),
    }
    wall, cpu, found = speed.time_in_turns(runs, queries)
    out: dict[str, Any] = {name: {**speed.ms_stats(wall[name]), "cpu_median_ms": statistics.median(cpu[name]) * 1000,
                                  "cpu_p95_ms": sorted(cpu[name])[int(0.95 * (len(cpu[name]) - 1))] * 1000}
                           for name in runs}
    reference = [found["text_exact"][q] for q in queries]
    for name in ("text", "text_fts5_bounded"):
        out[f"{name}_top10_vs_exact"] = speed.overlap([found[name][q] for q in queries], reference)
    out["vector_top10_vs_exact"] = speed.overlap([found["vector"][q] for q in queries],
                                                 [found["vector_exact"][q] for q in queries])
    for e in (indexed, bounded, exact):
        e.store.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dir", type=Path, required=True, help="where the stores are built and kept")
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--corpus", default="locomo,real")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--build-only", action="store_true", help="build (or catch up) the stores and stop")
    parser.add_argument("--index-threshold", type=int,
                        help="full_text.index_threshold (default: the setting's; 0 puts a small store on the index)")
    args = parser.parse_args()
    full_text = None if args.index_threshold is None else FullTextSettings(index_threshold=args.index_threshold)
    result: dict[str, Any] = {"corpora": {}}
    for corpus in [c for c in args.corpus.split(",") if c]:
        path, info = ensure_store(corpus, args.dir, args.size, full_text)
        if args.build_only:
            print(f"{corpus}: {json.dumps(info)}", file=sys.stderr)
            continue
        queries, table, embedder = queries_for(corpus, args.queries)
        print(f"timing {corpus} ({info.get('memories', args.size):,} memories, {len(queries)} queries) ...",
              file=sys.stderr)
        load_before = os.getloadavg()[0]
        row = measure(path, queries, table, embedder, args.index_threshold)
        row["text_index_used"] = path.with_name(path.name + ".tantivy").is_dir()
        row.update(build=info, load_average=(load_before, os.getloadavg()[0]))
        result["corpora"][corpus] = row
    if args.build_only:
        return
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print_table(result)


def print_table(result: dict[str, Any]) -> None:
    print("Recall at scale, query embedding excluded: wall ms median / p95 (ratio of medians to exact text);"
          " CPU ms median / p95 (the work itself, whatever the machine's other load)")
    for corpus, row in result["corpora"].items():
        build = row["build"]
        base = row["text_exact"]["median_ms"]
        print(f"\n{corpus}: {build.get('memories', 0):,} memories; load average {row['load_average'][0]:.1f}"
              f" -> {row['load_average'][1]:.1f}; text index built in {build['text_index_build_s']:.0f} s")
        for name in ("hybrid", "text", "hybrid_fts5_bounded", "text_fts5_bounded", "text_exact", "vector",
                     "vector_exact"):
            cell = row[name]
            share = row.get(f"{name}_top10_vs_exact")
            kept = f"  exact top 10 kept {share:.3f}" if share is not None else ""
            print(f"  {name:<20} {cell['median_ms']:8.2f} / {cell['p95_ms']:8.2f}  ({cell['median_ms'] / base:.3f}x)"
                  f"  CPU {cell['cpu_median_ms']:7.2f} / {cell['cpu_p95_ms']:7.2f}{kept}")
    print(f"\nPeak RSS of this process: {result['peak_rss_mb']:.0f} MB")
    print("hybrid / text: default settings (Tantivy candidates scored with FTS5's bm25); *_fts5_bounded: the index"
          " off (FTS5, full_text.max_ranked_rows); text_exact: FTS5 ranking every match; vector: the HNSW"
          " segments (share of vector_exact's top 10: exact numpy search over every vector)."
          " The real corpus's vectors are HashingEmbedder's.")


if __name__ == "__main__":
    main()
