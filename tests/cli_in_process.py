"""engram's CLI run in this process (Typer's runner) against a real home folder: for tests that
drive many commands, where a subprocess each would cost a second of start-up."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from engram.interfaces.cli.app import app

runner = CliRunner()


def cli_output(home: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """``engram --home HOME ARGS...``'s output (``env``: variables set for the run); fails the test
    with that output unless it exits 0."""
    done = runner.invoke(app, ["--home", str(home), *args], env=env, catch_exceptions=False)
    assert done.exit_code == 0, done.output
    return done.output
