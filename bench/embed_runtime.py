"""Compare the local embedding runtimes of all-MiniLM-L6-v2 on real conversation text.

For each runtime whose packages are installed (others are skipped), prints: cold load time (a
fresh process: imports + model load + first query), query latency at batch 1 (median and p95,
one thread, as at query time), batch-64 throughput, installed size of the packages the runtime
adds beyond engram's core, and quality against the float32 sentence-transformers reference:
mean/min cosine of the same sentence's vectors, top-10 neighbour overlap on ~2,000 dialog turns,
and Recall@10 of cosine-only retrieval of evidence turns on data/locomo-dev.json (protocol in
that folder's README: each conversation separately, categories 1-4, relevant = evidence dia_ids).

    python bench/embed_runtime.py [--data PATH] [--sentences 2000]

Quality needs the torch runtime (the reference); without it only speed and size are printed.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

import numpy as np
from locomo import DEFAULT_DATA, data_file  # bench/locomo.py (this script's folder is on sys.path)

from engram.embed import Embedder
from engram.embed.local import RUNTIMES, LocalProvider, load_model, missing_packages

CORE = {"numpy", "pydantic", "pydantic-core", "typing-extensions", "annotated-types", "typing-inspection"}
EVIDENCE = re.compile(r"D:?(\d+):(\d+)")


def load_locomo(path: Path) -> list[dict]:
    convs = []
    for conv in json.loads(path.read_text()):
        c = conv["conversation"]
        turns = []
        for key in sorted((k for k in c if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k[8:])):
            for t in c[key]:
                turns.append((t["dia_id"], f"{t['speaker']}: {t['text']}"))
        ids = {d for d, _ in turns}
        queries = []
        for qa in conv["qa"]:
            if qa.get("category") not in (1, 2, 3, 4):
                continue
            rel = set()
            for ev in qa.get("evidence", []):
                for s, n in EVIDENCE.findall(ev):
                    d = f"D{int(s)}:{int(n)}"
                    if d in ids:
                        rel.add(d)
            if rel:
                queries.append((qa["question"], rel))
        convs.append({"turns": turns, "queries": queries})
    return convs


def recall_at_10(embed, convs: list[dict]) -> float:
    scores = []
    for conv in convs:
        ids = [d for d, _ in conv["turns"]]
        docs = embed([t for _, t in conv["turns"]])
        qs = embed([q for q, _ in conv["queries"]])
        top = np.argsort(-(qs @ docs.T), axis=1)[:, :10]
        for (_, rel), row in zip(conv["queries"], top, strict=True):
            scores.append(len(rel & {ids[i] for i in row}) / len(rel))
    return float(np.mean(scores))


def neighbours(vecs: np.ndarray, k: int = 10) -> np.ndarray:
    sims = vecs @ vecs.T
    np.fill_diagonal(sims, -np.inf)
    return np.argsort(-sims, axis=1)[:, :k]


def install_size_mb(top: tuple[str, ...]) -> float:
    """Bytes of the distributions a runtime pulls in (dependency closure), beyond engram's core."""
    from packaging.requirements import Requirement

    seen: set[str] = set()
    stack = [m.replace("_", "-") for m in top]
    total = 0
    while stack:
        name = stack.pop().lower()
        if name in seen or name in CORE:
            continue
        seen.add(name)
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        total += sum((f.size or 0) for f in dist.files or [])
        for req in dist.requires or []:
            r = Requirement(req)
            if r.marker is None or r.marker.evaluate({"extra": ""}):
                stack.append(r.name)
    return total / 1e6


def cold_load_s(runtime: str) -> float:
    code = (
        "import time; t=time.perf_counter();"
        "from engram.embed.local import LocalProvider as P;"
        f"p=P({runtime!r}); p.embed_query('hello there'); print(time.perf_counter()-t)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=data_file, default=str(DEFAULT_DATA))
    ap.add_argument("--sentences", type=int, default=2000)
    args = ap.parse_args()

    convs = load_locomo(args.data)
    sentences = [t for c in convs for _, t in c["turns"]][: args.sentences]
    queries = [q for c in convs for q, _ in c["queries"]][:100]
    runtimes = [r for r in ("torch", "onnx") if not missing_packages(r)]
    skipped = [r for r in RUNTIMES if r not in runtimes]

    results: dict[str, dict] = {}
    vectors: dict[str, np.ndarray] = {}
    for runtime in runtimes:
        row: dict = {"model": RUNTIMES[runtime][0]}
        row["load_s"] = statistics.median(cold_load_s(runtime) for _ in range(3))
        p = LocalProvider(runtime)
        load_model(runtime)
        embed = Embedder(p, batch_size=64).embed  # the real path: length-sorted batches of 64

        for q in queries[:10]:
            p.embed_query(q)
        lat = []
        for q in queries:
            t = time.perf_counter()
            p.embed_query(q)
            lat.append((time.perf_counter() - t) * 1000)
        row["query_ms"] = statistics.median(lat)
        row["query_p95_ms"] = float(np.percentile(lat, 95))
        t = time.perf_counter()
        vectors[runtime] = embed(sentences)
        row["batch64_per_s"] = len(sentences) / (time.perf_counter() - t)
        row["size_mb"] = install_size_mb(RUNTIMES[runtime][1])
        row["recall10"] = recall_at_10(embed, convs)
        results[runtime] = row

    if "torch" in vectors:
        ref = vectors["torch"]
        ref_nn = neighbours(ref)
        for runtime, vecs in vectors.items():
            cos = np.sum(ref * vecs, axis=1)
            nn = neighbours(vecs)
            overlap = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(ref_nn, nn, strict=True)])
            results[runtime].update(
                cos_mean=float(cos.mean()), cos_min=float(cos.min()), top10=float(overlap)
            )

    n_q = sum(len(c["queries"]) for c in convs)
    print(f"all-MiniLM-L6-v2 runtimes: {len(sentences)} LoCoMo turns, {n_q} questions (cat 1-4)")
    head = (
        "runtime",
        "model",
        "load s",
        "query ms",
        "p95 ms",
        "batch64/s",
        "installed MB",
        "cos mean",
        "cos min",
        "top10 overlap",
        "Recall@10",
    )
    print(" | ".join(head))
    print(" | ".join("---" for _ in head))
    for runtime, r in results.items():
        print(
            " | ".join(
                [
                    runtime,
                    r["model"],
                    f"{r['load_s']:.2f}",
                    f"{r['query_ms']:.1f}",
                    f"{r['query_p95_ms']:.1f}",
                    f"{r['batch64_per_s']:.0f}",
                    f"{r['size_mb']:.0f}",
                    f"{r.get('cos_mean', float('nan')):.4f}",
                    f"{r.get('cos_min', float('nan')):.4f}",
                    f"{r.get('top10', float('nan')):.3f}",
                    f"{r['recall10']:.3f}",
                ]
            )
        )
    for runtime in skipped:
        print(f"{runtime}: skipped (missing {', '.join(missing_packages(runtime))})")


if __name__ == "__main__":
    main()
