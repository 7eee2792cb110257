"""The progress bar of ``engram import`` for other systems' data (reading, storing, embedding)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from engram.engine import Engram
from engram.importers import ImportSummary
from engram.interfaces.cli import render
from engram.store.base import ImportResult


def import_with_progress(engram: Engram, source: str | Path | Mapping[str, str], kind: str, *,
                         keep_agents: bool, saved_memories: bool, quiet: bool) -> ImportSummary:
    # Into this agent alone (``--into-agent``): nor the operator's MEMORY.md, which every agent's prompt
    # holds (a Clawless home's notes), as over HTTP; the summary says they were skipped.
    with render.progress(f"reading {kind}", quiet=quiet) as report:
        return engram.import_from(source, kind, keep_agents=keep_agents, operator_notes=keep_agents,
                                  saved_memories=saved_memories, progress=report)


def import_snapshot_with_progress(engram: Engram, document: str | bytes, *, quiet: bool) -> ImportResult:
    """A snapshot is stored in one transaction, then embedded in batches: the bar follows the embedding."""
    with render.progress("storing", quiet=quiet) as report:
        return engram.import_snapshot(document, progress=lambda done, total: report("embedding", done, total))
