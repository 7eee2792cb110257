"""Where a person waits for a fresh process: each figure next to a baseline measured in the same run.

    python bench/startup.py [--memories 2000] [--repeat 3] [--json]

Rows (median of ``--repeat`` fresh processes; the machine is shared, so read the ratios):

- ``engram --help`` against ``python -c pass``, ``import typer`` and a one-command typer app's
  ``--help`` (typer renders help with rich: that cost is typer's, paid by any typer program);
- ``engram mcp`` launch -> answer to ``tools/list`` (after ``initialize``), against importing the
  MCP SDK's server alone; and launch -> first ``recall`` answer on ``--memories`` memories;
- ``engram serve --port 0`` launch -> first ``/healthz`` answer (``starting`` while the app loads),
  against ``python -c pass``;
- a fresh ``engram recall`` on ``--memories`` memories (hybrid, with the local model), after a
  clean close (the start-up integrity check is skipped) and with the check forced
  (``startup_check = "full"`` reads every page, like the first start after a crash).
- peak resident memory of the largest child process.

The store is built once in a temporary ``ENGRAM_HOME`` through ``Engram.remember_many`` with the
configured (local) embedder; nothing outside the temporary folder is touched.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

ENGRAM = [sys.executable, "-m", "engram"]
TYPER_APP = (
    "import typer\napp = typer.Typer()\n@app.command()\ndef hello(name: str = 'x') -> None:\n"
    "    '''Say hello.'''\n@app.command()\ndef bye() -> None:\n    '''Say bye.'''\napp()\n"
)
WORDS = ("tea coffee python rust garden bicycle meeting budget travel paris berlin music piano "
         "football recipe pasta doctor dentist birthday sister brother project deadline report").split()


def run_time(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {done.stderr[-1000:]}")
    return elapsed


def median(fn: Callable[[], float], repeat: int) -> float:
    return statistics.median(fn() for _ in range(repeat))


def _rpc(proc: subprocess.Popen, message: dict) -> None:
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(message) + "\n")
    proc.stdin.flush()


def _answer(proc: subprocess.Popen, request_id: int) -> dict:
    assert proc.stdout is not None
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("engram mcp closed its output before answering")
        message = json.loads(line)
        if message.get("id") == request_id:
            return message


def mcp_first_answers(env: dict[str, str]) -> tuple[float, float]:
    """Seconds from launching ``engram mcp`` to the ``tools/list`` answer, and to a ``recall`` answer."""
    start = time.perf_counter()
    proc = subprocess.Popen([*ENGRAM, "mcp"], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        _rpc(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
        _answer(proc, 1)
        _rpc(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        _rpc(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        tools = _answer(proc, 2)
        listed = time.perf_counter() - start
        assert tools["result"]["tools"], tools
        _rpc(proc, {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                    "params": {"name": "recall", "arguments": {"query": "coffee in paris"}}})
        answer = _answer(proc, 3)
        recalled = time.perf_counter() - start
        assert "result" in answer, answer
        return listed, recalled
    finally:
        proc.stdin.close()  # type: ignore[union-attr]
        proc.wait(timeout=30)


def serve_healthz(env: dict[str, str]) -> float:
    """Seconds from launching ``engram serve --port 0`` to its first ``/healthz`` answer."""
    client = httpx.Client(timeout=5)  # made first: building a client is not the server's time
    start = time.perf_counter()
    proc = subprocess.Popen([*ENGRAM, "serve", "--port", "0"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        url = None
        for line in proc.stderr:
            found = re.search(r"(http://[^/\s]+)/", line)
            if found:
                url = found.group(1)
                break
        if url is None:
            raise RuntimeError("engram serve printed no address")
        while True:
            try:
                if client.get(f"{url}/healthz").status_code == 200:
                    return time.perf_counter() - start
            except httpx.TransportError:
                time.sleep(0.005)
            if proc.poll() is not None or time.perf_counter() - start > 120:
                raise RuntimeError("engram serve did not answer /healthz")
    finally:
        client.close()
        proc.terminate()
        proc.wait(timeout=30)


def build_store(env: dict[str, str], memories: int) -> None:
    script = (
        "import random, sys\nfrom engram import Engram\n"
        f"words = {WORDS!r}\nrng = random.Random(7)\n"
        "e = Engram.from_settings()\n"
        "n = int(sys.argv[1])\n"
        "for start in range(0, n, 256):\n"
        "    e.remember_many([{'content': ' '.join(rng.choice(words) for _ in range(12)) + f' ({i})'}"
        " for i in range(start, min(n, start + 256))])\n"
        "e.close()\n"
    )
    subprocess.run([sys.executable, "-c", script, str(memories)], env=env, check=True, timeout=3600)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    random.seed(1)
    out: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "ENGRAM_HOME": str(Path(tmp) / "home"), "PYTHONUNBUFFERED": "1"}
        env.pop("ENGRAM_LIFECYCLE__BACKUP__STARTUP_CHECK", None)
        python = [sys.executable]
        bare = median(lambda: run_time([*python, "-c", "pass"], env), args.repeat)
        typer_import = median(lambda: run_time([*python, "-c", "import typer"], env), args.repeat)
        typer_help = median(lambda: run_time([*python, "-c", TYPER_APP, "--help"], env), args.repeat)
        engram_help = median(lambda: run_time([*ENGRAM, "--help"], env), args.repeat)
        out["help"] = {"python_pass_s": bare, "import_typer_s": typer_import, "typer_app_help_s": typer_help,
                       "engram_help_s": engram_help, "over_import_typer_s": engram_help - typer_import,
                       "over_typer_app_help_s": engram_help - typer_help}
        build_store(env, args.memories)
        sdk = median(lambda: run_time([*python, "-c", "import mcp.server.mcpserver"], env), args.repeat)
        answers = [mcp_first_answers(env) for _ in range(args.repeat)]
        listed = statistics.median(a[0] for a in answers)
        recalled = statistics.median(a[1] for a in answers)
        out["mcp"] = {"import_sdk_s": sdk, "tools_list_s": listed, "over_sdk_s": listed - sdk,
                      "first_recall_s": recalled, "recall_over_sdk_s": recalled - sdk}
        healthz = median(lambda: serve_healthz(env), args.repeat)
        out["serve"] = {"python_pass_s": bare, "healthz_s": healthz}
        recall = [*ENGRAM, "--json", "recall", "coffee in paris"]
        run_time(recall, env)  # leaves the clean-close stamp (the store was built by another process)
        stamped = median(lambda: run_time(recall, env), args.repeat)
        full_env = {**env, "ENGRAM_LIFECYCLE__BACKUP__STARTUP_CHECK": "full"}
        checked = median(lambda: run_time(recall, full_env), args.repeat)
        out["recall"] = {"memories": args.memories, "python_pass_s": bare, "fresh_recall_s": stamped,
                         "fresh_recall_full_check_s": checked}
        out["memory"] = {"peak_child_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}
    if args.json:
        print(json.dumps(out, indent=2))
        return
    h, m, s, r = out["help"], out["mcp"], out["serve"], out["recall"]
    print(f"start-up, median of {args.repeat} fresh processes (python -c pass: {bare:.3f} s)")
    print(f"  engram --help              {h['engram_help_s']:.3f} s  = import typer + {h['over_import_typer_s']:.3f} s"
          f"  (a one-command typer app's --help: {h['typer_app_help_s']:.3f} s)")
    print(f"  engram mcp -> tools/list   {m['tools_list_s']:.3f} s  = MCP SDK import + {m['over_sdk_s']:.3f} s")
    print(f"  engram mcp -> first recall {m['first_recall_s']:.3f} s  = MCP SDK import + {m['recall_over_sdk_s']:.3f} s"
          f"  ({args.memories} memories)")
    print(f"  engram serve -> /healthz   {s['healthz_s']:.3f} s  = {s['healthz_s'] / bare:.1f}x python -c pass")
    print(f"  fresh engram recall        {r['fresh_recall_s']:.3f} s after a clean close, "
          f"{r['fresh_recall_full_check_s']:.3f} s with the full integrity check ({args.memories} memories)")
    print(f"  peak child RSS             {out['memory']['peak_child_rss_mb']:.0f} MB")


if __name__ == "__main__":
    main()
