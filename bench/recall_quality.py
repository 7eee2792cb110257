"""Recall quality on real long conversations (LoCoMo format), through engram's public API.

Protocol (shared/data/README.md): each conversation is a fresh store; every dialog turn is one
memory (``"<speaker>: <text>"``, the session's date-time as its time, its ``dia_id`` kept, and
the neighbouring turns of its session as ``search_context``, as an agent indexing a transcript
would pass them); every
question of categories 1-4 with evidence is a query whose relevant memories are its evidence
turns. Reports Recall@1/5/10/20, Hit@k, NDCG@10 and MRR (first evidence within the top 20),
overall and per category, for full text only, vector only and engram's default recall, all
measured in the same run on the same stores. Category 5 (adversarial) is reported on its own.

    python bench/recall_quality.py [--data PATH] [--json] [--conversations N]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from locomo import CATEGORIES, Conversation, load  # noqa: E402

from engram import Engram  # noqa: E402
from engram.config import load_settings  # noqa: E402

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo-dev.json"
KS = (1, 5, 10, 20)
MODES = {"engram": "auto", "fts": "text", "vector": "vector"}


def score_query(ranked: list[str], relevant: set[str]) -> dict[str, float]:
    scores: dict[str, float] = {}
    for k in KS:
        found = len(relevant.intersection(ranked[:k]))
        scores[f"R@{k}"] = found / len(relevant)
        scores[f"Hit@{k}"] = 1.0 if found else 0.0
    dcg = sum(1 / math.log2(i + 2) for i, d in enumerate(ranked[:10]) if d in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(relevant), 10)))
    scores["NDCG@10"] = dcg / ideal
    first = next((i for i, d in enumerate(ranked[:20]) if d in relevant), None)
    scores["MRR"] = 0.0 if first is None else 1 / (first + 1)
    return scores


def ingest(mem: Engram, conversation: Conversation) -> float:
    """Store every turn as an agent importing a transcript would: the turn is the content, and the
    turns just before and after it in the same session are its ``search_context``."""
    started = time.perf_counter()
    turns = conversation.turns
    lines = [f"{turn.speaker}: {turn.text}" for turn in turns]

    def neighbours(i: int) -> str:
        around = [lines[j] for j in (i - 1, i + 1) if 0 <= j < len(turns) and turns[j].session == turns[i].session]
        return "\n".join(around)

    mem.remember_many(
        {
            "content": lines[i],
            "key": turn.dia_id,
            "category": "conversation",
            "type": "conversation",
            "created_at": turn.time,
            "metadata": {"dia_id": turn.dia_id, "session": turn.session},
            "search_context": neighbours(i) or None,
        }
        for i, turn in enumerate(turns)
    )
    return time.perf_counter() - started


def run(data: Path, conversations: int | None, backend: str) -> dict:
    per_mode: dict[str, dict[str, list[dict[str, float]]]] = {m: defaultdict(list) for m in MODES}
    latencies: dict[str, list[float]] = {m: [] for m in MODES}
    index_seconds, turns = 0.0, 0
    repaired = dropped = 0
    items = load(data)[:conversations]
    for number, conversation in enumerate(items, 1):
        repaired += conversation.repaired
        dropped += conversation.dropped
        with tempfile.TemporaryDirectory() as home:
            settings = load_settings(home=Path(home), backend=backend, agent="bench")
            with Engram.from_settings(settings) as mem:
                index_seconds += ingest(mem, conversation)
                turns += len(conversation.turns)
                for question in conversation.questions:
                    if not question.evidence:
                        continue
                    relevant = set(question.evidence)
                    bucket = CATEGORIES[question.category]
                    for name, mode in MODES.items():
                        started = time.perf_counter()
                        result = mem.recall(question.question, limit=20, mode=mode, touch=False)
                        latencies[name].append(time.perf_counter() - started)
                        ranked = [hit.memory.metadata.get("dia_id", "") for hit in result]
                        per_mode[name][bucket].append(score_query(ranked, relevant))
        print(f"  conversation {number}/{len(items)} ({conversation.sample_id}): {len(conversation.turns)} turns",
              file=sys.stderr)
    report: dict = {}
    for name in MODES:
        by_category = {cat: _mean(rows) for cat, rows in sorted(per_mode[name].items())}
        overall_rows = [row for cat, rows in per_mode[name].items() if cat != "adversarial" for row in rows]
        lat = sorted(latencies[name])
        report[name] = {
            "overall": {**_mean(overall_rows), "queries": len(overall_rows)},
            "by_category": {cat: {**v, "queries": len(per_mode[name][cat])} for cat, v in by_category.items()},
            "latency_ms": {"median": statistics.median(lat) * 1000, "p95": lat[int(0.95 * (len(lat) - 1))] * 1000},
        }
    report["index"] = {"turns": turns, "ms_per_memory": index_seconds / max(turns, 1) * 1000}
    report["evidence"] = {"repaired": repaired, "dropped": dropped}
    return report


def _mean(rows: list[dict[str, float]]) -> dict[str, float]:
    if not rows:
        return {}
    return {key: round(sum(r[key] for r in rows) / len(rows), 4) for key in rows[0]}


def print_table(report: dict) -> None:
    metrics = [f"R@{k}" for k in KS] + [f"Hit@{k}" for k in (1, 5, 10)] + ["NDCG@10", "MRR"]
    print(f"{'mode':<8} {'slice':<12} " + " ".join(f"{m:>7}" for m in metrics) + f" {'n':>5}")
    for name in MODES:
        rows = [("overall", report[name]["overall"])] + list(report[name]["by_category"].items())
        for label, values in rows:
            cells = " ".join(f"{values.get(m, float('nan')):>7.3f}" for m in metrics)
            print(f"{name:<8} {label:<12} {cells} {values.get('queries', 0):>5}")
        lat = report[name]["latency_ms"]
        print(f"{name:<8} latency      median {lat['median']:.1f} ms, p95 {lat['p95']:.1f} ms")
    print(f"index: {report['index']['turns']} turns, {report['index']['ms_per_memory']:.2f} ms per memory")
    print(f"evidence strings repaired: {report['evidence']['repaired']}, dropped: {report['evidence']['dropped']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo-format JSON file")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--conversations", type=int, default=None, help="only the first N conversations")
    parser.add_argument("--backend", default="sqlite", help="memory backend (default sqlite)")
    args = parser.parse_args()
    report = run(args.data, args.conversations, args.backend)
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        print_table(report)


if __name__ == "__main__":
    main()
