"""engram as an installed package: its version, and install hints that name the real distribution."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path

import engram
from engram.about import DISTRIBUTION

ROOT = Path(__file__).resolve().parents[2]


def test_version_is_read_from_the_one_place_pyproject_sets_it() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert declared["name"] == DISTRIBUTION
    assert engram.__version__ == version(DISTRIBUTION) == declared["version"]
    shown = subprocess.run([sys.executable, "-m", "engram", "--version"], capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip() == f"engram {declared['version']} ({DISTRIBUTION})"


def test_missing_extra_hint_prints_the_extra_through_rich(isolated_home: Path) -> None:
    # fastapi made unimportable in a real `engram serve` process: the hint must keep "[server]",
    # which Rich used to read as markup and drop.
    launcher = (
        "import sys; sys.modules['fastapi'] = None; sys.argv = ['engram', 'serve']\n"
        "from engram.interfaces.cli.app import main; main()"
    )
    env = {**os.environ, "ENGRAM_HOME": str(isolated_home), "COLUMNS": "300"}
    run = subprocess.run([sys.executable, "-c", launcher], capture_output=True, text=True, env=env, timeout=60)
    assert run.returncode == 4, run.stderr
    assert f"pip install '{DISTRIBUTION}[server]'" in run.stderr


def test_json_is_accepted_after_the_subcommand(isolated_home: Path) -> None:
    env = {**os.environ, "ENGRAM_HOME": str(isolated_home), "ENGRAM_EMBEDDINGS__PROVIDER": "none"}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "engram", *args], capture_output=True, text=True, env=env, timeout=60)

    assert run("remember", "Project uses Python 3.12", "--key", "python-version").returncode == 0
    after = run("recall", "python", "--json")
    assert after.returncode == 0, after.stderr
    assert json.loads(after.stdout)["hits"][0]["memory"]["key"] == "python-version"
    assert json.loads(run("count", "--json").stdout) == json.loads(run("--json", "count").stdout) == {"count": 1}
    # after `--`, "--json" is the text to remember, not the option
    literal = run("remember", "--", "--json")
    assert literal.returncode == 0, literal.stderr
    listed = run("list", "--json")
    assert "--json" in [m["content"] for m in json.loads(listed.stdout)], listed.stdout
