"""Recall and stores over HTTP on loopback: requests per second and latency percentiles with
several concurrent clients. Starts its own server on 127.0.0.1 (free port) over a temporary SQLite
file, sends a bounded number of requests, prints a table, and stops.

    python bench/http_load.py --memories 2000 --clients 1,4,8 --requests 400 [--store-clients 16 --stores 320] [--json]

Recall runs in text mode (no embedder). Stores (``POST /api/v1/memory``, each acknowledged after
its transaction commits) go to a second server whose engine embeds with the local model (by
default the engine ``engram serve`` builds from default settings in a fresh home: its audit trail,
memory-folder mirror and embedding cache included; ``--store-engine bare``: a store and the model
only); their
rate is printed beside the same model's own rate on batches of 64 measured in this run (the stores
go in ``--rounds`` parts, the model's rate measured alone before the first and after each; each
round's ratio is against the mean of the rates around it, and the median of the rounds is the
figure: concurrent stores share one model call and one transaction per batch, so the ratio can
approach 1), and their latency beside the floor the
model sets: the time it takes to embed one text per client (clients / its batch rate), which no
p99 can beat. Their CPU is printed too: the server process's CPU time per store against the
model's own CPU time per text (its share of the work: steadier than rates when the host is busy,
since it does not depend on how much of the cores other programs took), and the share of the run
the model spent embedding with the rate it embedded at meanwhile (where the difference from its
rate alone goes). ``--stores 0`` skips that part.

Then the same number of stores from ``--async-tasks`` asyncio tasks in this process, each awaiting
``AsyncEngram.remember`` in turn (a store and the local model, no HTTP): how an asyncio agent
framework stores, against the model's batch rate measured around it. ``--async-tasks 0`` skips it.

The clients run in a second process (threads there, one per client), as real clients are other
programs: in the server's own process they would take turns with it on one interpreter lock,
which no deployment does. They still share the machine's cores with the server, as on one host.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import multiprocessing
import os
import random
import resource
import statistics
import tempfile
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

from engram.aio import AsyncEngram
from engram.auth import TokenStore
from engram.config import load_settings
from engram.embed import Embedder
from engram.embed.local import LocalProvider
from engram.engine import Engram
from engram.interfaces.heap import freeze_startup_heap
from engram.interfaces.http.app import create_app
from engram.interfaces.http.serve import BackgroundServer
from engram.root import open_tokens
from engram.store.sqlite import SqliteMemoryStore

# A few thousand made-up words, so a query matches a realistic handful of memories, not all of them.
_SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "pe", "da", "gu", "zo", "ra", "fe", "bi", "no"]
WORDS = sorted({a + b + c for a in _SYLLABLES for b in _SYLLABLES for c in _SYLLABLES})[:3000]


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(12))


def _send(url: str, token: str, kind: str, items: list[str], out: list[float], errors: list[int]) -> None:
    """One client on one keep-alive connection: ``kind`` "recall" searches each item, "store"
    stores each; latencies in ``out``. The standard library's client, not httpx: httpx spent
    ~0.8 ms of CPU per request here against ~0.1 ms, and the clients share the server's cores, so
    a heavy client measures itself as much as the server."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=60)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    try:
        for item in items:
            start = time.perf_counter()
            if kind == "recall":
                conn.request("GET", "/api/v1/memory/search?" + urlencode({"q": item, "limit": 10}), headers=headers)
            else:
                conn.request("POST", "/api/v1/memory", body=json.dumps({"content": item}), headers=headers)
            response = conn.getresponse()
            response.read()
            out.append(time.perf_counter() - start)
            if response.status != (200 if kind == "recall" else 201):
                errors.append(response.status)
    finally:
        conn.close()


def _drive(url: str, token: str, kind: str, work: list[list[str]]) -> tuple[list[float], int, float, float]:
    """Runs one client thread per list in ``work`` at once; returns latencies, errors, the elapsed
    time and the clients' CPU time (this process's)."""
    start_cpu = time.process_time()
    latencies: list[float] = []
    errors: list[int] = []
    threads = [threading.Thread(target=_send, args=(url, token, kind, items, latencies, errors)) for items in work]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies, len(errors), time.perf_counter() - start, time.process_time() - start_cpu


def _drive_elsewhere(url: str, token: str, kind: str, work: list[list[str]]) -> tuple[list[float], int, float, float]:
    """``_drive`` in a second process (see the module docstring)."""
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(_drive, url, token, kind, work).result()


def _percentiles(latencies: list[float]) -> tuple[float, float, float]:
    q = statistics.quantiles(latencies, n=100) if len(latencies) > 1 else [latencies[0]] * 99
    return q[49], q[94], q[98]


def _store_engine(tmp: Path, kind: str) -> tuple[Engram, TokenStore]:
    """The engine stores go through: "serve", as ``engram serve`` builds it from default settings
    in a fresh home (local model with its embedding cache, audit trail, memory-folder mirror);
    "bare", a store and the local model only."""
    if kind == "serve":
        engram = Engram.from_settings(load_settings(home=tmp / "serve-home"))
        return engram, open_tokens(engram.settings, engram.backend)  # type: ignore[arg-type]
    db = tmp / "bare.db"
    return Engram(SqliteMemoryStore(db), embedder=Embedder(LocalProvider(), batch_size=64)), TokenStore.open(db)


class _ModelClock:
    """The intervals the local model spent in ``embed_batch`` while installed (``with``): every
    ``LocalProvider`` of this process, the engine's too (it builds its own from settings)."""

    def __init__(self) -> None:
        self.intervals: list[tuple[float, float]] = []
        self.texts = 0

    def __enter__(self) -> _ModelClock:
        self._original = original = LocalProvider.embed_batch

        def clocked(provider: LocalProvider, texts: list[str]) -> Any:
            start = time.perf_counter()
            try:
                return original(provider, texts)
            finally:
                self.intervals.append((start, time.perf_counter()))
                self.texts += len(texts)

        LocalProvider.embed_batch = clocked  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        LocalProvider.embed_batch = self._original  # type: ignore[method-assign]

    def totals(self) -> tuple[float, float, int, int]:
        """Seconds spent embedding, seconds from the first call's start to the last call's end,
        texts embedded, and calls."""
        if not self.intervals:
            return 0.0, 0.0, 0, 0
        busy = sum(end - start for start, end in self.intervals)
        return busy, self.intervals[-1][1] - self.intervals[0][0], self.texts, len(self.intervals)


def _loaded_model(rng: random.Random) -> Embedder:
    embedder = Embedder(LocalProvider(), batch_size=64)  # no cache: every text reaches the model
    embedder.embed([_sentence(rng) for _ in range(64)])  # load the model first
    return embedder


def _model_rate(embedder: Embedder, rng: random.Random, total: int) -> tuple[float, float]:
    """The model's texts per second on batches of 64, and its CPU time per text (all threads)."""
    texts = [_sentence(rng) for _ in range(max(128, min(total, 640)))]
    start, start_cpu = time.perf_counter(), time.process_time()
    for i in range(0, len(texts), 64):
        embedder.embed(texts[i:i + 64])
    return len(texts) / (time.perf_counter() - start), (time.process_time() - start_cpu) / len(texts)


def async_store_load(tmp: Path, tasks: int, total: int, rng: random.Random) -> dict[str, float]:
    """Concurrent ``await mem.remember(...)`` from asyncio tasks in this process (``AsyncEngram``
    over a store and the local model, no HTTP), against the model's batch rate measured around it."""
    embedder = _loaded_model(rng)
    before, _ = _model_rate(embedder, rng, total)
    per = max(1, total // tasks)
    work = [[_sentence(rng) for _ in range(per)] for _ in range(tasks)]
    engram = Engram(SqliteMemoryStore(tmp / "async.db"), embedder=Embedder(LocalProvider(), batch_size=64))
    latencies: list[float] = []

    async def task(mem: AsyncEngram, items: list[str]) -> None:
        for item in items:
            start = time.perf_counter()
            await mem.remember(item)
            latencies.append(time.perf_counter() - start)

    async def run() -> float:
        async with AsyncEngram(engram) as mem:
            start = time.perf_counter()
            await asyncio.gather(*(task(mem, items) for items in work))
            return time.perf_counter() - start

    elapsed = asyncio.run(run())
    after, _ = _model_rate(embedder, rng, total)
    batch_rate = (before + after) / 2
    rate = len(latencies) / elapsed
    p50, _, p99 = _percentiles(latencies)
    return {"tasks": tasks, "stores": len(latencies), "stores_per_s": rate, "embedder_batch64_per_s": batch_rate,
            "ratio_to_embedder": rate / batch_rate, "p50_ms": p50 * 1000, "p99_ms": p99 * 1000,
            "load_average": os.getloadavg()[0]}


def store_load(tmp: Path, clients: int, total: int, rng: random.Random, engine: str = "serve",
               preload: int = 0, rounds: int = 5) -> dict[str, Any]:
    """Concurrent stores through a server with the local model, and the model's batch rate;
    ``preload`` memories are stored first (without vectors: their embedding is not what is timed).

    The stores are sent in ``rounds`` parts, the model's own rate measured before the first and
    after each: a round's ratio is its stores a second against the mean of the model's rates
    around it. On a shared host the model's rate alone drifts by a third within a minute, so one
    rate before and one after the whole run left the ratio at the mercy of that drift; the median
    of the rounds' ratios is the figure, their range printed beside it."""
    embedder = _loaded_model(rng)
    rounds = max(1, min(rounds, total // clients))
    per_round = max(clients, total // rounds)

    def model_rate() -> tuple[float, float]:
        return _model_rate(embedder, rng, per_round)

    engram, tokens = _store_engine(tmp, engine)
    if preload:
        model, engram.embedder = engram.embedder, None
        engram.remember_many([{"content": _sentence(rng)} for _ in range(preload)])
        engram.embedder = model
    token, _ = tokens.create("default")
    server = BackgroundServer(create_app(engram, tokens, mcp=False)).start()
    freeze_startup_heap()  # as `engram serve` does once started, its model loaded (here by _loaded_model)
    latencies: list[float] = []
    errors = 0
    elapsed = server_cpu = client_cpu = 0.0
    busy = span = 0.0
    texts = calls = 0
    model_rates, model_cpus, ratios = [], [], []
    try:
        rate_before, cpu_before = model_rate()
        model_rates.append(rate_before)
        model_cpus.append(cpu_before)
        for _ in range(rounds):
            per = max(1, per_round // clients)
            work = [[_sentence(rng) for _ in range(per)] for _ in range(clients)]
            start_cpu = time.process_time()  # the server's process: the clients run in another
            with _ModelClock() as clock:
                got, failed, took, cpu = _drive_elsewhere(server.url, token, "store", work)
            server_cpu += time.process_time() - start_cpu
            round_busy, round_span, round_texts, round_calls = clock.totals()
            busy, span, texts, calls = busy + round_busy, span + round_span, texts + round_texts, calls + round_calls
            latencies += got
            errors += failed
            elapsed += took
            client_cpu += cpu
            rate_after, cpu_after = model_rate()  # the server idle, between rounds
            model_rates.append(rate_after)
            model_cpus.append(cpu_after)
            ratios.append(len(got) / took / ((rate_before + rate_after) / 2))
            rate_before = rate_after
        stored_after = engram.stats().memories
    finally:
        server.stop()
        tokens.close()
        engram.close()
    batch_rate = statistics.fmean(model_rates)
    model_cpu = statistics.fmean(model_cpus)
    store_cpu = server_cpu / max(1, len(latencies))
    p50, p95, p99 = _percentiles(latencies)
    rate = len(latencies) / elapsed
    # The two levers of the rate ratio: the CPU a store costs (server and clients share the cores)
    # sets the ratio reachable with every core busy; the share of the cores in use gives the rest.
    client_cpu_per_store = client_cpu / max(1, len(latencies))
    cores = len(os.sched_getaffinity(0))
    ceiling = model_cpu / (store_cpu + client_cpu_per_store) if store_cpu else None
    core_use = (server_cpu + client_cpu) / (elapsed * cores)
    # Each client waits for the model to embed every client's text at least: the latency floor.
    floor = clients / batch_rate
    return {"engine": engine, "preloaded": preload, "memories_after": stored_after, "clients": clients,
            "requests": len(latencies), "req_per_s": rate, "p50_ms": p50 * 1000,
            "p95_ms": p95 * 1000, "p99_ms": p99 * 1000, "errors": errors, "embedder_batch64_per_s": batch_rate,
            "embedder_rates_per_s": model_rates, "rounds": rounds, "ratio_by_round": ratios,
            "ratio_to_embedder": statistics.median(ratios),
            "model_floor_ms": floor * 1000, "server_cpu_ms_per_store": store_cpu * 1000,
            "model_cpu_ms_per_text": model_cpu * 1000, "cpu_ratio": model_cpu / store_cpu if store_cpu else None,
            "client_cpu_ms_per_store": client_cpu_per_store * 1000, "load_average": os.getloadavg()[0],
            "ratio_ceiling_all_cores_busy": ceiling, "core_use": core_use, "cores": cores,
            "model_busy_share": busy / span if span else 1.0, "model_texts_per_s_while_busy": texts / busy if busy else 0.0,
            "model_mean_batch": texts / max(1, calls)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--clients", default="1,4,8", help="comma-separated concurrency levels")
    parser.add_argument("--requests", type=int, default=400, help="requests per concurrency level (bounded)")
    parser.add_argument("--store-clients", type=int, default=16, help="concurrent clients storing memories")
    parser.add_argument("--stores", type=int, default=320, help="stores in all (0: skip the store part)")
    parser.add_argument("--rounds", type=int, default=5,
                        help="parts the stores are sent in, the model's rate measured alone around each (median ratio)")
    parser.add_argument("--preload", type=int, default=0,
                        help="memories already stored (without vectors) before the stores are timed")
    parser.add_argument("--store-engine", choices=("serve", "bare"), default="serve",
                        help="serve: the engine `engram serve` builds from default settings (audit trail, memory-folder"
                             " mirror, embedding cache); bare: a store and the local model only")
    parser.add_argument("--async-tasks", type=int, default=16,
                        help="asyncio tasks storing through AsyncEngram in this process, no HTTP (0: skip)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    out: dict[str, object] = {"recall": []}
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
            if not args.json:
                print(f"recall over HTTP: {args.memories} memories, text mode (no embedder), loopback")
                print(f"{'clients':>7} {'requests':>8} {'req/s':>8} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} "
                      f"{'errors':>6}")
            for clients in (int(c) for c in args.clients.split(",")):
                per = max(1, args.requests // clients)
                work = [[" ".join(rng.sample(WORDS, 3)) for _ in range(per)] for _ in range(clients)]
                latencies, errors, elapsed, _ = _drive_elsewhere(server.url, token, "recall", work)
                p50, p95, p99 = _percentiles(latencies)
                out["recall"].append({"clients": clients, "requests": len(latencies),  # type: ignore[union-attr]
                                      "req_per_s": len(latencies) / elapsed, "p50_ms": p50 * 1000,
                                      "p95_ms": p95 * 1000, "p99_ms": p99 * 1000, "errors": errors})
                if not args.json:
                    print(f"{clients:>7} {len(latencies):>8} {len(latencies) / elapsed:>8.0f} {p50 * 1000:>8.1f} "
                          f"{p95 * 1000:>8.1f} {p99 * 1000:>8.1f} {errors:>6}")
        finally:
            server.stop()
            tokens.close()
            engram.close()
        if args.stores > 0:
            out["stores"] = row = store_load(Path(tmp), args.store_clients, args.stores, rng, args.store_engine,
                                              args.preload, args.rounds)
            if not args.json:
                print(f"\nstores over HTTP: {row['clients']} clients, local model, {row['engine']} engine, "
                      f"{row['preloaded']} memories stored before, each acknowledged after commit")
                ratios = row["ratio_by_round"]
                print(f"  {row['ratio_to_embedder']:.2f} x the model's batch-64 rate: the median of {row['rounds']} rounds' "
                      f"ratios ({min(ratios):.2f}-{max(ratios):.2f}), each round's stores a second against the model's "
                      f"rate measured alone around it (this run {min(row['embedder_rates_per_s']):.0f}-"
                      f"{max(row['embedder_rates_per_s']):.0f} texts/s)")
                print(f"  {row['req_per_s']:.1f} stores/s over all rounds; p50 {row['p50_ms']:.0f} ms, "
                      f"p99 {row['p99_ms']:.0f} ms, {row['errors']} errors")
                floor = row["model_floor_ms"]
                print(f"  the model alone takes {floor:.0f} ms to embed one text per client (the latency floor): "
                      f"p50 {row['p50_ms'] / floor:.2f} x, p99 {row['p99_ms'] / floor:.2f} x that; "
                      f"load average {row['load_average']:.1f}")
                print(f"  CPU (steadier on a shared host): the server spent {row['server_cpu_ms_per_store']:.1f} ms per "
                      f"store, the model alone {row['model_cpu_ms_per_text']:.1f} ms per text: "
                      f"{row['cpu_ratio']:.2f} x the model's efficiency; the clients (same cores) "
                      f"{row['client_cpu_ms_per_store']:.2f} ms per store")
                print(f"  so with all {row['cores']} cores busy this CPU per store allows at most "
                      f"{row['ratio_ceiling_all_cores_busy']:.2f} x the model's rate; server and clients kept "
                      f"{row['core_use']:.0%} of the cores busy")
                print(f"  the model was embedding {row['model_busy_share']:.0%} of the time from its first batch to "
                      f"its last, at {row['model_texts_per_s_while_busy']:.0f} texts/s while it did "
                      f"({row['model_texts_per_s_while_busy'] / row['embedder_batch64_per_s']:.2f} x its batch-64 rate "
                      f"alone: the server's own work and the clients share its cores, and its batches are smaller, "
                      f"{row['model_mean_batch']:.1f} texts on average)")
        if args.stores > 0 and args.async_tasks > 0:
            out["async_stores"] = arow = async_store_load(Path(tmp), args.async_tasks, args.stores, rng)
            if not args.json:
                print(f"\nstores from {arow['tasks']} asyncio tasks (AsyncEngram, local model, no HTTP): "
                      f"{arow['stores_per_s']:.1f}/s = {arow['ratio_to_embedder']:.2f} x the model's batch-64 rate "
                      f"({arow['embedder_batch64_per_s']:.1f} texts/s, same run); p50 {arow['p50_ms']:.0f} ms, "
                      f"p99 {arow['p99_ms']:.0f} ms")
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(f"peak RSS {out['peak_rss_mb']:.0f} MB")


if __name__ == "__main__":
    main()
