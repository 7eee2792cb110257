"""A property-based run of the served OpenAPI schema (schemathesis) over every operation, with a
valid token and without one: no input makes a 5xx (issue 15's fuzz suite; bounded by
``--max-examples`` and a fixed seed, so it runs in CI in the same time every run)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.interfaces.conftest import Served


@pytest.mark.parametrize("auth", [True, False], ids=["with-token", "without-token"])
def test_no_server_errors(served: Served, tmp_path: Path, auth: bool) -> None:
    cli = shutil.which("schemathesis", path=str(Path(sys.executable).parent)) or shutil.which("schemathesis")
    assert cli, "schemathesis is a dev dependency: pip install -e '.[dev]'"
    args = [cli, "run", f"{served.url}/openapi.json", "--checks", "not_a_server_error",
            "--max-examples", "8", "--seed", "7", "--workers", "1", "--phases", "examples,fuzzing"]
    if auth:
        args += ["--header", f"Authorization: Bearer {served.alice}"]
    env = dict(os.environ, SCHEMATHESIS_HOOKS="", NO_COLOR="1")
    run = subprocess.run(args, capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    operations = len(served_operations(served))
    tested = re.search(r"(\d+) (?:selected|total)", run.stdout)
    assert operations > 20 and (tested is None or int(tested.group(1)) >= operations), run.stdout[-3000:]


def served_operations(served: Served) -> list[tuple[str, str]]:
    import httpx

    schema = httpx.get(f"{served.url}/openapi.json", timeout=30).json()
    return [(method, path) for path, item in schema["paths"].items() for method in item]
