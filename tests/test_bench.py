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
    # 80 questions include ones with a time phrase ("4 years ago"), which recall searches without.
    result = run_bench("speed.py", "--sizes", "300", "--queries", "80", "--no-extras")
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
    assert result["links"]["depths"]["3"]["hits"] > result["links"]["depths"]["0"]["hits"]


def test_recall_quality_bench_prints_every_mode_protocol_and_category() -> None:
    result = run_bench("recall_quality.py", "--conversations", "2", "--holdout", "1")
    for protocol in ("alone", "neighbours"):
        report = result[protocol]
        assert len(report["conversations"]["tuned"]) == 1 and len(report["conversations"]["held-out"]) == 1
        for part in ("all", "tuned", "held-out"):
            for mode in ("engram", "text", "vector", "fts5"):
                overall = report[part][mode]["overall"]
                for metric in ("R@1", "R@5", "R@10", "R@20", "NDCG@10", "MRR"):
                    assert 0.0 <= overall[metric] <= 1.0
                assert overall["R@1"] <= overall["R@5"] <= overall["R@10"] <= overall["R@20"]
                assert {"single-hop", "multi-hop", "temporal"} <= set(report[part][mode]["by_category"])
        assert report["all"]["engram"]["overall"]["queries"] == (
            report["tuned"]["engram"]["overall"]["queries"] + report["held-out"]["engram"]["overall"]["queries"])
        assert set(report["latency_ms"]) == {"engram", "text", "vector", "fts5"}
        # Full text alone finds evidence on real conversations; a broken index would score 0.
        assert report["all"]["text"]["overall"]["R@10"] > 0.3
        assert report["all"]["fts5"]["overall"]["R@10"] > 0.3


def test_links_bench_compares_each_depth_with_depth_zero() -> None:
    result = run_bench("links.py", "--nodes", "40", "--links", "300", "--repeat", "2")
    depths = result["depths"]
    assert set(depths) == {"0", "1", "2", "3"} and depths["0"]["ratio_to_depth0"] == 1.0
    assert depths["0"]["hits"] == 10 and depths["1"]["hits"] > 10  # expansion really followed links
    assert result["links"] == 300


def test_agent_stats_bench_counts_one_agents_view_beside_a_whole_table_read() -> None:
    result = run_bench("agent_stats.py", "--size", "3000", "--repeat", "1")
    row = result["backends"]["sqlite"]
    assert row["stats_ms"] > 0 and row["scan_ms"] > 0 and row["ratio_to_scan"] > 0
    # Agent a reads its own ~45% and the ~10% global: about half the store, never all of it.
    assert 1000 < row["memories_seen"] < 2000 and 0 < row["vectors"] < row["memories_seen"] and row["links"] > 0
    assert "global" in row["by_scope"] and "agent:a" in row["by_scope"]
    assert all(label in ("global", "agent:a") or label.startswith("session:a/") for label in row["by_scope"])


def test_files_remember_bench_appends_where_it_used_to_rewrite() -> None:
    result = run_bench("files_remember.py", "--sizes", "20,300", "--remembers", "5")
    for fmt in ("markdown", "yaml"):
        rows = result["formats"][fmt]
        assert rows["20"]["ratio_to_smallest"] == 1.0 and rows["300"]["median_ms"] > 0 and rows["300"]["median_cpu_ms"] > 0
        assert rows["300"]["file_bytes"] > rows["20"]["file_bytes"]
        assert rows["300"]["whole_rewrites"] == 0 and rows["300"]["bytes_written_per_call"] < 1000


def test_files_memory_bench_measures_the_files_the_mirror_keeps_within_their_bound() -> None:
    result = run_bench("files_memory.py", "--memories", "600", "--max-file-bytes", "4096")
    assert result["folder_files"] > result["kept_files"] > 0
    assert 0 < result["kept_text_chars"] <= 4 * 4096 and result["quick_pass_bytes"] > 0
    assert result["state_entries"] == 600 and result["state_bytes_per_memory"] > 0


def test_consolidate_bench_runs_with_the_folder_and_without() -> None:
    result = run_bench("consolidate.py", "--memories", "200", "--duplicates", "20")
    off, on = result["runs"]["folder off"], result["runs"]["folder on"]
    assert off["groups_merged"] == on["groups_merged"] >= 15  # reworded copies are merged back
    assert off["removed"] == on["removed"] and on["cpu_s"] > 0 and result["folder_cpu_ratio"] > 0


def test_startup_bench_times_each_door_beside_its_baseline(tmp_path: Path) -> None:
    store = tmp_path / "large" / "memory.db"
    built = run_bench("startup.py", "--build", "300", "--store", str(store))
    assert store.is_file() and built["real_vectors"] == 300
    result = run_bench("startup.py", "--memories", "50", "--repeat", "1", "--store", str(store))
    help_row, mcp, serve, recall = result["help"], result["mcp"], result["serve"], result["recall"]
    assert 0 < help_row["python_pass_s"] and 0 < help_row["import_typer_s"] and 0 < help_row["engram_help_s"]
    assert help_row["recall_help_s"] > 0 and help_row["mcp_help_s"] > 0 and help_row["typer_command_help_s"] > 0
    assert 0 < mcp["import_sdk_s"] and 0 < mcp["tools_list_s"] <= mcp["first_recall_s"]
    assert mcp["exit_after_recall_s"] > 0 and mcp["exit_after_tools_list_s"] > 0 and mcp["exit_baseline_s"] > 0
    assert 0 < serve["healthz_s"] <= serve["first_search_s"]
    assert recall["fresh_recall_s"] > 0 and recall["fresh_recall_full_check_s"] > 0 and recall["model_alone_s"] > 0
    assert result["stores"][str(store)]["fresh_recall_s"] > 0
    assert result["remember"]["fresh_remember_s"] > 0 and result["remember"]["memories"] == 50
    assert len(result["load_average"]) == 3
    assert result["memory"]["peak_child_rss_mb"] > 0


def test_key_collisions_bench_measures_colliding_and_distinct_writes() -> None:
    result = run_bench("key_collisions.py", "--writes", "60")
    assert set(result) == {f"{b}-{k}" for b in ("sqlite", "inmemory") for k in ("distinct", "colliding")}
    for row in result.values():
        assert row["cpu_ms_first_tenth"] >= 0 and row["cpu_ms_last_tenth"] >= 0 and row["wall_ms_last_tenth"] > 0


def test_import_bench_compares_with_the_embedder_rate() -> None:
    result = run_bench("import_speed.py", "--memories", "80")
    assert result["imported"] == 80
    assert result["import_per_s"] > 0 and result["embedder_batch64_per_s"] > 0 and result["ratio_to_embedder"] > 0
    assert result["import_cpu_ms_per_memory"] > 0 and result["model_cpu_ms_per_text"] > 0


def test_http_load_bench_measures_recall_and_concurrent_stores() -> None:
    result = run_bench("http_load.py", "--memories", "50", "--clients", "1,2", "--requests", "6",
                             "--store-clients", "4", "--stores", "12", "--preload", "5")
    assert [row["clients"] for row in result["recall"]] == [1, 2]
    assert all(row["errors"] == 0 and row["requests"] > 0 for row in result["recall"])
    stores = result["stores"]
    assert stores["requests"] == 12 and stores["errors"] == 0
    assert stores["engine"] == "serve" and stores["memories_after"] == 5 + 12
    assert stores["p50_ms"] <= stores["p99_ms"] and stores["ratio_to_embedder"] > 0
    # 12 stores from 4 clients: three rounds of one store a client, the model's rate around each.
    assert stores["rounds"] == 3 and len(stores["ratio_by_round"]) == 3 and len(stores["embedder_rates_per_s"]) == 4
    assert min(stores["ratio_by_round"]) <= stores["ratio_to_embedder"] <= max(stores["ratio_by_round"])
    assert stores["server_cpu_ms_per_store"] > 0 and stores["model_cpu_ms_per_text"] > 0
    assert 0 < stores["model_busy_share"] <= 1 and stores["model_texts_per_s_while_busy"] > 0
    assert 0 < stores["ratio_ceiling_all_cores_busy"] < 2 and 0 < stores["core_use"] <= 1.05
    from_tasks = result["async_stores"]
    assert from_tasks["tasks"] == 16 and from_tasks["stores"] == 16  # at least one store per task
    assert from_tasks["ratio_to_embedder"] > 0 and from_tasks["p50_ms"] <= from_tasks["p99_ms"]


def test_crash_loop_loses_no_acknowledged_write() -> None:
    result = run_bench("crash_loop.py", "--rounds", "5")
    assert result["workloads"] == {"library": 1, "cli": 1, "serve": 1, "sync": 1, "compaction": 1}
    assert result["acknowledged"] > 0 and result["lost"] == 0, result["lost_keys"]
    assert result["integrity"] == "ok" and result["sync_problems"] == []


def test_text_scale_bench_measures_both_corpora(tmp_path: Path) -> None:
    # 2,000 memories with the index threshold at 0: the path a million take, on a small store.
    result = run_bench("text_scale.py", "--dir", str(tmp_path), "--size", "2000", "--queries", "30",
                       "--index-threshold", "0")
    for corpus in ("locomo", "real"):
        row = result["corpora"][corpus]
        assert row["text_index_used"] and row["build"]["memories"] == 2000
        for mode in ("hybrid", "text", "hybrid_fts5_bounded", "text_fts5_bounded", "text_exact"):
            assert 0 < row[mode]["median_ms"] <= row[mode]["p95_ms"]
        # Within the budget FTS5's bounded ranking is exact; the index path keeps nearly all of it.
        assert row["text_fts5_bounded_top10_vs_exact"] == 1.0
        assert 0.9 <= row["text_top10_vs_exact"] <= 1.0
    assert result["peak_rss_mb"] > 0


def test_scale_bench_compares_each_side_with_its_exact_reference(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "scale.py"), "--sizes", "2000", "--queries", "10",
                           "--backends", "sqlite", "--folder", str(tmp_path)],
                          capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [line for line in done.stdout.splitlines() if line.strip().startswith("2,000 | sqlite")]
    cells = [cell.strip() for cell in rows[0].split("|")]
    # 2,000 memories: exact vector search and every match ranked, so both sides equal their references.
    assert (cells[6], cells[9]) == ("1.00", "1.00")
    assert float(cells[4].split(" / ")[0]) > 0  # hybrid p50


def test_erase_cost_bench_times_an_erase_beside_a_forget() -> None:
    result = run_bench("erase_cost.py", "--memories", "500", "--rounds", "2", "--dims", "16")
    assert result["memories"] == 500
    assert result["store"]["forget_s"] > 0 and result["store"]["erase_s"] > 0 and result["store"]["db_bytes"] > 0
    assert result["cache"]["delete_s"] > 0 and result["cache"]["drop_s"] > 0 and result["cache"]["cache_bytes"] > 0
    assert result["erase_vs_forget"] == result["store"]["erase_s"] / result["store"]["forget_s"]
    assert result["smaller"]["memories"] == 100 and result["smaller"]["erase_s"] > 0 and result["store"]["first_erase_s"] > 0
    assert result["erase_growth"] == result["store"]["erase_s"] / result["smaller"]["erase_s"]


@pytest.mark.parametrize("script", ["recall_quality.py", "speed.py", "embed_runtime.py"])
def test_bench_without_its_data_file_says_which_file_and_how_to_give_one(tmp_path: Path, script: str) -> None:
    missing = tmp_path / "locomo.json"
    done = subprocess.run([sys.executable, str(ROOT / "bench" / script), "--data", str(missing)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 2, done.stderr[-2000:]  # argparse's usage error, not a traceback
    assert f"no LoCoMo-format JSON file at {missing}" in done.stderr and "--data PATH" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr, done.stderr


def test_mem0_id_lookup_bench_times_the_index_beside_the_scan() -> None:
    result = run_bench("mem0_id_lookup.py", "--memories", "600", "--owners", "6", "--rounds", "20")
    assert (result["memories"], result["owners"], result["rounds"]) == (600, 6, 20)
    assert result["mem0_id_indexed_ms"] > 0 and result["mem0_id_scan_ms"] > 0 and result["engram_id_ms"] > 0
    assert result["scan_over_index"] == round(result["mem0_id_scan_ms"] / result["mem0_id_indexed_ms"], 1)
