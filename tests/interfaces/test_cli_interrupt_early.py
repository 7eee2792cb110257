"""A Ctrl-C in a command's first second (importing the app, reading its options, opening the store)
said nothing and exited 130, or printed Python's traceback while the app imported: it says that
nothing was done now, on standard error, and exits 130 (``interfaces/cli/start.py``). Real
``python -m engram`` processes and a real SIGINT, sent when the child's own ``-X importtime`` lines
show it has reached the stage under test."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engram.interfaces.cli.start import STOPPED_EARLY

# A run started from a background job inherits SIGINT ignored: a terminal's Ctrl-C reaches a
# command whose SIGINT is at its default (as tests/interfaces/test_cli_scripting.py's).
AS_AT_A_TERMINAL = {"preexec_fn": lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)}


def interrupted_once_imported(home: Path, module: str, *args: str) -> tuple[int, str, str]:
    """Run ``engram ARGS``, send SIGINT as soon as ``module`` has been imported; exit code, stdout,
    and stderr without the import-time lines."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env.update(ENGRAM_HOME=str(home), ENGRAM_EMBEDDINGS__PROVIDER="none", PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-X", "importtime", "-m", "engram", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, **AS_AT_A_TERMINAL)
    assert proc.stderr is not None
    deadline = time.monotonic() + 60
    seen = []
    while time.monotonic() < deadline:
        line = proc.stderr.readline().decode()
        assert line, f"the child ended before importing {module}: {''.join(seen)[-2000:]}"
        seen.append(line)
        if line.rstrip().endswith(f"| {module}") or line.rstrip().endswith(f" {module}"):
            break
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    said = "".join(seen) + stderr.decode()
    return proc.returncode, stdout.decode(), "".join(line for line in said.splitlines(keepends=True)
                                                     if not line.startswith("import time:"))


def test_a_ctrl_c_while_the_app_imports_says_nothing_was_done(tmp_path: Path) -> None:
    # The entry point is running and importing the app: typer is in, every command still to come.
    # This printed a KeyboardInterrupt traceback and died of the signal.
    code, stdout, stderr = interrupted_once_imported(tmp_path, "typer", "count")
    assert (code, stdout, stderr) == (130, "", f"{STOPPED_EARLY}\n")
    assert not (tmp_path / "memory.db").exists()


def test_a_ctrl_c_while_the_store_opens_says_nothing_was_done_and_leaves_it_whole(tmp_path: Path) -> None:
    # A fresh home: the store is being made and migrated when the interrupt comes.
    code, stdout, stderr = interrupted_once_imported(tmp_path, "engram.db.migrate", "remember", "kept anyway?")
    assert (code, stdout, stderr) == (130, "", f"{STOPPED_EARLY}\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env.update(ENGRAM_HOME=str(tmp_path), ENGRAM_EMBEDDINGS__PROVIDER="none")
    after = subprocess.run([sys.executable, "-m", "engram", "count"], capture_output=True, text=True, env=env,
                           timeout=120)
    assert (after.returncode, after.stdout, after.stderr) == (0, "0\n", "")


@pytest.mark.parametrize("module", ["typer", "engram.db.migrate"])
def test_a_second_run_after_an_early_stop_works(tmp_path: Path, module: str) -> None:
    interrupted_once_imported(tmp_path, module, "count")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env.update(ENGRAM_HOME=str(tmp_path), ENGRAM_EMBEDDINGS__PROVIDER="none")
    done = subprocess.run([sys.executable, "-m", "engram", "remember", "written after the stop"], capture_output=True,
                          text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    again = subprocess.run([sys.executable, "-m", "engram", "count"], capture_output=True, text=True, env=env, timeout=120)
    assert again.stdout == "1\n", again.stderr


@pytest.mark.parametrize("args", [("token", "create", "--agent", "bob"), ("token", "list"),
                                  ("mcp", "install", "--client", "claude-desktop", "--config", "{home}/claude.json"),
                                  ("config", "show")])
def test_a_ctrl_c_while_a_command_without_an_engine_starts_says_nothing_was_done(tmp_path: Path,
                                                                                  args: tuple[str, ...]) -> None:
    # These commands open no engine: reading the settings (importing engram.config is most of it)
    # and opening the token store never counted as starting up, and a Ctrl-C then exited 130
    # silently. Stopped once the settings have begun to be read: engram.config has far to go.
    code, stdout, stderr = interrupted_once_imported(tmp_path, "pydantic_settings",
                                                     *(a.format(home=tmp_path) for a in args))
    assert (code, stdout, stderr) == (130, "", f"{STOPPED_EARLY}\n")
    assert not (tmp_path / "claude.json").exists()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env.update(ENGRAM_HOME=str(tmp_path), ENGRAM_EMBEDDINGS__PROVIDER="none")
    tokens = subprocess.run([sys.executable, "-m", "engram", "--json", "token", "list"], capture_output=True,
                            text=True, env=env, timeout=120)
    assert (tokens.returncode, tokens.stdout.strip(), tokens.stderr) == (0, "[]", "")


def test_a_ctrl_c_after_the_settings_are_read_still_counts_the_store_opening_as_starting(tmp_path: Path) -> None:
    # A command that reads the settings before its engine (engram sync asks them whose folders it
    # reports) still counts that engine's opening as starting: a fresh home's store is being migrated.
    code, stdout, stderr = interrupted_once_imported(tmp_path, "engram.db.migrate", "sync")
    assert (code, stdout, stderr) == (130, "", f"{STOPPED_EARLY}\n")
