"""Where a person waits for a fresh process: each figure next to a baseline measured in the same run.

    python bench/startup.py [--memories 2000] [--repeat 3] [--store PATH ...] [--json]
    python bench/startup.py --build 1000000 --store PATH      # build a large store once, then reuse it

Rows (median of ``--repeat`` fresh processes; the machine is shared, so read the ratios):

- ``engram --help``, ``engram recall --help`` and ``engram mcp --help`` against ``python -c pass``,
  ``import typer`` and a two-command typer app's ``--help`` and ``hello --help`` (typer renders
  help with rich and checks each option's type with pydantic: that cost is typer's, paid by any
  typer program);
- ``engram mcp`` launch -> answer to ``tools/list`` (after ``initialize``), against importing the
  MCP SDK's server alone; and launch -> first ``recall`` answer on ``--memories`` memories;
- ``engram mcp`` exit: its stdin's end (the client done) -> the process gone, after that recall
  and after ``tools/list`` alone (start-up work may still be running then), against a process that
  imported the SDK and loaded the model (``EXIT_BASELINE``): what a client that launches the server
  per task waits for before it goes on;
- ``engram serve --port 0`` launch -> first ``/healthz`` answer (``starting`` while the app loads),
  and launch -> first answer of ``/api/v1/memory/search`` (the app ready and the model loaded),
  against ``python -c pass``;
- a fresh ``engram recall`` (hybrid, the local model) on ``--memories`` memories and on each
  ``--store`` (an existing ``memory.db``, agent ``default``), after a clean close (the start-up
  integrity check is skipped), against loading the local model and embedding one query in a
  fresh process; on the ``--memories`` store also with the check forced (``startup_check =
  "full"`` reads every page, like the first start after a crash);
- a fresh ``engram remember`` of a new text on ``--memories`` memories, the memory folder mirrored
  (the default), against the same model alone;
- peak resident memory of the largest child process.

Every timed query is new to the process's embedding cache (a word and a random number appended),
so the local model really embeds it, as it does for a user's new question. The ``--memories``
store is built once in a temporary ``ENGRAM_HOME`` through ``Engram.remember_many`` with the
configured (local) embedder; ``--build N --store PATH`` builds a large one the way
``bench/speed.py`` does (real LoCoMo turns and recombinations of them). Children run with
bytecode caching on, as an installed engram does.
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
MODEL_ALONE = "import sys\nfrom engram.embed.local import LocalProvider\nLocalProvider().embed_query(sys.argv[1])\n"
# The SDK imported and the model loaded, then exit at the end of stdin: the interpreter's own exit
# over a heap of that kind, which a server that exits after its client pays at least.
EXIT_BASELINE = ("import sys\nimport mcp.server.mcpserver\nfrom engram.embed.local import LocalProvider\n"
                 "LocalProvider().embed_query(sys.argv[1])\nprint('ready', flush=True)\nsys.stdin.read()\n")
WORDS = ("tea coffee python rust garden bicycle meeting budget travel paris berlin music piano "
         "football recipe pasta doctor dentist birthday sister brother project deadline report").split()
_rng = random.Random(1)


def fresh_query() -> str:
    """A question no embedding cache has seen: the model must embed it."""
    return f"{_rng.choice(WORDS)} and {_rng.choice(WORDS)} {_rng.randrange(10**9)}"


def run_time(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
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


def mcp_first_answers(env: dict[str, str], *, recall: bool = True) -> tuple[float, float, float]:
    """Seconds from launching ``engram mcp`` to the ``tools/list`` answer, to a ``recall`` answer
    (0 without ``recall``), and from closing its stdin after the last answer to its exit."""
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
        recalled = 0.0
        if recall:
            _rpc(proc, {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                        "params": {"name": "recall", "arguments": {"query": fresh_query()}}})
            answer = _answer(proc, 3)
            recalled = time.perf_counter() - start
            assert "result" in answer and not answer["result"].get("isError"), answer
        return listed, recalled, _exit_after_stdin(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _exit_after_stdin(proc: subprocess.Popen) -> float:
    """Seconds from closing ``proc``'s stdin to its exit (it must exit with 0)."""
    closed = time.perf_counter()
    proc.stdin.close()  # type: ignore[union-attr]
    code = proc.wait(timeout=120)
    gone = time.perf_counter() - closed
    if code != 0:
        raise RuntimeError(f"exited with {code} at the end of its stdin")
    return gone


def baseline_exit(env: dict[str, str]) -> float:
    """Seconds from closing the stdin of a process that imported the SDK and loaded the model
    (``EXIT_BASELINE``) to its exit."""
    proc = subprocess.Popen([sys.executable, "-c", EXIT_BASELINE, fresh_query()], env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        if proc.stdout.readline().strip() != "ready":  # type: ignore[union-attr]
            raise RuntimeError("the exit baseline did not start")
        return _exit_after_stdin(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def serve_first_answers(env: dict[str, str], token: str) -> tuple[float, float]:
    """Seconds from launching ``engram serve --port 0`` to its first ``/healthz`` answer, and to
    its first search answer (``/api/v1/memory/search``: 503 while the app is starting)."""
    client = httpx.Client(timeout=120, headers={"Authorization": f"Bearer {token}"})  # not the server's time
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
        healthz = _first_ok(client, f"{url}/healthz", proc, start)
        searched = _first_ok(client, f"{url}/api/v1/memory/search?q={fresh_query()}", proc, start)
        return healthz, searched
    finally:
        client.close()
        proc.terminate()
        proc.wait(timeout=60)


def _first_ok(client: httpx.Client, url: str, proc: subprocess.Popen, start: float) -> float:
    while True:
        try:
            answer = client.get(url)
            if answer.status_code == 200:
                return time.perf_counter() - start
            if answer.status_code != 503:
                raise RuntimeError(f"{url}: {answer.status_code} {answer.text[:300]}")
        except httpx.TransportError:
            pass
        time.sleep(0.005)
        if proc.poll() is not None or time.perf_counter() - start > 300:
            raise RuntimeError(f"engram serve did not answer {url}")


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


def build_large_store(path: Path, size: int) -> None:
    """``size`` memories as ``bench/speed.py`` builds them (LoCoMo turns with their real vectors,
    then recombinations with mixed vectors), the vector index saved beside the file."""
    sys.path.insert(0, str(Path(__file__).parent))
    import speed  # bench/speed.py

    from engram.embed import Embedder, EmbeddingCache
    from engram.embed.local import LocalProvider

    turns, _ = speed.load_texts(speed.DEFAULT_DATA)
    cache_dir = Path(os.environ.get("ENGRAM_TEST_CACHE_DIR", Path.home() / ".cache" / "engram-tests"))
    cache_dir.mkdir(parents=True, exist_ok=True)
    embedder = Embedder(LocalProvider(), cache=EmbeddingCache(cache_dir / "embeddings.db"))
    path.parent.mkdir(parents=True, exist_ok=True)
    print(json.dumps(speed.build_store(path, size, turns, embedder.embed(turns), str(embedder.identity))))


def fresh_recall(env: dict[str, str], repeat: int) -> float:
    """Median seconds of a fresh ``engram recall`` of a new question, after one run that leaves the
    clean-close stamp (a store built by another process has none)."""
    def once() -> float:
        return run_time([*ENGRAM, "--json", "recall", fresh_query()], env)

    once()
    return median(once, repeat)


def store_env(env: dict[str, str], store: Path) -> dict[str, str]:
    return {**env, "ENGRAM_PATH": str(store), "ENGRAM_AGENT": "default"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--store", type=Path, action="append", default=[],
                        help="an existing memory.db (agent default) to time a fresh recall on; repeatable")
    parser.add_argument("--build", type=int, help="build a store of this many memories at --store, then exit")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.build:
        if len(args.store) != 1 or args.store[0].exists():
            parser.error("--build needs one --store path that does not exist yet")
        build_large_store(args.store[0], args.build)
        return
    missing = [str(p) for p in args.store if not p.is_file()]
    if missing:
        parser.error(f"no such store: {', '.join(missing)} (build one with --build N --store PATH)")
    out: dict = {"load_average": os.getloadavg()}
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "ENGRAM_HOME": str(Path(tmp) / "home"), "PYTHONUNBUFFERED": "1"}
        for name in ("ENGRAM_LIFECYCLE__BACKUP__STARTUP_CHECK", "PYTHONDONTWRITEBYTECODE", "ENGRAM_PATH", "ENGRAM_AGENT"):
            env.pop(name, None)
        python = [sys.executable]
        run_time([*ENGRAM, "--help"], env)  # writes engram's bytecode caches, as an installed copy has them
        bare = median(lambda: run_time([*python, "-c", "pass"], env), args.repeat)
        typer_import = median(lambda: run_time([*python, "-c", "import typer"], env), args.repeat)
        typer_help = median(lambda: run_time([*python, "-c", TYPER_APP, "--help"], env), args.repeat)
        typer_sub_help = median(lambda: run_time([*python, "-c", TYPER_APP, "hello", "--help"], env), args.repeat)
        helps = {name: median(lambda cmd=cmd: run_time([*ENGRAM, *cmd, "--help"], env), args.repeat)
                 for name, cmd in (("engram", []), ("recall", ["recall"]), ("mcp", ["mcp"]))}
        out["help"] = {"python_pass_s": bare, "import_typer_s": typer_import, "typer_app_help_s": typer_help,
                       "typer_command_help_s": typer_sub_help, "engram_help_s": helps["engram"],
                       "recall_help_s": helps["recall"], "mcp_help_s": helps["mcp"],
                       "over_import_typer_s": helps["engram"] - typer_import,
                       "over_typer_app_help_s": helps["engram"] - typer_help}
        build_store(env, args.memories)
        model = median(lambda: run_time([*python, "-c", MODEL_ALONE, fresh_query()], env), args.repeat)
        sdk = median(lambda: run_time([*python, "-c", "import mcp.server.mcpserver"], env), args.repeat)
        answers = [mcp_first_answers(env) for _ in range(args.repeat)]
        listed = statistics.median(a[0] for a in answers)
        recalled = statistics.median(a[1] for a in answers)
        listed_only = statistics.median(mcp_first_answers(env, recall=False)[2] for _ in range(args.repeat))
        exit_baseline = median(lambda: baseline_exit(env), args.repeat)
        out["mcp"] = {"import_sdk_s": sdk, "tools_list_s": listed, "over_sdk_s": listed - sdk,
                      "first_recall_s": recalled, "recall_over_sdk_s": recalled - sdk, "memories": args.memories,
                      "exit_after_recall_s": statistics.median(a[2] for a in answers),
                      "exit_after_tools_list_s": listed_only, "exit_baseline_s": exit_baseline}
        token = json.loads(subprocess.run([*ENGRAM, "--json", "token", "create", "--agent", "default"], env=env,
                                          check=True, capture_output=True, text=True).stdout)["token"]
        served = [serve_first_answers(env, token) for _ in range(args.repeat)]
        out["serve"] = {"python_pass_s": bare, "healthz_s": statistics.median(s[0] for s in served),
                        "first_search_s": statistics.median(s[1] for s in served), "memories": args.memories}
        stamped = fresh_recall(env, args.repeat)
        full_env = {**env, "ENGRAM_LIFECYCLE__BACKUP__STARTUP_CHECK": "full"}
        checked = median(lambda: run_time([*ENGRAM, "--json", "recall", fresh_query()], full_env), args.repeat)
        out["recall"] = {"memories": args.memories, "python_pass_s": bare, "model_alone_s": model,
                         "fresh_recall_s": stamped, "fresh_recall_full_check_s": checked}
        remembered = median(lambda: run_time([*ENGRAM, "--json", "remember", fresh_query()], env), args.repeat)
        out["remember"] = {"memories": args.memories, "model_alone_s": model, "fresh_remember_s": remembered}
        out["stores"] = {str(store): {"fresh_recall_s": fresh_recall(store_env(env, store), args.repeat),
                                      "model_alone_s": model}
                         for store in args.store}
        out["memory"] = {"peak_child_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}
    out["load_average_after"] = os.getloadavg()
    if args.json:
        print(json.dumps(out, indent=2))
        return
    report(out, args)


def report(out: dict, args: argparse.Namespace) -> None:
    h, m, s, r = out["help"], out["mcp"], out["serve"], out["recall"]
    bare, model = h["python_pass_s"], r["model_alone_s"]
    load = " ".join(f"{x:.1f}" for x in out["load_average"])
    print(f"start-up, median of {args.repeat} fresh processes (python -c pass: {bare:.3f} s; load average {load})")
    print(f"  engram --help              {h['engram_help_s']:.3f} s  = import typer + {h['over_import_typer_s']:.3f} s"
          f"  (a two-command typer app's --help: {h['typer_app_help_s']:.3f} s)")
    print(f"  engram recall --help       {h['recall_help_s']:.3f} s, engram mcp --help {h['mcp_help_s']:.3f} s"
          f"  (the typer app's hello --help: {h['typer_command_help_s']:.3f} s)")
    print(f"  engram mcp -> tools/list   {m['tools_list_s']:.3f} s  = MCP SDK import + {m['over_sdk_s']:.3f} s")
    print(f"  engram mcp -> first recall {m['first_recall_s']:.3f} s  = MCP SDK import + {m['recall_over_sdk_s']:.3f} s"
          f"  ({args.memories} memories)")
    print(f"  engram mcp stdin end -> exit {m['exit_after_recall_s']:.3f} s after that recall"
          f" = {m['exit_after_recall_s'] / m['exit_baseline_s']:.2f}x the SDK and the model loaded"
          f" ({m['exit_baseline_s']:.3f} s); {m['exit_after_tools_list_s']:.3f} s after tools/list alone")
    print(f"  engram serve -> /healthz   {s['healthz_s']:.3f} s  = {s['healthz_s'] / bare:.1f}x python -c pass;"
          f" first search answer {s['first_search_s']:.3f} s")
    print(f"  model alone (load + 1 query, fresh process) {model:.3f} s")
    print(f"  fresh engram recall        {r['fresh_recall_s']:.3f} s after a clean close, "
          f"{r['fresh_recall_full_check_s']:.3f} s with the full integrity check ({args.memories} memories)")
    w = out["remember"]
    print(f"  fresh engram remember      {w['fresh_remember_s']:.3f} s = model alone + "
          f"{w['fresh_remember_s'] - model:.3f} s ({args.memories} memories, the memory folder mirrored)")
    for store, row in out["stores"].items():
        print(f"  fresh engram recall        {row['fresh_recall_s']:.3f} s on {store} "
              f"= model alone + {row['fresh_recall_s'] - model:.3f} s")
    print(f"  peak child RSS             {out['memory']['peak_child_rss_mb']:.0f} MB")


if __name__ == "__main__":
    main()
