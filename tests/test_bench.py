"""The benchmark scripts run end to end on small inputs, so they keep working as the code moves.

Their figures are not asserted (shared machines are noisy); what is checked is that each script
measures what it says and prints the shape its docstring and the issue promise.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "locomo-dev.json"

pytestmark = pytest.mark.skipif(not DATA.exists(), reason="needs ../shared/data/locomo-dev.json")


def run_bench(script: str, *args: str) -> dict:
    done = subprocess.run([sys.executable, str(ROOT / "bench" / script), *args, "--json"],
                          capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def test_speed_bench_measures_a_small_store() -> None:
    result = run_bench("speed.py", "--sizes", "300", "--queries", "5", "--no-extras")
    row = result["sizes"]["300"]
    for mode in ("recall_hybrid", "recall_text", "recall_vector", "recall_text_unbounded", "search_vector_exact"):
        assert 0 < row[mode]["median_ms"] <= row[mode]["p95_ms"]
    # 300 vectors are below the index threshold, and 300 rows within the full-text budget:
    # both sides must agree exactly with their exhaustive baselines.
    assert row["index"] == "exact"
    assert row["recall_at_10_vs_exact"] == 1.0
    assert row["text_top10_vs_unbounded"] == 1.0
    assert result["throughput"]["batch64_texts_per_s"] > 0
    assert result["throughput"]["ingest_remember_many_per_s"] > 0
    assert result["fresh_process"]["first_answer_hybrid_s"] > 0
    assert result["fresh_process"]["peak_rss_mb"] > 0


def test_recall_quality_bench_prints_every_mode_and_category() -> None:
    result = run_bench("recall_quality.py", "--conversations", "1")
    assert set(result) >= {"engram", "fts", "vector"}
    for mode in ("engram", "fts", "vector"):
        overall = result[mode]["overall"]
        for metric in ("R@1", "R@5", "R@10", "R@20", "NDCG@10", "MRR"):
            assert 0.0 <= overall[metric] <= 1.0
        assert overall["R@1"] <= overall["R@5"] <= overall["R@10"] <= overall["R@20"]
        assert {"single-hop", "multi-hop", "temporal"} <= set(result[mode]["by_category"])
    # Full text alone finds evidence on real conversations; a broken index would score 0.
    assert result["fts"]["overall"]["R@10"] > 0.3
