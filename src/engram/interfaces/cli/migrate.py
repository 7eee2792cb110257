"""``engram migrate [--to postgresql://…]``: copy the SQLite store (memories, history, audit, tokens) into
PostgreSQL, and its maintenance schedule to where a store on that database keeps it. With
``per_agent_databases`` and no ``--from``: every agent's database and the shared files, one after another.
``engram migrate --from postgresql://… [--to FILE]``: the copy back, into one SQLite file (``db.transfer_back``), with
the schedule and the memory folder's sync state (``root.migrate_from_postgres``)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from engram.errors import ValidationError
from engram.interfaces.cli import parsing, render
from engram.interfaces.cli.render import emit_json
from engram.interfaces.cli.state import state

if TYPE_CHECKING:
    from engram.db.transfer import TransferReport


def migrate(
    ctx: typer.Context,
    to: str | None = typer.Option(
        None, "--to", help="PostgreSQL URL (postgresql://user:password@host/db; default: the configured database_url,"
                           " as ENGRAM_DATABASE_URL); with --from a URL, the SQLite file to copy back into (default:"
                           " the configured file, path or home/memory.db)."),
    source_text: str | None = typer.Option(
        None, "--from", metavar="PATH|URL", help="SQLite file (default: the configured file, path or home/memory.db; with"
                             " per_agent_databases, every agent's database and the shared home/memory.db and home/auth.db);"
                             " a PostgreSQL URL copies that database back into an SQLite file (--to)."),
) -> None:
    """Copy memories, links, versions, vectors, history, audit trail, tokens and the maintenance schedule into
    PostgreSQL (--to, else the configured database_url), and hand it the memory folder's sync state;
    verify; re-run to resume. --from postgresql://… copies all of them back into an SQLite file and hands
    it the sync state."""
    from engram.db.transfer import require_verified
    from engram.root import agent_database_path, migrate_every_file, migrate_to_postgres, migration_target

    cli = state(ctx)
    if source_text is not None and ("://" in source_text or _key_value_dsn(source_text)):
        # A database URL: the copy back out of PostgreSQL (read as a path, it was echoed back,
        # password included, as "postgresql:/user:secret@host/db does not exist"); libpq's
        # key=value form too, as --to takes it.
        _migrate_back(ctx, source_text, to)
        return
    # Read as text (``parsing.path_option``, as --home and --config): typer made an empty --from the Path of ".".
    source = parsing.path_option(source_text, "--from", "engram's SQLite file to copy, or a PostgreSQL URL to copy back"
                                 " from; leave --from out for the configured file")
    if source is not None:  # named by the option typed (exit 2), as import's path: the copy's own check names no option
        parsing.existing_path("--from", source, "engram's SQLite file to copy", stdin=False)
    settings = cli.settings()
    named = None if to is None else "--to"  # else the setting, and where it was set
    to = migration_target(settings, to)
    every_file = source is None and settings.per_agent_databases

    def run(progress: Any = None, on_file: Any = None) -> list[TransferReport]:
        if every_file:
            return migrate_every_file(settings, to, progress=progress, on_file=on_file, named=named)
        return [migrate_to_postgres(settings, source or agent_database_path(settings), to, progress=progress,
                                    named=named)]

    reports = _with_progress(cli.as_json, run)
    # A file refused or not verified is an error: standard output stays empty and the error, which
    # names each such file and why, is the one line on standard error (docs/cli.md), as for every
    # command; the files that did go stay copied, and a re-run reports them already copied.
    require_verified(*reports)
    if cli.as_json:
        shown = [_as_json(report) for report in reports]
        emit_json({"target": reports[0].target if reports else None, "verified": all(r.verified for r in reports),
                   "files": shown} if every_file else shown[0])
    else:
        for report in reports:
            _print(report)


def _key_value_dsn(text: str) -> bool:
    """``text`` is libpq's key=value form (``host=db dbname=engram password=...``) and no such file
    exists: a database to copy back from, as ``--to`` reads it."""
    return re.match(r"\s*[A-Za-z_]+\s*=", text) is not None and not Path(text).exists()


def _with_progress(as_json: bool, run: Callable[..., list[TransferReport]]) -> list[TransferReport]:
    """``run(progress, on_file)`` with a bar per table on standard error (standard output holds
    the report); off a terminal or with --json, ``run()`` alone."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    if as_json or not render.errors.is_terminal:
        # No Progress at all: off a terminal rich draws no bar, but its stop() still prints an
        # empty line to stderr (as render.progress says).
        return run()
    with Progress(
        TextColumn("{task.description:<16}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=render.errors,  # stderr: stdout holds the report
    ) as bar:
        tasks: dict[str, int] = {}

        def on_file(path: Path, n: int, of: int) -> None:
            bar.console.print(f"file {n} of {of}: {path}", highlight=False)
            tasks.clear()  # each file draws its own bars

        def progress(table: str, done: int, total: int) -> None:
            if table not in tasks:
                tasks[table] = bar.add_task(table, total=total)
            bar.update(tasks[table], completed=done)

        return run(progress, on_file)


def _migrate_back(ctx: typer.Context, url: str, to: str | None) -> None:
    """``engram migrate --from postgresql://… [--to FILE]``: the copy back into one SQLite file."""
    from engram.db.pg_settings import DSN_ALLOWED, dsn_problem
    from engram.db.transfer import require_verified
    from engram.root import migrate_from_postgres

    cli = state(ctx)
    problem = dsn_problem(url)
    if problem:
        raise ValidationError("--from", problem, DSN_ALLOWED)
    if to is not None and "://" in to:
        raise ValidationError("--to", "is a database URL: a copy from PostgreSQL goes into an SQLite file",
                              "a path for engram's SQLite file; leave --to out for the configured one")
    target = parsing.path_option(to, "--to", "a path for engram's SQLite file; leave --to out for the configured one")
    settings = cli.settings()

    def run(progress: Any = None, on_file: Any = None) -> list[TransferReport]:
        return [migrate_from_postgres(settings, url, target, progress, named="--from")]

    reports = _with_progress(cli.as_json, run)
    require_verified(*reports)
    if cli.as_json:
        emit_json(_as_json(reports[0]))
    else:
        _print(reports[0])


def _as_json(report: TransferReport) -> dict[str, Any]:
    return {
        "source": report.source, "target": report.target, "verified": report.verified, "refused": report.refused,
        "unknown_tables": report.unknown_tables, "embedding_identity": report.embedding_identity,
        "schedule": report.schedule, "sync_state": report.sync_state, "audit_offset": report.audit_offset,
        "resolved": report.resolved, "already_copied": report.already_copied, "changed_since": report.changed_since,
        "tables": {name: {**t.__dict__, "verified": t.verified} for name, t in report.tables.items()},
    }


def _print(report: TransferReport) -> None:
    from rich.table import Table

    if report.already_copied:
        render.console.print(f"{report.source} → {report.target}: already copied on {report.already_copied},"
                             " unchanged since; nothing copied", highlight=False, markup=False)
        _print_carried(report)
        return
    # "already there": rows the target held as they are (an earlier or interrupted copy), not copied again.
    table = Table("table", "source", "copied", "already there", "target", "kept there", "checksum",
                  title=f"{report.source} → {report.target}")
    for name, t in report.tables.items():
        table.add_row(name, str(t.source), str(t.copied), str(t.skipped), str(t.target), str(t.resolved),
                      "[green]ok[/green]" if t.verified else "[red]differs[/red]")
    render.console.print(table)
    for note in report.resolved:
        render.console.print(f"settled: {note}", highlight=False, markup=False)
    if report.audit_offset:
        render.console.print(f"audit entries renumbered to follow the target's (+{report.audit_offset})", highlight=False)
    if report.unknown_tables:
        render.console.print(f"not copied (unknown to this version): {', '.join(report.unknown_tables)}")
    if report.changed_since:
        render.console.print(f"this file changed since its copy verified on {report.changed_since}: rows removed in"
                             f" {report.target} since then (forgotten, compacted, undone, revoked) may have come back",
                             highlight=False, markup=False)
    _print_carried(report)


def _print_carried(report: TransferReport) -> None:
    if report.schedule:
        render.console.print(f"maintenance schedule carried to {report.schedule}", highlight=False)
    if report.sync_state:
        render.console.print(f"memory folder's sync state handed over ({report.sync_state})", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("migrate")(migrate)
