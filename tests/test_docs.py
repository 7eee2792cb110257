"""The README tells the truth: its commands exist, its settings exist, its Python example runs."""

from __future__ import annotations

import re
from pathlib import Path

from engram.config import RecallSettings, Settings
from engram.interfaces.cli.app import app

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


def _cli_commands() -> set[str]:
    import typer.main

    group = typer.main.get_command(app)
    return set(group.commands)  # type: ignore[attr-defined]


def test_every_cli_command_is_documented() -> None:
    for command in _cli_commands():
        assert re.search(rf"engram {re.escape(command)}\b", README), f"`engram {command}` is not in README.md"


def test_every_setting_is_documented() -> None:
    for name in Settings.model_fields:
        if name == "recall":
            continue
        assert f"`{name}`" in README or f"`{name}` /" in README or f"/ `{name}`" in README, name
    for name in RecallSettings.model_fields:
        assert f"recall.{name}" in README, f"recall.{name}"


def test_readme_python_example_runs(isolated_home: Path, capsys) -> None:
    block = re.search(r"```python\n(.*?)```", README, re.S)
    assert block
    exec(compile(block.group(1), "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "user-prefers-python-scripting" in out
