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


def source_warnings(warnings: list[str] | tuple[str, ...]) -> list[str] | tuple[str, ...]:
    """An import's warnings about its source, without those counting what the next maintenance run
    would delete (a fixture's times are long past the default limits; test_import_lifecycle_warnings
    pins those)."""
    return type(warnings)(w for w in warnings if " would be deleted by the next " not in w)
