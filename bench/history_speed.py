"""History throughput: append and get_recent on a 100,000-message conversation.

    python bench/history_speed.py [--messages 100000] [--ops 2000]

Prints one line per backend and operation. SQLite and in-memory hold the full history; JSONL is
capped by design (Clawless: FIFO at max_entries), so it is measured at its cap with every append
paying the rotation. Numbers are medians of one run on a shared machine: compare ratios.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from engram.history.inmemory import InMemoryHistoryStore
from engram.history.jsonl import JsonlHistoryStore
from engram.history.sqlite import SqliteHistoryStore
from engram.model import Message, Role

KEY = "bench:chat:"


def message(i: int) -> Message:
    role = Role.USER if i % 2 == 0 else Role.ASSISTANT
    return Message(role, f"message {i}: the quick brown fox jumps over the lazy dog while we talk about deploys",
                   created_at=1_700_000_000.0 + i)


def rate(label: str, ops: int, fn: Callable[[int], object]) -> None:
    start = time.perf_counter()
    for i in range(ops):
        fn(i)
    elapsed = time.perf_counter() - start
    print(f"{label:<44} {ops / elapsed:>10,.0f} ops/s  ({elapsed / ops * 1e6:,.0f} us/op)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--ops", type=int, default=2000)
    args = parser.parse_args()
    run(args.messages, args.ops)


def run(n: int = 100_000, ops: int = 2000) -> None:
    """Print append / get_recent throughput on an ``n``-message history for each backend."""
    with tempfile.TemporaryDirectory() as folder:
        sqlite = SqliteHistoryStore.open(Path(folder) / "memory.db")
        started = time.perf_counter()
        for start in range(0, n, 10_000):
            sqlite.append_many(KEY, [message(i) for i in range(start, min(n, start + 10_000))])
        print(f"sqlite bulk load of {n:,} messages: {time.perf_counter() - started:.1f} s")
        rate(f"sqlite append (history of {n:,})", ops, lambda i: sqlite.append(KEY, message(n + i)))
        rate("sqlite get_recent(50)", ops, lambda i: sqlite.get_recent(KEY, 50))
        rate("sqlite get_recent(100)", ops, lambda i: sqlite.get_recent(KEY, 100))
        rate("sqlite count", ops, lambda i: sqlite.count(KEY))
        sqlite.close()

        memory = InMemoryHistoryStore()
        for i in range(n):
            memory.append(KEY, message(i))
        rate(f"inmemory append (history of {n:,})", ops * 10, lambda i: memory.append(KEY, message(n + i)))
        rate("inmemory get_recent(50)", ops * 10, lambda i: memory.get_recent(KEY, 50))

        jsonl = JsonlHistoryStore(Path(folder) / "history.jsonl")  # Clawless defaults: 100 entries
        for i in range(200):
            jsonl.append(KEY, message(i))
        rate("jsonl append (at its 100-entry cap)", min(ops, 500), lambda i: jsonl.append(KEY, message(200 + i)))
        rate("jsonl get_recent(50)", min(ops, 500), lambda i: jsonl.get_recent(KEY, 50))


if __name__ == "__main__":
    main()
