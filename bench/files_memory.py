"""What the memory-folder mirror holds in memory per memory stored.

    python bench/files_memory.py [--memories 20000] [--tags 4] [--max-file-bytes 5000000] [--json]

A SQLite store with the folder attached (``FileSync.attach``, as ``files.enabled`` does) and no
embedding model is filled with ``--memories`` memories through ``remember_many`` (100 a call,
each call one quick pass), their first tags taking turns over ``--tags`` tags so they go to that
many files (and their continuation files once a file reaches ``--max-file-bytes``). Then, under
``tracemalloc`` (started before the first store), the Python memory the syncer keeps is measured by
letting go of each part and reading what is freed:

- the quick pass's parsed files (``QuickPass``: text, parsed document and hash of the files it
  keeps), with how many files and bytes of text it keeps out of those in the folder;
- the sync state (``SyncState.entries`` and ``files``), as the syncer keeps it between passes.

The process's resident memory (``VmRSS``) before the first store and after the last is printed
too: it includes SQLite's page cache and whatever the allocator keeps, so it is a figure to read,
not the mirror's alone. A smaller ``--max-file-bytes`` makes the folder hold as many files as a
much larger store would at the default (5,000,000): 20,000 memories in files of 250,000 bytes
are ~20 files, as ~400,000 memories are at the default.
"""

from __future__ import annotations

import argparse
import gc
import json
import tempfile
import tracemalloc
from pathlib import Path
from typing import Any

from engram.config import RecallSettings
from engram.engine import Engram
from engram.files.sync import FileSync
from engram.store.sqlite import SqliteMemoryStore

WORDS = "python rust memory agent recall file sync markdown yaml watcher conflict database scope tag".split()


def _content(i: int) -> str:
    return f"note {i}: " + " ".join(WORDS[(i * 7 + k) % len(WORDS)] for k in range(12))


def rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _freed(let_go: Any) -> int:
    """Bytes of Python memory freed by ``let_go()`` (traced, after a collection)."""
    gc.collect()
    before = tracemalloc.get_traced_memory()[0]
    let_go()
    gc.collect()
    return before - tracemalloc.get_traced_memory()[0]


def run(memories: int = 20000, tags: int = 4, max_file_bytes: int = 5_000_000) -> dict[str, Any]:
    tracemalloc.start()
    with tempfile.TemporaryDirectory() as tmp:
        engram = Engram(SqliteMemoryStore(Path(tmp) / "memory.db"), agent="bench",
                        recall_settings=RecallSettings(cache_ttl_s=0))
        syncer = FileSync(engram, Path(tmp) / "memory", max_file_bytes=max_file_bytes)
        syncer.attach()
        rss_before = rss_kb()
        for start in range(0, memories, 100):
            engram.remember_many([{"content": _content(i), "tags": [f"topic{i % tags}"]}
                                  for i in range(start, min(memories, start + 100))])
        rss_after = rss_kb()
        folder_files = sorted((Path(tmp) / "memory").rglob("*.md"))
        kept = syncer._quick.parsed
        kept_files, kept_chars = len(kept), kept.chars
        folder_bytes = sum(f.stat().st_size for f in folder_files)
        entries = len(syncer._state[1].entries) if syncer._state is not None else 0
        quick_bytes = _freed(kept.clear)
        state_bytes = _freed(lambda: setattr(syncer, "_state", None))
        syncer.detach()
        engram.close()
    tracemalloc.stop()
    return {
        "memories": memories, "tags": tags, "max_file_bytes": max_file_bytes,
        "folder_files": len(folder_files), "folder_bytes": folder_bytes,
        "kept_files": kept_files, "kept_text_chars": kept_chars,
        "quick_pass_bytes": quick_bytes, "quick_pass_bytes_per_memory": quick_bytes / memories,
        "state_entries": entries, "state_bytes": state_bytes, "state_bytes_per_memory": state_bytes / memories,
        "rss_growth_kb": rss_after - rss_before, "rss_growth_bytes_per_memory": (rss_after - rss_before) * 1024 / memories,
    }


def print_rows(r: dict[str, Any]) -> None:
    print(f"{r['memories']:,} memories over {r['tags']} tags, files of at most {r['max_file_bytes']:,} bytes:"
          f" {r['folder_files']} files in the folder ({r['folder_bytes']:,} bytes)")
    print(f"  quick pass keeps {r['kept_files']} files ({r['kept_text_chars']:,} characters of text):"
          f" {r['quick_pass_bytes']:,} bytes, {r['quick_pass_bytes_per_memory']:.0f} per memory")
    print(f"  sync state ({r['state_entries']:,} entries): {r['state_bytes']:,} bytes,"
          f" {r['state_bytes_per_memory']:.0f} per memory")
    print(f"  resident memory grew {r['rss_growth_kb']:,} KB, {r['rss_growth_bytes_per_memory']:.0f} bytes per memory"
          " (SQLite and the allocator included; under tracemalloc)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=20000)
    parser.add_argument("--tags", type=int, default=4)
    parser.add_argument("--max-file-bytes", type=int, default=5_000_000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = run(args.memories, args.tags, args.max_file_bytes)
    if args.json:
        print(json.dumps(result))
    else:
        print_rows(result)


if __name__ == "__main__":
    main()
