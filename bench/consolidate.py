"""Consolidation with the memory folder on, against the same run with it off (the baseline).

A store of real English memories (``real_corpus``: Debian descriptions, man pages, Python's docs)
with ``--duplicates`` of them stored a second time lightly reworded (a sentence appended, as an
agent re-storing what it already knows), embedded with the local model, then one consolidation
run (``lifecycle.consolidate``, the default threshold) on two copies of that store: one with the
memory folder written (``files.enabled``, the default) and one without. Prints each run's wall
and CPU time, the groups merged and memories removed, and the folder's cost as a ratio.

    python bench/consolidate.py --memories 5000 --duplicates 500 [--json]

Before 2026-11-28 each merge was announced on its own, so the folder rewrote the agent's file once
per merge; now the merges are announced 200 at a time.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from real_corpus import memories  # noqa: E402

from engram.config import load_settings  # noqa: E402
from engram.engine import Engram  # noqa: E402
from engram.lifecycle import consolidate  # noqa: E402
from engram.lifecycle.settings import ConsolidationSettings  # noqa: E402

REWORDING = " I noted this before."


def _stored(home: Path, texts: list[str], duplicates: int) -> None:
    """The store both runs start from (the folder off: each run writes its own, or none)."""
    with Engram.from_settings(load_settings(home=home, files={"enabled": False})) as engram:
        engram.remember_many([{"content": text} for text in texts])
        engram.remember_many([{"content": text + REWORDING} for text in texts[:duplicates]])


def _run(home: Path, folder: bool) -> dict[str, float]:
    with Engram.from_settings(load_settings(home=home, files={"enabled": folder})) as engram:
        if folder:
            from engram.files.sync import attach_from_settings

            syncer = attach_from_settings(engram, engram.settings)
            assert syncer is not None
            syncer.sync()  # the folder as it is before the run: written whole, once
        wall, cpu = time.perf_counter(), time.process_time()
        report = consolidate.run(engram, ConsolidationSettings(), now=time.time())
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {"wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "groups_merged": report.changed,
            "removed": len(report.removed)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=5000)
    parser.add_argument("--duplicates", type=int, default=500)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    texts, _ = memories(args.memories)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base"
        _stored(base, texts, min(args.duplicates, len(texts)))
        runs = {}
        for name, folder in (("folder off", False), ("folder on", True)):
            home = Path(tmp) / name.replace(" ", "-")
            shutil.copytree(base, home)
            runs[name] = _run(home, folder)
    ratio = runs["folder on"]["cpu_s"] / max(runs["folder off"]["cpu_s"], 1e-9)
    result = {"memories": len(texts), "duplicates": args.duplicates, "runs": runs,
              "folder_cpu_ratio": round(ratio, 2)}
    if args.json:
        print(json.dumps(result))
        return
    print(f"consolidation of {len(texts)} real-English memories + {args.duplicates} reworded copies (local model)")
    for name, run in runs.items():
        print(f"  {name:<10}: {run['wall_s']:6.2f} s wall, {run['cpu_s']:6.2f} s CPU;"
              f" {run['groups_merged']} groups merged, {run['removed']} removed")
    print(f"  the memory folder costs {ratio:.2f} x the run's CPU without it")


if __name__ == "__main__":
    main()
