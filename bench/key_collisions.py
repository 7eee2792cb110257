"""CPU per ``remember`` when every write proposes the same key (templated content: imported chat
turns, agents writing "User said that ..."), against writes whose keys all differ.

    python bench/key_collisions.py [--writes 3000] [--backends sqlite,inmemory] [--database-url URL] [--json]

Each write stores new content without a key, so the store derives one and suffixes it ``-2``,
``-3``... when it is taken. CPU time (``time.process_time``: this process only, so a busy shared
machine disturbs it less than wall time) is reported per write for the first and the last tenth of
the writes: with a free key found in a bounded number of index look-ups the two are about equal;
a search that reads every earlier suffix makes the last tenth cost more with every write. With
``--database-url`` PostgreSQL is measured too (its server's CPU is not counted: wall ms shown).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engram.config import RecallSettings
from engram.engine import Engram
from engram.store.base import MemoryStore
from engram.store.inmemory import InMemoryMemoryStore
from engram.store.sqlite import SqliteMemoryStore


def _colliding(i: int) -> str:
    return f"User said that the weather is nice today, turn {i}"  # key: user-said-weather-nice-today-turn


def _distinct(i: int) -> str:
    return f"Turn {i} of the conversation: the weather is nice today"  # key: turn-<i>-conversation-...


def _run(open_store: Callable[[], MemoryStore], content: Callable[[int], str], writes: int) -> dict[str, Any]:
    engram = Engram(open_store(), agent="bench", recall_settings=RecallSettings(cache_ttl_s=0))
    cpu: list[float] = []
    wall: list[float] = []
    keys = set()
    try:
        for i in range(writes):
            c0, w0 = time.process_time(), time.perf_counter()
            keys.add(engram.remember(content(i)).memory.key)
            cpu.append(time.process_time() - c0)
            wall.append(time.perf_counter() - w0)
    finally:
        engram.close()
    assert len(keys) == writes, "every write got its own key"
    tenth = max(1, writes // 10)
    return {
        "cpu_ms_first_tenth": 1000 * sum(cpu[:tenth]) / tenth,
        "cpu_ms_last_tenth": 1000 * sum(cpu[-tenth:]) / tenth,
        "cpu_ms_mean": 1000 * sum(cpu) / writes,
        "wall_ms_last_tenth": 1000 * sum(wall[-tenth:]) / tenth,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--writes", type=int, default=3000)
    parser.add_argument("--backends", default="sqlite,inmemory")
    parser.add_argument("--database-url", default=None, help="also measure PostgreSQL at this URL (an empty database)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        openers: dict[str, Callable[[str], MemoryStore]] = {
            "sqlite": lambda name: SqliteMemoryStore(Path(tmp) / f"{name}.db"),
            "inmemory": lambda name: InMemoryMemoryStore(),
        }
        if args.database_url:
            from engram.db.postgres import PgDatabase
            from engram.store.postgres import PostgresMemoryStore

            openers["postgres"] = lambda name: PostgresMemoryStore(PgDatabase.connect(args.database_url))
        chosen = [b for b in args.backends.split(",") if b] + (["postgres"] if args.database_url else [])
        for backend in chosen:
            for kind, content in (("distinct", _distinct), ("colliding", _colliding)):
                name = f"{backend}-{kind}"
                results[name] = _run(lambda n=name, b=backend: openers[b](n), content, args.writes)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"{args.writes} writes each; CPU ms per write (this process)")
    print(f"{'case':<22}{'first 10%':>11}{'last 10%':>11}{'mean':>9}{'wall last 10%':>15}")
    for name, r in results.items():
        print(f"{name:<22}{r['cpu_ms_first_tenth']:>11.3f}{r['cpu_ms_last_tenth']:>11.3f}{r['cpu_ms_mean']:>9.3f}"
              f"{r['wall_ms_last_tenth']:>15.3f}")


if __name__ == "__main__":
    main()
