"""Recall over HTTP on loopback: requests per second and latency percentiles with several
concurrent clients. Starts its own server on 127.0.0.1 (free port) over a temporary SQLite file,
sends a bounded number of requests, prints a table, and stops.

    python bench/http_load.py --memories 2000 --clients 1,4,8 --requests 400
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import threading
import time
from pathlib import Path

import httpx

from engram.auth import TokenStore
from engram.engine import Engram
from engram.interfaces.http.app import create_app
from engram.interfaces.http.serve import BackgroundServer
from engram.store.sqlite import SqliteMemoryStore

# A few thousand made-up words, so a query matches a realistic handful of memories, not all of them.
_SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "pe", "da", "gu", "zo", "ra", "fe", "bi", "no"]
WORDS = sorted({a + b + c for a in _SYLLABLES for b in _SYLLABLES for c in _SYLLABLES})[:3000]


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(12))


def _client(url: str, token: str, queries: list[str], out: list[float], errors: list[int]) -> None:
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30) as c:
        for q in queries:
            start = time.perf_counter()
            r = c.get("/api/v1/memory/search", params={"q": q, "limit": 10})
            out.append(time.perf_counter() - start)
            if r.status_code != 200:
                errors.append(r.status_code)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--clients", default="1,4,8", help="comma-separated concurrency levels")
    parser.add_argument("--requests", type=int, default=400, help="requests per concurrency level (bounded)")
    args = parser.parse_args()
    rng = random.Random(42)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "memory.db"
        engram = Engram(SqliteMemoryStore(db))
        for _ in range(args.memories):
            engram.remember(_sentence(rng))
        tokens = TokenStore.open(db)
        token, _ = tokens.create("default")
        server = BackgroundServer(create_app(engram, tokens, mcp=False)).start()
        try:
            print(f"recall over HTTP: {args.memories} memories, text mode (no embedder), loopback")
            print(f"{'clients':>7} {'requests':>8} {'req/s':>8} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'errors':>6}")
            for clients in (int(c) for c in args.clients.split(",")):
                per = max(1, args.requests // clients)
                latencies: list[float] = []
                errors: list[int] = []
                threads = [threading.Thread(target=_client, args=(
                    server.url, token, [" ".join(rng.sample(WORDS, 3)) for _ in range(per)], latencies, errors))
                    for _ in range(clients)]
                start = time.perf_counter()
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
                elapsed = time.perf_counter() - start
                q = statistics.quantiles(latencies, n=100)
                print(f"{clients:>7} {len(latencies):>8} {len(latencies) / elapsed:>8.0f} {q[49] * 1000:>8.1f} "
                      f"{q[94] * 1000:>8.1f} {q[98] * 1000:>8.1f} {len(errors):>6}")
        finally:
            server.stop()
            tokens.close()
            engram.close()


if __name__ == "__main__":
    main()
