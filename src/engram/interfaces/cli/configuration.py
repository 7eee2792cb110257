"""``engram config show``: every setting engram runs with, its value and where it came from.

The settings and their sources are ``engram.config.describe_settings``'s (secrets already reduced
to set or not set there); this only renders them. A pure read: it opens no store and makes nothing
on disk, so it answers in a home that does not exist yet.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import typer

from engram.interfaces.cli import render
from engram.interfaces.cli.option_names import OptionNamingGroup
from engram.interfaces.cli.state import state

if TYPE_CHECKING:
    from engram.config_report import SettingSource

config_app = typer.Typer(help="The settings engram runs with, and where each came from.", no_args_is_help=True,
                         cls=OptionNamingGroup)


@config_app.command("show")
def show(
    ctx: typer.Context,
    changed: bool = typer.Option(False, "--changed", help="Only the settings given somewhere, not left at their default."),
) -> None:
    """Every setting (dotted names, as ENGRAM_ variables spell them), its value and where it came from:
    default, an option (--home), a variable, the config file's key, or another system's key or
    variable translated. Secrets (API keys, the encryption key, database_url) show only (set) or (not set)."""
    st = state(ctx)
    report = st.describe_settings()
    shown = report.changed() if changed else report.settings
    if st.as_json:
        render.emit_json({**report.as_dict(), "settings": {
            setting.name: {**setting.as_dict(), "from": _source(setting.source)} for setting in shown}})
        return
    found = "" if report.config_file_exists else " (none there: defaults, variables and options only)"
    render.console.print(f"config file: {report.config_file}{found}", markup=False, highlight=False)
    if not shown:
        render.note_line("every setting is at its default")
        return
    from rich.table import Table

    table = Table("setting", "value", "from")
    for setting in shown:
        table.add_row(setting.name, render.cell(_value(setting.value)), render.cell(_source(setting.source)))
    render.console.print(table)


def _value(value: Any) -> str:
    """As a config file or variable would write it: true, 0.5, ["email"]; none when unset."""
    if value is None:
        return "none"
    return value if isinstance(value, str) else json.dumps(value)


def _source(source: SettingSource) -> str:
    """An argument as the option typed on this command line (--home), else the source's own words."""
    return f"--{source.name}" if source.kind == "argument" else str(source)


def register(app: typer.Typer) -> None:
    app.add_typer(config_app, name="config")
