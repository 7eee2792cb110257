"""``engram migrate --to postgresql://…``: copy the SQLite store (memories, history, audit, tokens) into
PostgreSQL, and its maintenance schedule to where a store on that database keeps it."""

from __future__ import annotations

from pathlib import Path

import typer

from engram.interfaces.cli import render
from engram.interfaces.cli.render import emit_json
from engram.interfaces.cli.state import state


def migrate(
    ctx: typer.Context,
    to: str = typer.Option(..., "--to", help="PostgreSQL URL (postgresql://user:password@host/db)."),
    source: Path | None = typer.Option(None, "--from", help="SQLite file (default: the configured store)."),
) -> None:
    """Copy memories, links, versions, vectors, history, audit trail, tokens and the maintenance schedule into
    PostgreSQL, and hand it the memory folder's sync state; verify; re-run to resume."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Table

    from engram.db.transfer import require_verified
    from engram.root import agent_database_path, migrate_to_postgres

    cli = state(ctx)
    settings = cli.settings()
    path = source or agent_database_path(settings)
    if cli.as_json or not render.errors.is_terminal:
        # No Progress at all: off a terminal rich draws no bar, but its stop() still prints an
        # empty line to stderr (as render.progress says).
        report = migrate_to_postgres(settings, path, to)
    else:
        with Progress(
            TextColumn("{task.description:<16}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            console=render.errors,  # stderr: stdout holds the report
        ) as bar:
            tasks: dict[str, int] = {}

            def progress(table: str, done: int, total: int) -> None:
                if table not in tasks:
                    tasks[table] = bar.add_task(table, total=total)
                bar.update(tasks[table], completed=done)

            report = migrate_to_postgres(settings, path, to, progress=progress)
    if cli.as_json:
        emit_json({
            "source": report.source, "target": report.target, "verified": report.verified,
            "unknown_tables": report.unknown_tables, "embedding_identity": report.embedding_identity,
            "schedule": report.schedule, "sync_state": report.sync_state,
            "tables": {name: {**t.__dict__, "verified": t.verified} for name, t in report.tables.items()},
        })
    else:
        table = Table("table", "source", "copied", "skipped", "target", "checksum", title=f"{report.source} → {report.target}")
        for name, t in report.tables.items():
            table.add_row(name, str(t.source), str(t.copied), str(t.skipped), str(t.target),
                          "[green]ok[/green]" if t.verified else "[red]differs[/red]")
        render.console.print(table)
        if report.unknown_tables:
            render.console.print(f"not copied (unknown to this version): {', '.join(report.unknown_tables)}")
        if report.schedule:
            render.console.print(f"maintenance schedule carried to {report.schedule}", highlight=False)
        if report.sync_state:
            render.console.print(f"memory folder's sync state handed over ({report.sync_state})", highlight=False)
    require_verified(report)


def register(app: typer.Typer) -> None:
    app.command("migrate")(migrate)
