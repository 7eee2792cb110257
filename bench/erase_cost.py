"""What erasing one memory costs, against forgetting one, on a store of many.

    python bench/erase_cost.py [--memories 20000] [--smaller 4000] [--rounds 5] [--dims 384] [--dir DIR] [--json]

``forget(erase=True)`` forgets, rewrites the memory's audit rows, drops its vectors from the
embedding cache and scrubs the SQLite file so its raw bytes hold none of the erased text
(``FileCare.scrub``, ``EmbeddingCache.drop``). A plain ``forget`` of one memory is the baseline,
measured in the same run and taking turns with the erases (so a noisy spell on the shared machine
hits both alike). The first erase of a file vacuums it once (``FileCare.scrub``: its free space may
hold bytes written before engram zeroed what it frees) and is reported apart; the later ones are
the rounds. The same is measured on a store of ``--smaller`` memories, and the two erase times are
printed as a ratio: an erase whose cost grows with the file shows about the ratio of the sizes.
Each store is built with ``remember_many`` (no embedding model: full text only, so it is quick);
one memory in ten is updated once, as stores are. The embedding cache is measured apart: an
``EmbeddingCache`` file of ``--memories`` vectors of ``--dims`` floats, one text's vector dropped
(``drop``), against a plain delete of one row in the same file.

Prints median wall times and each as a ratio to its baseline, the files' sizes, and the load
average (the machine is shared: compare ratios, not seconds); ``--json``: the same as one JSON
document. No figure is asserted anywhere.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from engram.embed.cache import EmbeddingCache
from engram.engine import Engram

WORDS = ("deploy server cache budget invoice meeting garden recipe flight hotel doctor lesson guitar python "
         "rust sqlite backup weekend coffee train ticket museum dentist payroll ledger branch merge review "
         "release kernel printer router battery camera novel chapter poem market salary tax insurance").split()


def text(rng: random.Random, i: int) -> str:
    return f"note {i}: " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 40)))


def build(home: Path, size: int) -> Engram:
    rng = random.Random(7)
    engram = Engram.from_settings(home=home, embeddings={"provider": "none"}, files={"enabled": False})
    for start in range(0, size, 2000):
        engram.remember_many([{"content": text(rng, i), "key": f"m{i}"} for i in range(start, min(size, start + 2000))])
    for i in range(0, size, 10):
        engram.update(f"m{i}", content=text(rng, i) + " (updated)")
    return engram


def timed(fn) -> float:  # noqa: ANN001
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def store_figures(home: Path, size: int, rounds: int) -> dict[str, float]:
    engram = build(home, size)
    try:
        db = Path(engram.store.db.path)
        first = timed(lambda: engram.forget("m5", erase=True))  # vacuums the file once, then marks it
        forget, erase = [], []
        for r in range(rounds):
            # Both of memories updated once (each has a version), taking turns.
            forget.append(timed(lambda r=r: engram.forget(f"m{20 * r}")))
            erase.append(timed(lambda r=r: engram.forget(f"m{20 * r + 10}", erase=True)))
        return {"forget_s": statistics.median(forget), "erase_s": statistics.median(erase), "first_erase_s": first,
                "db_bytes": db.stat().st_size}
    finally:
        engram.close()


def cache_figures(folder: Path, size: int, dims: int, rounds: int) -> dict[str, float]:
    cache = EmbeddingCache(folder / "embedding-cache.db")
    texts = [f"cached text {i}" for i in range(size)]
    rng = np.random.default_rng(7)
    for start in range(0, size, 5000):
        chunk = texts[start:start + 5000]
        cache.put_many(f"bench:model:{dims}", chunk, rng.random((len(chunk), dims), dtype=np.float32))
    delete, drop = [], []
    try:
        cache.drop([texts[-1]])  # the first drop vacuums the file once, then marks it (as the first erase)
        for r in range(rounds):
            def plain(r: int = r) -> None:  # the baseline: the same row delete, no scrub
                from engram.embed.cache import text_key

                with cache._lock:
                    db = cache._db()
                    db.execute("DELETE FROM embedding_cache WHERE text_hash = ?", (text_key(texts[2 * r]),))
            delete.append(timed(plain))
            drop.append(timed(lambda r=r: cache.drop([texts[2 * r + 1]])))
        return {"delete_s": statistics.median(delete), "drop_s": statistics.median(drop),
                "cache_bytes": (folder / "embedding-cache.db").stat().st_size}
    finally:
        cache.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=20_000)
    parser.add_argument("--smaller", type=int, default=None, help="the other store's size (a fifth by default)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--dims", type=int, default=384)
    parser.add_argument("--dir", type=Path, default=None, help="where to build (a temporary folder by default)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON document")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        started = time.perf_counter()
        # At least the keys the rounds erase (m0 .. m(20 * rounds)).
        smaller_size = args.smaller if args.smaller is not None else max(args.memories // 5, 20 * args.rounds + 20)
        store = store_figures(Path(tmp) / "store", args.memories, args.rounds)
        smaller = store_figures(Path(tmp) / "smaller", smaller_size, args.rounds)
        cache = cache_figures(Path(tmp), args.memories, args.dims, args.rounds)
        built = time.perf_counter() - started
    if args.json:
        print(json.dumps({"memories": args.memories, "rounds": args.rounds, "run_s": built,
                          "load_average": os.getloadavg()[0], "store": store, "cache": cache,
                          "smaller": {"memories": smaller_size, **smaller},
                          "erase_growth": store["erase_s"] / smaller["erase_s"],
                          "erase_vs_forget": store["erase_s"] / store["forget_s"],
                          "drop_vs_delete": cache["drop_s"] / cache["delete_s"]}))
        return
    print(f"{args.memories:,} memories, {args.rounds} rounds, run in {built:.0f}s, load average {os.getloadavg()[0]:.2f}")
    print(f"store  {store['db_bytes'] / 1e6:8.1f} MB  forget one {store['forget_s'] * 1e3:8.1f} ms (baseline 1.0x)"
          f"  erase one {store['erase_s'] * 1e3:8.1f} ms  = {store['erase_s'] / store['forget_s']:6.1f}x")
    print(f"first erase of each file (vacuums it once) {store['first_erase_s'] * 1e3:8.1f} ms")
    print(f"erase one at {smaller_size:,} memories {smaller['erase_s'] * 1e3:8.1f} ms, at {args.memories:,}"
          f" {store['erase_s'] * 1e3:8.1f} ms = {store['erase_s'] / smaller['erase_s']:5.2f}x"
          f" for a store {args.memories / smaller_size:.1f}x larger ({smaller['db_bytes'] / 1e6:.1f} MB"
          f" vs {store['db_bytes'] / 1e6:.1f} MB)")
    print(f"cache  {cache['cache_bytes'] / 1e6:8.1f} MB  delete one {cache['delete_s'] * 1e3:7.1f} ms (baseline 1.0x)"
          f"  drop one  {cache['drop_s'] * 1e3:8.1f} ms  = {cache['drop_s'] / cache['delete_s']:6.1f}x")


if __name__ == "__main__":
    main()
