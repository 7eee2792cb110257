"""engram's speed: recall latency by store size, embedding and ingest throughput, cold start, memory.

    python bench/speed.py [--sizes 10000,100000[,1000000]] [--queries 200] [--json]

What is measured (one run; the machine is shared, so compare ratios within a run):

- Recall latency at each size: ``Engram.recall`` (touch off, result cache off) in hybrid,
  text-only and vector-only mode, taking turns query by query, wall and CPU time, with the query
  embeddings computed beforehand (a wrapper embedder returns them), so the numbers exclude
  embedding the query; plus the store's ``search_vector`` alone, with the HNSW
  index and with exact numpy search over the same file, and recall@10 of the index against exact;
  text-only recall is also timed ranking every full-text match (``full_text.max_ranked_rows = 0``)
  with the share of its top 10 that the default bounded ranking returns.
- Large stores are built from real text: LoCoMo turns (``--data``), each embedded for real by the
  local model, then recombined copies of them ("turn A + half of turn B") whose vectors are the
  mix of the real vectors of A and B plus a little noise (cosine ~0.91 to A's; ``--noise``). Embedding 100k texts for real
  would take ~10 minutes here; the output says how many vectors are real. Rows are inserted
  through the store in one transaction, then the vector index is built (its time is reported).
- Local model throughput at batch 1 (``embed_query``) and batch 64 (``embed``), no cache; ingest
  through ``Engram.remember_many`` (SQLite store, real embedder, no cache) in the same run.
- First answer of a fresh process: ``engram recall`` as a subprocess on the largest store
  (Python start, settings, model load, query embedding, search), hybrid and text-only.
- Link expansion on a dense graph (200 memories, 6,000 links): depth 1-3 against depth 0
  (``bench/links.py``).
- Peak resident memory (``getrusage``) of this process and of the subprocesses.

Queries are LoCoMo questions, embedded by the same model (cached under ``$ENGRAM_TEST_CACHE_DIR``,
default ``~/.cache/engram-tests``, shared with the tests).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import links  # bench/links.py: link expansion on a dense graph, depth 1-3 against depth 0
import locomo  # bench/locomo.py: the LoCoMo loader recall_quality.py uses
import numpy as np

from engram.config import RecallSettings
from engram.embed import Embedder, EmbeddingCache
from engram.embed.local import LocalProvider
from engram.engine import Engram
from engram.model import MemoryFilter, Scope, make_draft
from engram.store.index_settings import FullTextSettings, VectorIndexSettings
from engram.store.sqlite import SqliteMemoryStore

DEFAULT_DATA = locomo.DEFAULT_DATA
AGENT = "default"
# Synthetic vectors: w * v(A) + (1 - w) * v(B) (w in [0.55, 0.85], like the text "turn A + half of
# turn B") plus noise of this norm; cosine to v(A) ~0.91. Pure noise around copies of real vectors
# (tried first) makes every query's top 10 a near-tie among random directions, where any ANN index
# looks bad (recall@10 0.45-0.48 at ef 64-128), unlike real text.
NOISE_NORM = 0.15


class PrecomputedEmbedder:
    """Answers ``embed_query`` from a table of query vectors, so recall timing excludes the model.

    Recall may search other words than the question's (a time phrase such as "4 years ago" is read
    as a filter and taken out): those texts are embedded by ``fallback`` once, during the warm-up
    pass ``recall_latency`` makes before timing, and answered from the table afterwards."""

    def __init__(self, identity: Any, table: dict[str, np.ndarray], fallback: Any = None) -> None:
        self.identity = identity
        self.table = table
        self.fallback = fallback

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.vstack([self.embed_query(t) for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        if text not in self.table and self.fallback is not None:
            self.table[text] = self.fallback.embed_query(text)
        return self.table[text]


def load_texts(path: Path) -> tuple[list[str], list[str]]:
    """The distinct turn texts and questions of a LoCoMo-format file."""
    conversations = locomo.load(path)
    turns = [turn.text for c in conversations for turn in c.turns]
    questions = [q.question for c in conversations for q in c.questions]
    return list(dict.fromkeys(turns)), list(dict.fromkeys(questions))


def ms_stats(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {"median_ms": statistics.median(ordered) * 1000, "p95_ms": ordered[int(0.95 * (len(ordered) - 1))] * 1000}


def timed(fn: Callable[[], object], repeat: Sequence[Any] | None = None) -> list[float]:
    out = []
    for _ in repeat or [None]:
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def build_store(path: Path, size: int, turns: list[str], vectors: np.ndarray, identity: str,
                noise_norm: float = NOISE_NORM) -> dict[str, float]:
    """``size`` memories from real turns (real vectors) and recombinations (perturbed vectors)."""
    rng = np.random.default_rng(size)
    real = min(size, len(turns))
    store = SqliteMemoryStore(path)
    scope = Scope(AGENT)
    started = time.perf_counter()
    with store.db.write():  # one transaction: nested writes join it
        items: list[tuple[str, np.ndarray]] = []
        for i in range(size):
            if i < real:
                content, vector = turns[i], vectors[i]
            else:
                a, b = int(rng.integers(len(turns))), int(rng.integers(len(turns)))
                words = turns[b].split()
                content = f"{turns[a]} {' '.join(words[: max(1, len(words) // 2)])} ({i})"
                w = float(rng.uniform(0.55, 0.85))
                noise = rng.normal(size=vectors.shape[1]).astype(np.float32)
                vector = w * vectors[a] + (1 - w) * vectors[b] + noise * (noise_norm / np.linalg.norm(noise))
            # An explicit key: the store's free-key search (for key-less drafts) scans the scope's keys.
            draft = make_draft(content, key=f"m{i}", scope=scope, max_content_chars=8000,
                               created_at=1_700_000_000.0 + i)
            memory = store.upsert(draft, proposed_key=f"m{i}", now=1_700_000_000.0 + i).memory
            items.append((memory.id, vector))
            if len(items) == 5000:
                store.set_vectors(identity, items)
                items = []
        store.set_vectors(identity, items)
    inserted = time.perf_counter() - started
    started = time.perf_counter()
    store.sync_vector_index()
    index_build = time.perf_counter() - started
    store.close()
    return {"real_vectors": real, "insert_s": inserted, "index_build_s": index_build}


def time_in_turns(runs: dict[str, Callable[[str], Any]], queries: list[str]
                  ) -> tuple[dict[str, list[float]], dict[str, list[float]], dict[str, dict[str, list[str]]]]:
    """Wall and CPU seconds per call and the ids found, by mode, after one warm-up call each.

    Modes take turns step by step, so a noisy spell on the shared machine hits them alike; CPU
    time beside wall time shows the work itself (the process's, so a recall's vector graph walks on
    worker threads count too). At each step every mode runs a different query
    (offset by a share of the list): the store keeps a query's last full-text rankings for its
    next call, and one mode must not be timed on rankings another mode just made."""
    for run in runs.values():
        run(queries[0])  # warm: caches loaded, indexes mapped
    wall: dict[str, list[float]] = {name: [] for name in runs}
    cpu: dict[str, list[float]] = {name: [] for name in runs}
    found: dict[str, dict[str, list[str]]] = {name: {} for name in runs}
    for step in range(len(queries)):
        for turn, (name, run) in enumerate(runs.items()):
            q = queries[(step + turn * len(queries) // len(runs)) % len(queries)]
            started, started_cpu = time.perf_counter(), time.process_time()
            result = run(q)
            wall[name].append(time.perf_counter() - started)
            cpu[name].append(time.process_time() - started_cpu)
            found[name][q] = [h.memory.id for h in result.hits]
    return wall, cpu, found


def recall_latency(path: Path, query_table: dict[str, np.ndarray], identity: Any, queries: list[str],
                   fallback: Any = None) -> dict[str, Any]:
    no_cache = RecallSettings(cache_ttl_s=0)
    store = SqliteMemoryStore(path)
    engram = Engram(store, agent=AGENT, embedder=PrecomputedEmbedder(identity, query_table, fallback),
                    recall_settings=no_cache)
    for query in queries:  # warm-up: every text recall will embed is in the table before timing
        engram.recall(query, mode="vector", touch=False)
    # The same text recall ranking every matching row (full_text.max_ranked_rows = 0): the baseline.
    unbounded = SqliteMemoryStore(path, full_text=FullTextSettings(max_ranked_rows=0))
    exact_text = Engram(unbounded, agent=AGENT, embedder=PrecomputedEmbedder(identity, query_table),
                        recall_settings=no_cache)
    runs: dict[str, Callable[[str], Any]] = {
        "recall_hybrid": lambda q: engram.recall(q, mode="hybrid", touch=False),
        "recall_text": lambda q: engram.recall(q, mode="text", touch=False),
        "recall_vector": lambda q: engram.recall(q, mode="vector", touch=False),
        "recall_text_unbounded": lambda q: exact_text.recall(q, mode="text", touch=False),
    }
    wall, cpu, found = time_in_turns(runs, queries)
    out: dict[str, Any] = {}
    for name in runs:
        out[name] = {**ms_stats(wall[name]), "cpu_median_ms": statistics.median(cpu[name]) * 1000}
    out["text_top10_vs_unbounded"] = overlap([found["recall_text"][q] for q in queries],
                                             [found["recall_text_unbounded"][q] for q in queries])
    unbounded.close()

    filt = MemoryFilter(scopes=(Scope(), Scope(AGENT)))
    store.search_vector(query_table[queries[0]], filt, limit=10)
    approximate = store._vectors.approximate
    ann_hits = [[m.id for m, _ in store.search_vector(query_table[q], filt, limit=10)] for q in queries]
    out["search_vector_index"] = ms_stats(
        [t for q in queries for t in timed(lambda q=q: store.search_vector(query_table[q], filt, limit=10))]
    )
    out["index"] = "hnsw" if approximate else "exact"
    store.close()

    exact = SqliteMemoryStore(path, vector_index=VectorIndexSettings(enabled=False))
    started = time.perf_counter()
    exact.search_vector(query_table[queries[0]], filt, limit=10)
    out["exact_first_load_s"] = time.perf_counter() - started
    exact_hits = [[m.id for m, _ in exact.search_vector(query_table[q], filt, limit=10)] for q in queries]
    out["search_vector_exact"] = ms_stats(
        [t for q in queries for t in timed(lambda q=q: exact.search_vector(query_table[q], filt, limit=10))]
    )
    exact.close()
    out["recall_at_10_vs_exact"] = overlap(ann_hits, exact_hits)
    return out


def overlap(found: list[list[str]], reference: list[list[str]]) -> float:
    """Mean share of each reference list found (queries with an empty reference count as 1)."""
    return float(np.mean([len(set(f) & set(r)) / len(r) if r else 1.0 for f, r in zip(found, reference, strict=True)]))


def throughput(texts: list[str]) -> dict[str, float]:
    provider = LocalProvider()
    started = time.perf_counter()
    provider.warm_up()
    load_s = time.perf_counter() - started
    embedder = Embedder(provider, batch_size=64)  # no cache: every text reaches the model
    singles = texts[:100]
    one = timed(lambda: [embedder.embed_query(t) for t in singles])[0]
    batch_texts = texts[100:740]
    batched = timed(lambda: embedder.embed(batch_texts))[0]
    ingest_texts = texts[740:1380]
    with tempfile.TemporaryDirectory() as folder:
        engram = Engram(SqliteMemoryStore(Path(folder) / "memory.db"), agent=AGENT, embedder=embedder)
        ingest = timed(lambda: engram.remember_many([{"content": t} for t in ingest_texts]))[0]
        engram.store.close()
    return {
        "model_load_s": load_s,
        "batch1_texts_per_s": len(singles) / one,
        "batch1_ms_per_query": one / len(singles) * 1000,
        "batch64_texts_per_s": len(batch_texts) / batched,
        "ingest_remember_many_per_s": len(ingest_texts) / ingest,
    }


_CHILD = """
import resource, runpy, sys
sys.argv = ["engram", *sys.argv[1:]]
try:
    runpy.run_module("engram", run_name="__main__")
finally:
    # VmHWM belongs to this program's memory map; getrusage's maxrss also counts the parent's
    # resident size at fork time, which Linux carries across exec.
    try:
        kb = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
    except (OSError, StopIteration):
        kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print("peak_rss_kb", kb, file=sys.stderr)
"""


def fresh_process(path: Path, home: Path, queries: list[str]) -> dict[str, float]:
    """``engram recall`` in a new process: defaults, and without the start-up integrity check
    (``lifecycle.backup.startup_check = off``), which reads the whole file."""
    env = {**os.environ, "ENGRAM_HOME": str(home), "ENGRAM_PATH": str(path), "ENGRAM_AGENT": AGENT}
    out: dict[str, float] = {}
    peak = 0
    for label, mode, extra in (("hybrid", "hybrid", {}), ("text", "text", {}),
                               ("hybrid_no_startup_check", "hybrid", {"ENGRAM_LIFECYCLE__BACKUP__STARTUP_CHECK": "off"})):
        samples = []
        for q in queries:
            started = time.perf_counter()
            done = subprocess.run([sys.executable, "-c", _CHILD, "recall", q, "--mode", mode], env={**env, **extra},
                                  check=True, capture_output=True, text=True)
            samples.append(time.perf_counter() - started)
            peak = max(peak, int(done.stderr.rsplit("peak_rss_kb", 1)[1].split()[0]))
        out[f"first_answer_{label}_s"] = statistics.median(samples)
    out["peak_rss_mb"] = peak / 1024
    return out


def peak_mb(who: int) -> float:
    return resource.getrusage(who).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000,100000", help="store sizes, comma-separated")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--data", type=locomo.data_file, default=str(DEFAULT_DATA))
    parser.add_argument("--noise", type=float, default=NOISE_NORM, help="norm of the noise on perturbed copies")
    parser.add_argument("--keep", type=Path, help="build the stores in this folder and leave the last one there")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--no-extras", action="store_true",
                        help="skip the history (100k messages) and file-sync (1,000 memories) lines")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    turns, questions = load_texts(args.data)
    queries = questions[: args.queries]
    say = (lambda *a: print(*a, file=sys.stderr)) if args.json else print

    say(f"throughput of the local model on {len(turns)} LoCoMo turns ...")
    result: dict[str, Any] = {"throughput": throughput(turns)}

    cache_dir = Path(os.environ.get("ENGRAM_TEST_CACHE_DIR", Path.home() / ".cache" / "engram-tests"))
    cache_dir.mkdir(parents=True, exist_ok=True)
    embedder = Embedder(LocalProvider(), cache=EmbeddingCache(cache_dir / "embeddings.db"))
    say("embedding turns and queries (cached after the first run) ...")
    vectors = embedder.embed(turns)
    query_table = dict(zip(queries, embedder.embed(queries), strict=True))
    identity = embedder.identity

    result["sizes"] = {}
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "memory.db"
        for size in sizes:
            if path.exists():
                for leftover in folder.glob("memory.db*"):
                    leftover.unlink()
            say(f"building a store of {size:,} memories ...")
            row = build_store(path, size, turns, vectors, str(identity), args.noise)
            say("timing recall ...")
            row.update(recall_latency(path, query_table, identity, queries, fallback=embedder))
            row["peak_rss_mb"] = peak_mb(resource.RUSAGE_SELF)
            result["sizes"][size] = row
            say(f"  {size:,}: hybrid {row['recall_hybrid']['median_ms']:.2f} ms,"
                f" vector {row['recall_vector']['median_ms']:.2f} ms,"
                f" search_vector {row['search_vector_index']['median_ms']:.2f} ms ({row['index']}),"
                f" exact {row['search_vector_exact']['median_ms']:.2f} ms, R@10 {row['recall_at_10_vs_exact']:.3f}")
        say("fresh processes ...")
        result["fresh_process"] = fresh_process(path, Path(scratch) / "home", queries[-3:])
        result["fresh_process"]["store_size"] = sizes[-1]
    say("link expansion on a dense graph ...")
    result["links"] = links.run()
    result["peak_rss_mb"] = peak_mb(resource.RUSAGE_SELF)
    result["notes"] = (
        f"{len(turns)} vectors per store are real MiniLM embeddings of LoCoMo turns; the rest are perturbed "
        f"mixes of two of them (+ noise {args.noise}) on recombined turn text. Recall latency excludes the query "
        "embedding (precomputed-query embedder around Engram.recall, touch off)."
    )
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print_table(result)
        if not args.no_extras:
            import files_speed
            import history_speed

            print("\nConversation history (bench/history_speed.py)")
            history_speed.run()
            print("\nMemory folder sync, 1,000 memories (bench/files_speed.py)")
            files_speed.main()


def print_table(result: dict[str, Any]) -> None:
    t = result["throughput"]
    print("\nLocal model (all-MiniLM-L6-v2 int8, onnxruntime), no cache")
    print(f"  load {t['model_load_s']:.2f} s | batch 1: {t['batch1_texts_per_s']:.0f} texts/s "
          f"({t['batch1_ms_per_query']:.1f} ms/query) | batch 64: {t['batch64_texts_per_s']:.0f} texts/s")
    print(f"  ingest via Engram.remember_many (SQLite + embedding): {t['ingest_remember_many_per_s']:.0f} memories/s"
          f" beside the raw embedder's {t['batch64_texts_per_s']:.0f} texts/s")
    print("\nRecall latency, ms (median / p95), query embedding excluded")
    header = (f"{'memories':>10} {'index':>6} {'hybrid':>14} {'text':>14} {'vector':>14} "
              f"{'search_vector':>14} {'exact numpy':>14} {'R@10 vs exact':>14} {'build s':>8} {'insert s':>9}")
    print(header)
    for size, row in result["sizes"].items():
        def cell(key: str, r: dict[str, Any] = row) -> str:
            return f"{r[key]['median_ms']:.2f} / {r[key]['p95_ms']:.2f}"
        print(f"{int(size):>10,} {row['index']:>6} {cell('recall_hybrid'):>14} {cell('recall_text'):>14} "
              f"{cell('recall_vector'):>14} {cell('search_vector_index'):>14} {cell('search_vector_exact'):>14} "
              f"{row['recall_at_10_vs_exact']:>14.3f} {row['index_build_s']:>8.1f} {row['insert_s']:>9.1f}")
    print("  CPU time per recall (median, ms; the work itself, whatever the machine's other load):")
    for size, row in result["sizes"].items():
        print(f"    {int(size):>9,}: hybrid {row['recall_hybrid']['cpu_median_ms']:.2f}, text"
              f" {row['recall_text']['cpu_median_ms']:.2f}, vector {row['recall_vector']['cpu_median_ms']:.2f}")
    print("  text ranks at most full_text.max_ranked_rows rows a query (store/fts.py); ranking every match"
          " instead (wall median / p95, CPU median, share of the same top 10):")
    for size, row in result["sizes"].items():
        base = row["recall_text_unbounded"]
        print(f"    {int(size):>9,}: {base['median_ms']:.2f} / {base['p95_ms']:.2f} ms, CPU {base['cpu_median_ms']:.2f} ms,"
              f" top 10 shared {row['text_top10_vs_unbounded']:.3f}")
    print("  exact numpy: the same store with vector_index.enabled = false; its first search loads every blob:",
          ", ".join(f"{int(k):,}: {r['exact_first_load_s']:.2f} s" for k, r in result["sizes"].items()))
    f = result["fresh_process"]
    print(f"\nFresh process `engram recall` on {int(f['store_size']):,} memories (median of 3): hybrid"
          f" {f['first_answer_hybrid_s']:.2f} s, text-only {f['first_answer_text_s']:.2f} s, hybrid without the"
          f" start-up integrity check {f['first_answer_hybrid_no_startup_check_s']:.2f} s; peak RSS {f['peak_rss_mb']:.0f} MB")
    print()
    links.print_rows(result["links"])
    print(f"Peak RSS of this benchmark process: {result['peak_rss_mb']:.0f} MB")
    print(f"\nNote: {result['notes']}")


if __name__ == "__main__":
    main()
