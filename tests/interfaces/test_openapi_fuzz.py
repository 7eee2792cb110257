"""A property-based run of the served OpenAPI schema (schemathesis): no input makes a 5xx."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.interfaces.conftest import Served


def test_no_server_errors(served: Served, tmp_path: Path) -> None:
    cli = shutil.which("schemathesis", path=str(Path(sys.executable).parent)) or shutil.which("schemathesis")
    assert cli, "schemathesis is a dev dependency: pip install -e '.[dev]'"
    args = [cli, "run", f"{served.url}/openapi.json", "--checks", "not_a_server_error",
            "--header", f"Authorization: Bearer {served.alice}", "--max-examples", "8", "--seed", "7",
            "--workers", "1", "--phases", "examples,fuzzing"]
    env = dict(os.environ, SCHEMATHESIS_HOOKS="", NO_COLOR="1")
    run = subprocess.run(args, capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
