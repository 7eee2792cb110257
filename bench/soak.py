"""Does a long-running ``engram serve`` keep its memory bounded? Resident memory per round of mixed work.

    python bench/soak.py [--rounds 12] [--ops 1000] [--mcp-sessions 20] [--warmup 5]
        [--mcp-session-idle-s S]
    python bench/soak.py --stdio [--rounds 12] [--ops 1000] [--trace]      # engram mcp over stdio [--trace] [--json]

Starts a real ``engram serve --port 0`` in a fresh temporary ``ENGRAM_HOME`` (the embedded
default: SQLite, the local model, the embedding cache, the memory-folder mirror, history with its
semantic index), then drives it over HTTP on one keep-alive connection in rounds of ``--ops``
requests: stores of distinct texts, recalls of queries never asked before, history appends spread
over several conversations, a few forgets by query, and lists with varied filters; then
``--mcp-sessions`` MCP sessions at ``/mcp`` that each recall once and are never ended (as a killed
client leaves them; ``--mcp-session-idle-s`` sets how long the server keeps an idle one). Every
query and text is new, so each per-request cache sees a new key (the worst case for a cache
without a cap).

After each round it prints the server process's resident memory (``VmRSS`` from
``/proc/PID/status``) with the counts so far; once ``--warmup`` rounds are past (the model loaded,
the caches filled to their caps: the embedding cache's in-process LRU holds 4,096 vectors, about
4,600 requests of this mix; the recall cache 256 results), the growth per 1,000 requests over the remaining rounds (a
least-squares slope, steadier than first-to-last on a shared host), beside the growth the data
stored accounts for: the vectors of the memories and history messages stored per 1,000 requests,
which an in-memory index keeps (everything else the server holds should stop growing at a cap).

``--stdio`` drives ``engram mcp`` over stdio instead, as an MCP client launches it (one session
for the process's life): remember, recall, forget by query and list tool calls in the same
proportions (no history: the MCP tools keep none).

``--trace`` starts the server under ``tracemalloc`` (a bootstrap in this script, nothing in the
product) and prints the Python allocations that grew most between the end of warm-up and the end
(by file and line): where an unbounded growth comes from. Tracing slows the server down and adds
its own memory, so the RSS figures of a traced run are not comparable with an untraced one.

The numbers are figures to read, not assertions: RSS moves with the allocator's arenas and the
host's load; a growth several times what the data explains, steady over rounds, is the sign.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

ENGRAM = [sys.executable, "-m", "engram"]
_SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "pe", "da", "gu", "zo", "ra", "fe", "bi", "no"]
WORDS = sorted({a + b + c for a in _SYLLABLES for b in _SYLLABLES for c in _SYLLABLES})[:3000]
CATEGORIES = ["core", "knowledge", "conversation"]
TAGS = ["work", "home", "travel", "health", "music"]
CONVERSATIONS = 8
VECTOR_BYTES = 384 * 4  # the default local model's vectors (float32), as an in-memory index holds them

# Run as ``python -c`` in place of ``python -m engram``: tracemalloc from the first import, and a
# snapshot written on SIGUSR1 (the bench asks; the product has no such hook).
TRACED_SERVER = """
import gc, os, runpy, signal, sys, tracemalloc
tracemalloc.start(int(os.environ["SOAK_TRACE_FRAMES"]))
out = os.environ["SOAK_TRACE_DIR"]
count = [0]
def dump(*_):
    count[0] += 1
    gc.collect()
    path = os.path.join(out, "snap-%d" % count[0])
    tracemalloc.take_snapshot().dump(path + ".tmp")
    os.replace(path + ".tmp", path)
signal.signal(signal.SIGUSR1, dump)
sys.argv = ["engram", *sys.argv[1:]]
runpy.run_module("engram", run_name="__main__", alter_sys=True)
"""


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def sentence(rng: random.Random, n: int = 12) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


class Client:
    """One keep-alive connection with the standard library (a light client: it shares the cores)."""

    def __init__(self, url: str, token: str) -> None:
        parts = urlsplit(url)
        self.conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=300)
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        self.errors: dict[str, int] = {}
        self.first_error: dict[str, str] = {}  # the first answer of each kind of error, to read

    def call(self, method: str, path: str, body: Any = None, *, ok: tuple[int, ...] = (200, 201)) -> Any:
        self.conn.request(method, path, body=None if body is None else json.dumps(body), headers=self.headers)
        response = self.conn.getresponse()
        data = response.read()
        if response.status not in ok:
            key = f"{method} {path.split('?')[0]} {response.status}"
            self.errors[key] = self.errors.get(key, 0) + 1
            self.first_error.setdefault(key, data[:300].decode("utf-8", "replace"))
            return None
        return json.loads(data) if data else None


class Work:
    """The mixed requests of one round; counts what it stored."""

    def __init__(self, client: Client, rng: random.Random) -> None:
        self.client = client
        self.rng = rng
        self.counts = {"stores": 0, "recalls": 0, "appends": 0, "forgets": 0, "lists": 0, "forgotten": 0,
                       "mcp_sessions": 0}
        self.serial = 0

    def one(self) -> None:
        rng, c = self.rng, self.client
        self.serial += 1
        pick = rng.random()
        if pick < 0.35:
            c.call("POST", "/api/v1/memory", {
                "content": f"{sentence(rng)} (note {self.serial})", "category": rng.choice(CATEGORIES),
                "tags": rng.sample(TAGS, 2)})
            self.counts["stores"] += 1
        elif pick < 0.65:
            query = f"{' '.join(rng.sample(WORDS, 3))} {self.serial}"  # never asked before
            c.call("GET", "/api/v1/memory/search?" + urlencode({"q": query, "limit": 10}))
            self.counts["recalls"] += 1
        elif pick < 0.88:
            conversation = quote(f"soak:{rng.randrange(CONVERSATIONS)}", safe="")
            role = rng.choice(["user", "assistant"])
            c.call("POST", f"/api/v1/history/{conversation}", {"role": role, "content": sentence(rng, 20)})
            self.counts["appends"] += 1
        elif pick < 0.90:
            found = c.call("POST", "/api/v1/memory/forget", {"query": " ".join(rng.sample(WORDS, 2)),
                                                               "reason": "soak"})
            self.counts["forgets"] += 1
            self.counts["forgotten"] += (found or {}).get("count", 0)
        else:
            params: dict[str, Any] = {"limit": rng.choice([5, 20, 50]), "offset": rng.choice([0, 10, 40])}
            if rng.random() < 0.5:
                params["category"] = rng.choice(CATEGORIES)
            if rng.random() < 0.5:
                params["tag"] = rng.choice(TAGS)
            params["order"] = rng.choice(["recent", "importance"])
            c.call("GET", "/api/v1/memory?" + urlencode(params))
            self.counts["lists"] += 1

    def mcp_session(self) -> None:
        """A client that opens an MCP session at ``/mcp``, recalls once and goes away without
        ending it (a killed or crashed client sends no DELETE): what the server keeps for it."""
        c, headers = self.client, {**self.client.headers, "Accept": "application/json, text/event-stream"}

        def post(message: dict[str, Any], extra: dict[str, str]) -> http.client.HTTPResponse:
            c.conn.request("POST", "/mcp", body=json.dumps(message), headers={**headers, **extra})
            response = c.conn.getresponse()
            response.read()
            return response

        first = post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "soak", "version": "1"}}}, {})
        session = first.getheader("mcp-session-id")
        if first.status != 200 or not session:
            c.errors[f"MCP initialize {first.status}"] = c.errors.get(f"MCP initialize {first.status}", 0) + 1
            return
        extra = {"mcp-session-id": session, "mcp-protocol-version": "2025-06-18"}
        post({"jsonrpc": "2.0", "method": "notifications/initialized"}, extra)
        called = post({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "recall", "arguments": {"query": f"{' '.join(self.rng.sample(WORDS, 3))} {self.serial}"}}}, extra)
        if called.status != 200:
            c.errors[f"MCP tools/call {called.status}"] = c.errors.get(f"MCP tools/call {called.status}", 0) + 1
        self.counts["mcp_sessions"] += 1


class StdioWork:
    """The same kind of rounds through ``engram mcp`` over stdio (one session, as a client runs it):
    remember, recall, forget by query and list tools; it keeps no conversation history."""

    def __init__(self, proc: subprocess.Popen, rng: random.Random) -> None:
        self.proc, self.rng, self.serial, self.ids = proc, rng, 0, 0
        self.counts = {"stores": 0, "recalls": 0, "appends": 0, "forgets": 0, "lists": 0, "forgotten": 0,
                       "mcp_sessions": 1}
        self.errors: dict[str, int] = {}
        self.first_error: dict[str, str] = {}
        self.rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "soak", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def rpc(self, method: str, params: dict[str, Any]) -> Any:
        assert self.proc.stdout is not None
        self.ids += 1
        self.send({"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params})
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("engram mcp closed its output")
            answer = json.loads(line)
            if answer.get("id") == self.ids:
                break
        result = answer.get("result") or {}
        if "error" in answer or result.get("isError"):
            key = f"{method} {params.get('name', '')}"
            self.errors[key] = self.errors.get(key, 0) + 1
            self.first_error.setdefault(key, json.dumps(answer)[:300])
            return None
        return result.get("structuredContent") or result

    def one(self) -> None:
        rng = self.rng
        self.serial += 1
        pick = rng.random()
        if pick < 0.4:
            self.rpc("tools/call", {"name": "remember", "arguments": {
                "content": f"{sentence(rng)} (note {self.serial})", "category": rng.choice(CATEGORIES),
                "tags": rng.sample(TAGS, 2)}})
            self.counts["stores"] += 1
        elif pick < 0.8:
            self.rpc("tools/call", {"name": "recall", "arguments": {
                "query": f"{' '.join(rng.sample(WORDS, 3))} {self.serial}"}})
            self.counts["recalls"] += 1
        elif pick < 0.83:
            found = self.rpc("tools/call", {"name": "forget", "arguments": {
                "query": " ".join(rng.sample(WORDS, 2)), "reason": "soak"}})
            self.counts["forgets"] += 1
            self.counts["forgotten"] += (found or {}).get("count", 0) if isinstance(found, dict) else 0
        else:
            arguments: dict[str, Any] = {"limit": rng.choice([5, 20, 50]), "order": rng.choice(["recent", "importance"])}
            if rng.random() < 0.5:
                arguments["tags"] = [rng.choice(TAGS)]
            self.rpc("tools/call", {"name": "list", "arguments": arguments})
            self.counts["lists"] += 1

    def mcp_session(self) -> None:
        """Over stdio the client's one session is the process's own: nothing to open."""


def start_stdio(env: dict[str, str], log_path: Path, trace_dir: Path | None) -> subprocess.Popen:
    cmd = ([sys.executable, "-c", TRACED_SERVER] if trace_dir else ENGRAM) + ["--agent", "default", "mcp"]
    return subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log_path.open("w"),
                            text=True)


def start_server(env: dict[str, str], log_path: Path, trace_dir: Path | None) -> tuple[subprocess.Popen, str]:
    cmd = ([sys.executable, "-c", TRACED_SERVER] if trace_dir else ENGRAM) + ["serve", "--port", "0"]
    log = log_path.open("w")
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=log, text=True)
    start = time.monotonic()
    while time.monotonic() - start < 300:
        found = re.search(r"(http://[^/\s]+)/", log_path.read_text())
        if found:
            return proc, found.group(1)
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"engram serve did not start: {log_path.read_text()[-2000:]}")


def wait_ready(client: Client, proc: subprocess.Popen) -> None:
    """Until search answers (503 while the app starts) and the model is loaded (one recall embeds)."""
    start = time.monotonic()
    while time.monotonic() - start < 300:
        try:
            if client.call("GET", "/api/v1/memory/search?q=warm", ok=(200,)) is not None:
                return
        except (ConnectionError, http.client.HTTPException):
            client.conn.close()
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    raise RuntimeError("engram serve never answered a search")


def snapshot(proc: subprocess.Popen, trace_dir: Path, n: int) -> tracemalloc.Snapshot:
    proc.send_signal(signal.SIGUSR1)
    path = trace_dir / f"snap-{n}"
    start = time.monotonic()
    while not path.exists():
        if time.monotonic() - start > 300 or proc.poll() is not None:
            raise RuntimeError("the traced server wrote no snapshot")
        time.sleep(0.1)
    return tracemalloc.Snapshot.load(str(path))


def slope(xs: list[float], ys: list[float]) -> float:
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / den if den else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--ops", type=int, default=1000, help="requests per round")
    parser.add_argument("--warmup", type=int, default=5, help="rounds left out of the growth figure")
    parser.add_argument("--mcp-sessions", type=int, default=20,
                        help="MCP sessions opened at /mcp per round and never ended (0: none)")
    parser.add_argument("--mcp-session-idle-s", type=float,
                        help="the server's server.mcp_session_idle_s (default: its own default)")
    parser.add_argument("--stdio", action="store_true",
                        help="drive `engram mcp` over stdio (remember, recall, forget, list) instead of engram serve")
    parser.add_argument("--trace", action="store_true", help="run the server under tracemalloc; print what grew")
    parser.add_argument("--frames", type=int, default=6, help="traceback depth kept by --trace")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.rounds - args.warmup < 2:
        parser.error("need at least two rounds after --warmup")
    rng = random.Random(7)
    out: dict[str, Any] = {"load_average_start": Path("/proc/loadavg").read_text().split()[:3], "rounds": [],
                           "traced": args.trace}
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "ENGRAM_HOME": str(Path(tmp) / "home"), "PYTHONUNBUFFERED": "1"}
        for name in [k for k in env if k.startswith("ENGRAM_") and k != "ENGRAM_HOME"]:
            env.pop(name)
        if args.mcp_session_idle_s is not None:
            env["ENGRAM_SERVER__MCP_SESSION_IDLE_S"] = str(args.mcp_session_idle_s)
        trace_dir = None
        if args.trace:
            trace_dir = Path(tmp) / "trace"
            trace_dir.mkdir()
            env.update(SOAK_TRACE_DIR=str(trace_dir), SOAK_TRACE_FRAMES=str(args.frames))
        snaps: list[tracemalloc.Snapshot] = []
        work: Work | StdioWork
        if args.stdio:
            proc = start_stdio(env, Path(tmp) / "mcp.log", trace_dir)
            where = "engram mcp over stdio"
        else:
            token = json.loads(subprocess.run([*ENGRAM, "--json", "token", "create", "--agent", "default"], env=env,
                                              check=True, capture_output=True, text=True).stdout)["token"]
            proc, url = start_server(env, Path(tmp) / "serve.log", trace_dir)
            where = f"engram serve at {url}"
        try:
            if args.stdio:
                work = errors = StdioWork(proc, rng)
            else:
                client = errors = Client(url, token)
                wait_ready(client, proc)
                client.errors.clear()  # the 503s while it started
                client.first_error.clear()
                work = Work(client, rng)
            if not args.json:
                print(f"{where} (pid {proc.pid}); {args.rounds} rounds of {args.ops} requests"
                      f"{' (traced)' if args.trace else ''}; load average {' '.join(out['load_average_start'])}")
                print(f"{'round':>5} {'requests':>8} {'stores':>6} {'recalls':>7} {'appends':>7} {'lists':>5} "
                      f"{'forgot':>6} {'MCP':>4} {'req/s':>6} {'RSS MB':>7}")
            for r in range(1, args.rounds + 1):
                start = time.perf_counter()
                for _ in range(args.ops):
                    work.one()
                for _ in range(args.mcp_sessions):
                    work.mcp_session()
                elapsed = time.perf_counter() - start
                if trace_dir is not None and r in (args.warmup, args.rounds):
                    snaps.append(snapshot(proc, trace_dir, len(snaps) + 1))
                row = {"round": r, "requests": r * args.ops, **work.counts, "req_per_s": args.ops / elapsed,
                       "rss_mb": rss_kb(proc.pid) / 1024}
                out["rounds"].append(row)
                if not args.json:
                    print(f"{r:>5} {row['requests']:>8} {row['stores']:>6} {row['recalls']:>7} {row['appends']:>7} "
                          f"{row['lists']:>5} {row['forgotten']:>6} {row['mcp_sessions']:>4} {row['req_per_s']:>6.0f} "
                          f"{row['rss_mb']:>7.1f}")
        finally:
            if proc.stdin is not None:
                proc.stdin.close()  # engram mcp ends with its input
            proc.terminate()
            proc.wait(timeout=120)
        out["errors"] = errors.errors
        out["first_errors"] = errors.first_error
    rows = out["rounds"][args.warmup - 1:]  # from the end of warm-up
    requests = [row["requests"] / 1000 for row in rows]
    growth = slope(requests, [row["rss_mb"] for row in rows])
    first, last = rows[0], rows[-1]
    per_k = (last["requests"] - first["requests"]) / 1000
    vectors = ((last["stores"] - first["stores"]) + (last["appends"] - first["appends"])) / per_k
    expected = vectors * VECTOR_BYTES / 2**20
    out["growth"] = {"rss_mb_per_1000_requests": growth, "vectors_per_1000_requests": vectors,
                     "expected_mb_per_1000_requests": expected,
                     "rss_first_last_mb": [first["rss_mb"], last["rss_mb"]]}
    out["load_average_end"] = Path("/proc/loadavg").read_text().split()[:3]
    if len(snaps) == 2:
        stats = snaps[1].compare_to(snaps[0], "lineno")
        out["grew"] = [{"where": str(s.traceback), "kb": s.size_diff / 1024, "blocks": s.count_diff}
                       for s in stats[:15]]
        out["traced_total_growth_kb"] = sum(s.size_diff for s in stats) / 1024
        # The largest growths with the calls that led to them (``--frames`` deep): whose they are.
        out["grew_by_traceback"] = [{"kb": s.size_diff / 1024, "blocks": s.count_diff,
                                     "stack": [f"{f.filename}:{f.lineno}" for f in s.traceback]}
                                    for s in snaps[1].compare_to(snaps[0], "traceback")[:8]]
    if args.json:
        print(json.dumps(out, indent=2))
        return
    print(f"\nafter warm-up (rounds {args.warmup}..{args.rounds}): RSS {first['rss_mb']:.1f} -> {last['rss_mb']:.1f} MB,"
          f" {growth:+.2f} MB per 1,000 requests (least squares)")
    print(f"  the data stored explains about {expected:.2f} MB per 1,000 requests ({vectors:.0f} vectors of "
          f"{VECTOR_BYTES} bytes: memories and history messages, if an in-memory index holds them)")
    if out["errors"]:
        print(f"  errors: {out['errors']}")
        for key, body in out["first_errors"].items():
            print(f"    {key}: {body}")
    if "grew" in out:
        print(f"\nPython allocations that grew from round {args.warmup} to {args.rounds} "
              f"(total {out['traced_total_growth_kb']:+.0f} KB):")
        for item in out["grew"]:
            print(f"  {item['kb']:+9.1f} KB {item['blocks']:+7d} blocks  {item['where']}")
        print("\nthe largest, with their calls (innermost last):")
        for item in out["grew_by_traceback"]:
            print(f"  {item['kb']:+9.1f} KB {item['blocks']:+7d} blocks")
            for frame in item["stack"]:
                print(f"      {frame}")
    print(f"load average at the end {' '.join(out['load_average_end'])}")


if __name__ == "__main__":
    main()
