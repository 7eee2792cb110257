"""The CLI run in-process against a home, as the importer tests drive it: ``run`` returns its
output (asserting its exit code), ``as_json`` the document ``--json`` prints."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from engram.interfaces.cli.app import app

runner = CliRunner()


def run(home: Path, *args: str, code: int = 0) -> str:
    result = runner.invoke(app, ["--home", str(home), *args], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


def as_json(home: Path, *args: str) -> object:
    return json.loads(run(home, "--json", *args))
