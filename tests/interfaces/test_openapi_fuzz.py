"""A property-based run of the served OpenAPI schema (schemathesis): no input makes a 5xx."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import httpx

from tests.interfaces.conftest import Served

# These answer 501 until the history store, audit trail and semantic conversation store are merged.
SEAMS = r"^/api/v1/(history|audit)|^/api/memory/semantic-recall"


def test_no_server_errors(served: Served) -> None:
    cli = shutil.which("schemathesis", path=str(Path(sys.executable).parent)) or shutil.which("schemathesis")
    assert cli, "schemathesis is a dev dependency: pip install -e '.[dev]'"
    with httpx.Client(base_url=served.url, headers={"Authorization": f"Bearer {served.alice}"}) as c:
        unavailable = c.get("/api/v1/audit").status_code == 501
    args = [cli, "run", f"{served.url}/openapi.json", "--checks", "not_a_server_error",
            "--header", f"Authorization: Bearer {served.alice}", "--max-examples", "8", "--seed", "7",
            "--workers", "1", "--phases", "examples,fuzzing"]
    if unavailable:
        args += ["--exclude-path-regex", SEAMS]
    env = dict(os.environ, SCHEMATHESIS_HOOKS="", NO_COLOR="1")
    run = subprocess.run(args, capture_output=True, text=True, timeout=300, env=env)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
