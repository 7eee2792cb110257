"""Recall quality on real long conversations (LoCoMo format), through engram's public API.

Protocol (shared/data/README.md): each conversation is a fresh store; every dialog turn is one
memory (``"<speaker>: <text>"``, the session's date-time as its time, its ``dia_id`` kept); every
question of categories 1-4 with evidence is a query (a ``recall`` with limit 20) whose relevant
memories are its evidence turns. Two ways of storing the turns are measured, each in its own
fresh stores:

- ``alone``: each turn stored by itself;
- ``neighbours``: the turns just before and after it in its session are its ``search_context``,
  as an agent indexing a transcript would pass them.

For each, in the same run and on the same stores: engram's default recall, full text only, vector
only, and a plain SQLite FTS5 reference outside engram (porter stemming, bm25, an OR of the
question's non-stopword words, the turn's text only). Reports Recall@1/5/10/20, Hit@k, NDCG@10
and MRR (first evidence within the top 20), overall and per category (category 5, adversarial,
on its own, never in the overall figure), and recall latency including the query's embedding
(no embedding cache). Figures are given for all conversations and for two parts of them: the
last ``--holdout`` conversations of the file are the part no constant of engram's was chosen on.

    python bench/recall_quality.py [--data PATH] [--json] [--conversations N] [--holdout N]
                                   [--protocols alone,neighbours] [--backend sqlite|postgres]

With ``--backend postgres`` a throw-away PostgreSQL server (``engram.testing.pg_server``) is
started for the run and each conversation gets a fresh database on it.
"""

from __future__ import annotations

import argparse
import json
import math
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from itertools import count
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from locomo import CATEGORIES, DEFAULT_DATA, Conversation, data_file, load  # noqa: E402

from engram import Engram, text  # noqa: E402
from engram.config import load_settings  # noqa: E402

KS = (1, 5, 10, 20)
MODES = {"engram": "auto", "text": "text", "vector": "vector"}
REFERENCE = "fts5"
PROTOCOLS = ("alone", "neighbours")
PARTS = ("all", "tuned", "held-out")


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


def ingest(mem: Engram, conversation: Conversation, protocol: str) -> float:
    """Store every turn as an agent importing a transcript would; with ``neighbours`` the turns
    just before and after it in the same session are its ``search_context``."""
    started = time.perf_counter()
    turns = conversation.turns
    lines = [f"{turn.speaker}: {turn.text}" for turn in turns]

    def neighbours(i: int) -> str | None:
        if protocol != "neighbours":
            return None
        around = [lines[j] for j in (i - 1, i + 1) if 0 <= j < len(turns) and turns[j].session == turns[i].session]
        return "\n".join(around) or None

    mem.remember_many(
        {
            "content": lines[i],
            "key": turn.dia_id,
            "category": "conversation",
            "type": "conversation",
            "created_at": turn.time,
            "metadata": {"dia_id": turn.dia_id, "session": turn.session},
            "search_context": neighbours(i),
        }
        for i, turn in enumerate(turns)
    )
    return time.perf_counter() - started


def plain_fts5(conversation: Conversation) -> Callable[[str], list[str]]:
    """The reference: SQLite FTS5 as anyone would set it up, outside engram (content only)."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE turns USING fts5(dia_id UNINDEXED, body, tokenize = 'porter unicode61')")
    conn.executemany("INSERT INTO turns VALUES (?, ?)",
                     [(turn.dia_id, f"{turn.speaker}: {turn.text}") for turn in conversation.turns])

    def search(question: str) -> list[str]:
        terms = text.query_terms(question)
        if not terms:
            return []
        match = " OR ".join(f'"{term}"' for term in terms)
        return [row[0] for row in conn.execute(
            "SELECT dia_id FROM turns WHERE turns MATCH ? ORDER BY bm25(turns) LIMIT 20", (match,))]

    return search


class Databases:
    """Where each fresh store lives: a temporary folder (file backends) and, on PostgreSQL, a new
    database on the run's throw-away server."""

    def __init__(self, backend: str, server: Any = None) -> None:
        self.backend, self.server = backend, server
        self._numbers = count()

    @contextmanager
    def settings(self, home: Path) -> Iterator[Any]:
        url = None
        if self.server is not None:
            name = f"recall_{next(self._numbers)}"
            self.server.execute(f"CREATE DATABASE {name}")
            url = self.server.url(name)
        # No embedding cache: every recall's latency includes embedding its query.
        yield load_settings(home=home, backend=self.backend, database_url=url, agent="bench",
                            embeddings={"cache": False})


@contextmanager
def databases(backend: str) -> Iterator[Databases]:
    if backend != "postgres":
        yield Databases(backend)
        return
    from engram.testing import pg_server

    with tempfile.TemporaryDirectory(prefix="engram-recall-pg-") as folder:
        server = pg_server.start(Path(folder) / "data")
        try:
            yield Databases(backend, server)
        finally:
            server.stop()


def run_protocol(items: list[Conversation], protocol: str, dbs: Databases, holdout: int) -> dict:
    names = [*MODES, REFERENCE]
    # rows[part][mode][category] -> per-query scores
    rows: dict[str, dict[str, dict[str, list[dict[str, float]]]]] = {
        part: {m: defaultdict(list) for m in names} for part in PARTS
    }
    latencies: dict[str, list[float]] = {m: [] for m in names}
    index_seconds, turns = 0.0, 0
    held_out = {c.sample_id for c in items[len(items) - holdout:]} if holdout else set()
    for number, conversation in enumerate(items, 1):
        part = "held-out" if conversation.sample_id in held_out else "tuned"
        reference = plain_fts5(conversation)
        with tempfile.TemporaryDirectory() as home:
            with dbs.settings(Path(home)) as settings, Engram.from_settings(settings) as mem:
                index_seconds += ingest(mem, conversation, protocol)
                turns += len(conversation.turns)
                for question in conversation.questions:
                    if not question.evidence:
                        continue
                    relevant = set(question.evidence)
                    bucket = CATEGORIES[question.category]
                    for name in names:
                        started = time.perf_counter()
                        if name == REFERENCE:
                            ranked = reference(question.question)
                        else:
                            result = mem.recall(question.question, limit=20, mode=MODES[name], touch=False)
                            ranked = [hit.memory.metadata.get("dia_id", "") for hit in result]
                        latencies[name].append(time.perf_counter() - started)
                        scores = score_query(ranked, relevant)
                        rows[part][name][bucket].append(scores)
                        rows["all"][name][bucket].append(scores)
        print(f"  {protocol}: conversation {number}/{len(items)} ({conversation.sample_id}, {part}):"
              f" {len(conversation.turns)} turns", file=sys.stderr)
    report: dict = {"conversations": {"tuned": [c.sample_id for c in items if c.sample_id not in held_out],
                                      "held-out": sorted(held_out)}}
    for part in PARTS:
        report[part] = {}
        for name in names:
            per_category = rows[part][name]
            overall_rows = [row for cat, cat_rows in per_category.items() if cat != "adversarial" for row in cat_rows]
            if not overall_rows:
                continue
            report[part][name] = {
                "overall": {**_mean(overall_rows), "queries": len(overall_rows)},
                "by_category": {cat: {**_mean(r), "queries": len(r)} for cat, r in sorted(per_category.items())},
            }
    report["latency_ms"] = {
        name: {"median": statistics.median(lat) * 1000, "p95": sorted(lat)[int(0.95 * (len(lat) - 1))] * 1000}
        for name, lat in latencies.items() if lat
    }
    report["index"] = {"turns": turns, "ms_per_memory": index_seconds / max(turns, 1) * 1000}
    return report


def run(data: Path, conversations: int | None, backend: str, *, protocols: tuple[str, ...] = PROTOCOLS,
        holdout: int = 2) -> dict:
    items = load(data)[:conversations]
    holdout = min(holdout, max(len(items) - 1, 0))
    with databases(backend) as dbs:
        report: dict = {name: run_protocol(items, name, dbs, holdout) for name in protocols}
    report["evidence"] = {"repaired": sum(c.repaired for c in items), "dropped": sum(c.dropped for c in items)}
    return report


def _mean(rows: list[dict[str, float]]) -> dict[str, float]:
    if not rows:
        return {}
    return {key: round(sum(r[key] for r in rows) / len(rows), 4) for key in rows[0]}


def print_table(report: dict) -> None:
    metrics = [f"R@{k}" for k in KS] + [f"Hit@{k}" for k in (1, 5, 10)] + ["NDCG@10", "MRR"]
    for protocol in PROTOCOLS:
        if protocol not in report:
            continue
        result = report[protocol]
        print(f"\n== turns stored {'alone' if protocol == 'alone' else 'with their neighbours as search_context'}"
              f" (tuned: {', '.join(result['conversations']['tuned'])};"
              f" held out: {', '.join(result['conversations']['held-out']) or 'none'})")
        for part in PARTS:
            if not result[part]:
                continue
            print(f"-- {part}")
            print(f"{'mode':<8} {'slice':<12} " + " ".join(f"{m:>7}" for m in metrics) + f" {'n':>5}")
            for name, values in result[part].items():
                slices = [("overall", values["overall"])] + list(values["by_category"].items())
                for label, row in slices:
                    cells = " ".join(f"{row.get(m, float('nan')):>7.3f}" for m in metrics)
                    print(f"{name:<8} {label:<12} {cells} {row.get('queries', 0):>5}")
        for name, lat in result["latency_ms"].items():
            print(f"{name:<8} latency (query embedding included): median {lat['median']:.1f} ms, p95 {lat['p95']:.1f} ms")
        print(f"index: {result['index']['turns']} turns, {result['index']['ms_per_memory']:.2f} ms per memory")
    print(f"evidence strings repaired: {report['evidence']['repaired']}, dropped: {report['evidence']['dropped']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=data_file, default=str(DEFAULT_DATA), help="LoCoMo-format JSON file")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--conversations", type=int, default=None, help="only the first N conversations")
    parser.add_argument("--holdout", type=int, default=2, help="the last N conversations are reported apart (default 2)")
    parser.add_argument("--protocols", default=",".join(PROTOCOLS), help="alone, neighbours or both (default)")
    parser.add_argument("--backend", default="sqlite",
                        help="memory backend (default sqlite); postgres starts a throw-away server")
    args = parser.parse_args()
    protocols = tuple(p.strip() for p in args.protocols.split(",") if p.strip())
    unknown = [p for p in protocols if p not in PROTOCOLS]
    if unknown:
        parser.error(f"--protocols: unknown {', '.join(unknown)}; allowed: {', '.join(PROTOCOLS)}")
    report = run(args.data, args.conversations, args.backend, protocols=protocols, holdout=args.holdout)
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        print_table(report)


if __name__ == "__main__":
    main()
