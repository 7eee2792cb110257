"""The README tells the truth: its commands exist, its settings exist, its Python example runs."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel

from engram.config import Settings
from engram.interfaces.cli.app import app

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


def _cli_commands() -> set[str]:
    import typer.main

    group = typer.main.get_command(app)
    return set(group.commands)  # type: ignore[attr-defined]


def test_every_cli_command_is_documented() -> None:
    for command in _cli_commands():
        assert re.search(rf"engram {re.escape(command)}\b", README), f"`engram {command}` is not in README.md"


def _setting_names(model: type[BaseModel], prefix: str = "") -> list[str]:
    names = []
    for name, info in model.model_fields.items():
        annotation = info.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            names.extend(_setting_names(annotation, f"{prefix}{name}."))
        else:
            names.append(f"{prefix}{name}")
    return names


def test_every_setting_is_documented() -> None:
    for name in _setting_names(Settings):
        assert f"`{name}`" in README, f"setting `{name}` is not in README.md"


def test_readme_python_example_runs(isolated_home: Path, capsys) -> None:
    block = re.search(r"```python\n(.*?)```", README, re.S)
    assert block
    exec(compile(block.group(1), "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "user-prefers-python-scripting" in out
