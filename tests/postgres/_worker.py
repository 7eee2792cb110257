"""One of the processes of test_multiprocess.py: store, recall, link and forget at once with the
others, then write down every operation that was acknowledged (returned without raising)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from engram.engine import Engram


def main(worker: int, start_at: float, out: Path) -> None:
    log: dict = {"stored": [], "forgotten": [], "links": [], "recalled": {}, "shared": [], "racing": []}
    mem = Engram.from_settings(agent="team")  # ENGRAM_DATABASE_URL selects PostgreSQL
    while time.time() < start_at:  # start together so the operations overlap
        time.sleep(0.005)
    for n in range(30):
        key = f"w{worker}-{n}"
        mem.remember(f"worker {worker} note {n} about the shared topic", key=key)
        log["stored"].append(key)
        # Every worker stores the same texts: each must exist exactly once (dedup across processes).
        if n % 5 == 0:
            log["shared"].append(mem.remember(f"common topic fact number {n}").memory.id)
        # Different texts with one proposed key: the suffixes must not collide across processes.
        if n == 7:
            log["racing"].append(mem.remember("racing key" + "!" * (worker + 1)).memory.key)
        if n >= 1:
            mem.link(key, f"w{worker}-{n - 1}")
            log["links"].append([key, f"w{worker}-{n - 1}"])
        for hit in mem.recall("shared topic", limit=5):
            log["recalled"][hit.memory.id] = log["recalled"].get(hit.memory.id, 0) + 1
        if n % 3 == 2:
            mem.forget(f"w{worker}-{n - 2}")
            log["forgotten"].append(f"w{worker}-{n - 2}")
    mem.close()
    out.write_text(json.dumps(log))


if __name__ == "__main__":
    main(int(sys.argv[1]), float(sys.argv[2]), Path(sys.argv[3]))
