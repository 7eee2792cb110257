"""How long a 1,000-memory folder takes to sync, in each direction (run: python bench/files_speed.py).

Prints wall-clock times; never asserted in tests (machines are noisy)."""

from __future__ import annotations

import random
import tempfile
import time
from pathlib import Path

from engram.engine import Engram
from engram.files.sync import FileSync

N = 1000
WORDS = "python rust memory agent recall file sync markdown yaml watcher conflict database scope tag".split()


def _timed(label: str, fn):  # noqa: ANN001, ANN202
    start = time.perf_counter()
    result = fn()
    print(f"{label:<58} {time.perf_counter() - start:7.3f} s")
    return result


def main() -> None:
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for fmt in ("markdown", "yaml"):
            with Engram.from_settings(home=root / f"{fmt}-db") as engram:
                for i in range(N):
                    words = " ".join(rng.choice(WORDS) for _ in range(12))
                    engram.remember(f"memory {i}: {words}", tags=[rng.choice(WORDS[:8])],
                                    scope="global" if i % 4 == 0 else "agent")
                syncer = FileSync(engram, root / f"{fmt}-folder", format=fmt)
                _timed(f"[{fmt}] database -> empty folder, {N} memories", syncer.sync)
                _timed(f"[{fmt}] sync pass with nothing to do", syncer.sync)
            with Engram.from_settings(home=root / f"{fmt}-fresh") as fresh:
                report = _timed(f"[{fmt}] folder -> fresh database ({N} imported with ids)",
                                FileSync(fresh, root / f"{fmt}-folder", format=fmt).sync)
                assert report.db_created == N, report
        hand = root / "hand/global"
        hand.mkdir(parents=True)
        (hand / "notes.md").write_text("# Notes\n\n" + "".join(f"- hand written note {i}\n" for i in range(N)))
        with Engram.from_settings(home=root / "hand-db") as engram:
            report = _timed(f"[markdown] {N} hand-written bullets -> database (ids written back)",
                            FileSync(engram, root / "hand").sync)
            assert report.db_created == N, report


if __name__ == "__main__":
    main()
