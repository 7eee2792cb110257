"""What one ``remember`` costs with the memory folder on, by how many entries its file already holds.

    python bench/files_remember.py [--sizes 100,5000] [--remembers 60] [--formats markdown,yaml] [--json]

For each format and size, a SQLite store with the folder attached (``FileSync.attach``, as
``files.enabled`` does) is filled with that many memories through ``remember_many``, all going to
one file (``knowledge.md`` / ``knowledge.yaml``: no tags, group by tag); then ``--remembers``
single ``remember`` calls into that file are timed (wall clock, and this process's CPU: steadier on
a shared machine), each returning once its entry is in the file. The sizes take turns call by
call, so a noisy spell on the shared machine hits them alike; the figure to compare between
versions is the ratio of the largest size's median to the smallest's (1.0: a store costs the same
whatever the file holds). Past ``files.max_file_bytes`` (5 MB, ~20,000 entries) the entries go on
in continuation files (``knowledge-2.md``...), so the store's cost then also shows what grows with
the memories stored rather than with one file. Bytes written to the file per
call come from its size and the number of whole rewrites seen (its inode changes on each one).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from engram.config import RecallSettings
from engram.engine import Engram
from engram.files.sync import FileSync
from engram.store.sqlite import SqliteMemoryStore

WORDS = "python rust memory agent recall file sync markdown yaml watcher conflict database scope tag".split()


def _content(i: int) -> str:
    return f"note {i}: " + " ".join(WORDS[(i * 7 + k) % len(WORDS)] for k in range(12))


def _open(folder: Path, fmt: str, size: int) -> tuple[Engram, FileSync, Path]:
    engram = Engram(SqliteMemoryStore(folder / "memory.db"), agent="bench",
                    recall_settings=RecallSettings(cache_ttl_s=0))
    syncer = FileSync(engram, folder / "memory", format=fmt)
    syncer.attach()
    for start in range(0, size, 500):
        engram.remember_many([{"content": _content(i)} for i in range(start, min(size, start + 500))])
    target = folder / "memory" / "agents" / "bench" / f"knowledge.{'md' if fmt == 'markdown' else 'yaml'}"
    return engram, syncer, target


def run(sizes: tuple[int, ...] = (100, 5000), remembers: int = 60,
        formats: tuple[str, ...] = ("markdown", "yaml")) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in formats:
            opened = {size: _open(Path(tmp) / f"{fmt}-{size}", fmt, size) for size in sizes}
            times: dict[int, list[float]] = {size: [] for size in sizes}
            cpu: dict[int, list[float]] = {size: [] for size in sizes}
            rewrites = dict.fromkeys(sizes, 0)
            start_bytes = {size: opened[size][2].stat().st_size for size in sizes}
            for n in range(remembers):
                for size, (engram, _, target) in opened.items():
                    inode = target.stat().st_ino
                    began, began_cpu = time.perf_counter(), time.process_time()
                    engram.remember(_content(size + n) + " (timed)")
                    times[size].append((time.perf_counter() - began) * 1000)
                    cpu[size].append((time.process_time() - began_cpu) * 1000)
                    rewrites[size] += target.stat().st_ino != inode
            rows = {}
            for size, (engram, syncer, target) in opened.items():
                grown = target.stat().st_size - start_bytes[size]
                rows[str(size)] = {
                    "median_ms": statistics.median(times[size]), "median_cpu_ms": statistics.median(cpu[size]),
                    "file_bytes": target.stat().st_size,
                    "whole_rewrites": rewrites[size],
                    "bytes_written_per_call": (rewrites[size] * target.stat().st_size + grown) / remembers
                    if rewrites[size] else grown / remembers,
                }
                syncer.detach()
                engram.close()
            base = rows[str(sizes[0])]["median_ms"]
            for row in rows.values():
                row["ratio_to_smallest"] = row["median_ms"] / base
            out[fmt] = rows
    return {"remembers": remembers, "formats": out, "load_average": os.getloadavg()[0]}


def print_rows(result: dict[str, Any]) -> None:
    print(f"remember with the memory folder on, {result['remembers']} calls per size "
          f"(median ms; ratio to the smallest file; load average {result['load_average']:.1f})")
    for fmt, rows in result["formats"].items():
        for size, row in rows.items():
            print(f"  {fmt:<8} {int(size):>6,} entries in the file: {row['median_ms']:6.2f} ms"
                  f" (CPU {row['median_cpu_ms']:6.2f} ms)"
                  f"  x{row['ratio_to_smallest']:.2f}   ({row['whole_rewrites']} whole rewrites,"
                  f" ~{row['bytes_written_per_call']:,.0f} bytes written a call; file {row['file_bytes']:,} bytes)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100,5000")
    parser.add_argument("--remembers", type=int, default=60)
    parser.add_argument("--formats", default="markdown,yaml")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = run(tuple(int(s) for s in args.sizes.split(",")), args.remembers,
                 tuple(f for f in args.formats.split(",") if f))
    if args.json:
        print(json.dumps(result))
    else:
        print_rows(result)


if __name__ == "__main__":
    main()
