"""Crash loop: SIGKILL engram mid-write, again and again, and count acknowledged writes lost.

Each round starts one of five workloads as a real process on one engram home, lets it write for
a random moment, and kills it with SIGKILL (no exit path runs):

- ``library``: ``Engram.remember`` in a loop;
- ``cli``: ``engram remember`` processes one after another (the CLI process is what is killed);
- ``serve``: ``engram serve`` under load from this process's HTTP clients (the server is killed);
- ``sync``: library writes with the memory folder attached, plus ``sync`` passes;
- ``compaction``: memories and conversation history, with forced compaction.

A write counts as acknowledged when the worker printed its key after ``remember`` returned (or
the server answered 201). After the last round engram opens the store as a user would and the
script prints acknowledged writes lost (must be 0), the SQLite integrity check, the memory
folder's sync report and the rounds per workload. Not a timed test: ``tests/test_bench.py`` runs a
few rounds to keep it working.

    python bench/crash_loop.py --rounds 100 [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

WORKLOADS = ("library", "cli", "serve", "sync", "compaction")

_WRITER = r"""
import sys, itertools
from engram.engine import Engram
from engram.config import load_settings
from engram.files.sync import attach_from_settings
workload, tag = sys.argv[1], sys.argv[2]
settings = load_settings()
engram = Engram.from_settings(settings)
syncer = attach_from_settings(engram, settings) if workload == "sync" else None
for i in itertools.count():
    key = f"{tag}-{i}"
    engram.remember(f"crash loop write {key} about apples and pears", key=key, tags="crash")
    print(key, flush=True)  # acknowledged: remember returned
    if workload == "sync" and i % 5 == 0:
        syncer.sync()
    if workload == "compaction":
        engram.history.append("bench:crash", "user", f"message {key}")
        engram.history.append("bench:crash", "assistant", f"reply {key}")
        if i % 10 == 0:
            engram.history.compact("bench:crash", force=True)
"""


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env.update(ENGRAM_HOME=str(home), ENGRAM_EMBEDDINGS__PROVIDER="none", ENGRAM_SERVER__MAINTENANCE_INTERVAL_S="0",
               ENGRAM_LIFECYCLE__BACKUP__BEFORE_RISKY="false")
    return env


def _kill_after(proc: subprocess.Popen[str], seconds: float) -> None:
    time.sleep(seconds)
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)


def _writer_round(home: Path, workload: str, tag: str, seconds: float) -> list[str]:
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, workload, tag], env=_env(home), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    threading.Thread(target=_kill_after, args=(proc, seconds), daemon=True).start()
    acked = [line.strip() for line in proc.stdout or () if line.strip()]
    proc.wait()
    return acked


def _cli_round(home: Path, tag: str, seconds: float, kill_after: float) -> list[str]:
    """``engram remember`` processes back to back for ``seconds``; the last one is killed
    ``kill_after`` seconds into its run (acknowledged: exit status 0)."""
    acked, deadline, i = [], time.monotonic() + seconds, 0
    while True:
        key = f"{tag}-{i}"
        proc = subprocess.Popen([sys.executable, "-m", "engram", "remember", f"crash loop cli write {key}", "--key", key],
                                env=_env(home), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        last = time.monotonic() >= deadline
        try:
            if proc.wait(timeout=kill_after if last else 120) == 0:
                acked.append(key)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)  # killed mid-command: not acknowledged
            proc.wait()
        i += 1
        if last:
            return acked


def _serve_round(home: Path, tag: str, seconds: float) -> list[str]:
    import httpx

    proc = subprocess.Popen([sys.executable, "-m", "engram", "serve", "--port", "0"], env=_env(home), text=True,
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    printed = ""
    while "web page:" not in printed:
        line = proc.stderr.readline() if proc.stderr else ""
        if not line:
            return []
        printed += line
    threading.Thread(target=proc.stderr.read, daemon=True).start()  # type: ignore[union-attr]
    base, token = re.search(r"web page:\s+(\S+)/\?token=(\S+)", printed).groups()  # type: ignore[union-attr]
    acked: list[str] = []
    lock = threading.Lock()

    def load(worker: int) -> None:
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=10) as client:
            for i in range(100_000):
                key = f"{tag}-w{worker}-{i}"
                try:
                    if client.post("/api/v1/memory", json={"content": f"served write {key}", "key": key}).status_code == 201:
                        with lock:
                            acked.append(key)
                except httpx.HTTPError:
                    return  # the server is gone
    threads = [threading.Thread(target=load, args=(w,), daemon=True) for w in range(4)]
    for thread in threads:
        thread.start()
    _kill_after(proc, seconds)
    proc.wait()
    for thread in threads:
        thread.join(timeout=15)
    return acked


def run(rounds: int, home: Path, seed: int) -> dict[str, object]:
    from engram.config import load_settings
    from engram.engine import Engram
    from engram.files.sync import FileSync
    from engram.lifecycle.backup import check_file

    rng = random.Random(seed)
    acked: list[str] = []
    per_workload = dict.fromkeys(WORKLOADS, 0)
    started = time.monotonic()
    for n in range(rounds):
        workload = WORKLOADS[n % len(WORKLOADS)]
        # Long enough for a process to start on a busy machine, random so kills land anywhere.
        seconds = rng.uniform(2.0, 5.0)
        tag = f"r{n}{workload[0]}"
        if workload == "cli":
            got = _cli_round(home, tag, seconds, kill_after=rng.uniform(0.2, 2.0))
        elif workload == "serve":
            got = _serve_round(home, tag, seconds)
        else:
            got = _writer_round(home, workload, tag, seconds)
        acked += got
        per_workload[workload] += 1
        print(f"round {n + 1}/{rounds} {workload}: {len(got)} acknowledged", file=sys.stderr)
    settings = load_settings(home=home, embeddings={"provider": "none"})
    integrity = check_file(settings.database_path(), full=True)
    with Engram.from_settings(settings) as engram:
        present = {m.key for m in engram.store.iter_all()}
        sync = FileSync.from_settings(engram, settings).sync()
    lost = sorted(set(acked) - present)
    return {"rounds": rounds, "workloads": per_workload, "acknowledged": len(acked), "lost": len(lost),
            "lost_keys": lost[:20], "integrity": integrity, "sync_problems": [str(p) for p in sync.problems],
            "stored": len(present), "seconds": round(time.monotonic() - started, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--home", type=Path, default=None, help="engram home (default: a new temporary folder)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    home = args.home or Path(tempfile.mkdtemp(prefix="engram-crash-"))
    result = run(args.rounds, home, args.seed)
    if args.json:
        print(json.dumps(result))
    else:
        print(f"{result['rounds']} SIGKILLs ({', '.join(f'{k} {v}' for k, v in result['workloads'].items())})"
              f" in {result['seconds']} s")
        print(f"acknowledged writes: {result['acknowledged']}, lost: {result['lost']}")
        print(f"integrity check: {result['integrity']}; sync problems: {len(result['sync_problems'])}")
    if result["lost"] or result["integrity"] != "ok":
        sys.exit(1)


if __name__ == "__main__":
    main()
