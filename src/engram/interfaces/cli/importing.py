"""The progress bar of ``engram import`` for other systems' data (reading, storing, embedding)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from engram.engine import Engram
from engram.importers import ImportSummary
from engram.interfaces.cli import render
from engram.store.base import ImportResult


def import_with_progress(engram: Engram, source: str | Path | Mapping[str, str], kind: str, *,
                         keep_agents: bool, quiet: bool) -> ImportSummary:
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=render.errors, transient=True, disable=quiet) as bar:
        task = bar.add_task(f"reading {kind}", total=None)

        def progress(phase: str, done: int, total: int) -> None:
            bar.update(task, description=phase, completed=done, total=total or None)

        return engram.import_from(source, kind, keep_agents=keep_agents, progress=progress)


def import_snapshot_with_progress(engram: Engram, document: str | bytes, *, quiet: bool) -> ImportResult:
    """A snapshot is stored in one transaction, then embedded in batches: the bar follows the embedding."""
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=render.errors, transient=True, disable=quiet) as bar:
        task = bar.add_task("storing", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, description="embedding", completed=done, total=total)

        return engram.import_snapshot(document, progress=progress)
