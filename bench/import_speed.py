"""``engram import`` of a snapshot against the embedder's own batch rate, measured in the same run.

    python bench/import_speed.py [--memories 5000] [--json]

A snapshot of ``--memories`` memories (20 words each from the model's vocabulary, exported from a
store without vectors) is imported by a fresh ``engram import`` process into an empty
``ENGRAM_HOME`` with the configured (local) embedder. The baseline is the same model embedding
the same number of texts in batches of 64 (``Embedder.embed``, no cache) in this process; the
ratio import rate / embedder rate is the figure to read (the issue asks for >= 0.9). Peak
resident memory of the import process is printed too.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import engram.embed
from engram.config import load_settings
from engram.engine import Engram

VOCAB = Path(engram.embed.__file__).with_name("data") / "minilm-vocab.txt"


def texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    words = [w for w in VOCAB.read_text().split() if w.isalpha() and len(w) > 2]
    return [" ".join(rng.choice(words) for _ in range(20)) + f" ({i})" for i in range(n)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=5000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        source = Engram.from_settings(load_settings(home=Path(tmp) / "source"))
        embedder, source.embedder = source.embedder, None  # the snapshot carries no vectors
        source.remember_many([{"content": t} for t in texts(args.memories, 1)])
        snapshot = Path(tmp) / "snapshot.json"
        snapshot.write_text(source.export_snapshot())
        source.close()
        if embedder is None:
            raise SystemExit("no embedder is configured: nothing to compare the import with")
        raw_texts = texts(args.memories, 2)
        embedder.embed(raw_texts[:64])  # load the model before timing
        started = time.perf_counter()
        for i in range(0, len(raw_texts), 64):
            embedder.embed(raw_texts[i:i + 64])
        raw_rate = len(raw_texts) / (time.perf_counter() - started)
        env = {**os.environ, "ENGRAM_HOME": str(Path(tmp) / "target")}
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "engram", "--json", "import", str(snapshot)], env=env,
                              capture_output=True, text=True, timeout=7200)
        elapsed = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit(done.stderr[-2000:])
        imported = json.loads(done.stdout)["imported"]
    rate = imported / elapsed
    out = {"memories": args.memories, "imported": imported, "import_s": elapsed, "import_per_s": rate,
           "embedder_batch64_per_s": raw_rate, "ratio_to_embedder": rate / raw_rate,
           "peak_child_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}
    if args.json:
        print(json.dumps(out, indent=2))
        return
    print(f"engram import of a {args.memories}-memory snapshot (fresh process, local model)")
    print(f"  import            {rate:8.1f} memories/s ({elapsed:.1f} s, process start and model load included)")
    print(f"  embedder alone    {raw_rate:8.1f} texts/s (batches of 64, same run)")
    print(f"  ratio             {rate / raw_rate:8.2f}")
    print(f"  peak RSS (import) {out['peak_child_rss_mb']:8.0f} MB")


if __name__ == "__main__":
    main()
