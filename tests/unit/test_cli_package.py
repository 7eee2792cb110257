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


def test_without_the_local_model_remember_and_recall_work_on_full_text(isolated_home: Path) -> None:
    # What a core-only install sees (the local model's runtimes unimportable), in a real process:
    # the default embeddings (auto) fall back to full text and say which extra adds the model.
    launcher = (
        "import sys\n"
        "for name in ('onnxruntime', 'torch', 'sentence_transformers'): sys.modules[name] = None\n"
        "sys.argv = ['engram', *sys.argv[1:]]\n"
        "from engram.interfaces.cli.app import main; main()"
    )
    env = {**os.environ, "ENGRAM_HOME": str(isolated_home), "COLUMNS": "300"}
    env.pop("ENGRAM_EMBEDDINGS__PROVIDER", None)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", launcher, *args], capture_output=True, text=True, env=env, timeout=60)

    stored = run("remember", "User prefers Python for scripting")
    assert stored.returncode == 0, stored.stderr
    found = run("recall", "python scripting", "--json")
    assert found.returncode == 0, found.stderr
    result = json.loads(found.stdout)
    assert result["mode"] == "text"
    assert result["hits"][0]["memory"]["content"] == "User prefers Python for scripting"
    assert any(f"pip install '{DISTRIBUTION}[local]'" in note for note in result["notes"]), result["notes"]
    human = run("recall", "python scripting")
    assert f"pip install '{DISTRIBUTION}[local]'" in human.stderr


def test_shell_completion_is_on(isolated_home: Path) -> None:
    # Typer's own switch for tests: --show-completion takes the shell named instead of finding the
    # parent shell, which a run with no shell above it (a detached CI job) has not.
    env = {**os.environ, "ENGRAM_HOME": str(isolated_home), "_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"}
    script = subprocess.run([sys.executable, "-m", "engram", "--show-completion", "bash"], capture_output=True,
                            text=True, env=env, timeout=60)
    assert script.returncode == 0 and "_ENGRAM_COMPLETE" in script.stdout, script.stderr
    env.update(_ENGRAM_COMPLETE="complete_bash", COMP_WORDS="engram rem", COMP_CWORD="1")
    words = subprocess.run([sys.executable, "-m", "engram"], capture_output=True, text=True, env=env, timeout=60)
    assert "remember" in words.stdout.split()
