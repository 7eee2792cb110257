"""The code passes ruff, with the rules pyproject.toml sets: an undefined name in an annotation
(``from __future__ import annotations`` keeps it from failing at import) or an unused import
otherwise goes unnoticed until someone runs the linter by hand."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_finds_nothing() -> None:
    run = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "src", "tests", "bench", "scripts"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
