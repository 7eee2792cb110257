"""Memory-folder commands: sync, watch, conflicts (list / resolve), and the folder forms of
export and import (called from ``memory.export`` / ``memory.import_``)."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from engram import jsondoc
from engram.errors import ValidationError
from engram.interfaces.cli import render
from engram.interfaces.cli.option_names import OptionNamingGroup
from engram.interfaces.cli.state import CliState, state
from engram.text import counted

if TYPE_CHECKING:  # the files package loads only when a files command runs
    from engram.files.every_database import EveryDatabaseSync
    from engram.files.sync import FileSync, SyncReport

conflicts_app = typer.Typer(help="List and resolve sync conflicts (the losing file text kept in .conflict files).",
                            invoke_without_command=True, no_args_is_help=False, cls=OptionNamingGroup)


def _conflicts_syncer(st: CliState, all_agents: bool, *, reading: bool = False) -> FileSync:
    """The syncer ``conflicts`` lists and resolves with, on the engine the run acts from: an agent's
    view, that agent's; the operator's run, the operator's reach (``root.reach_agent``), so that in
    a home with one database per agent it makes no database for an agent nobody used. Which
    database settles a conflict stays as it was (``conflicts.database_of``): one kept in an agent's
    folder, that agent's; one in ``global/``, this engine's, which holds the global memories as
    every agent's database does (``files.every_database``), the closing sync carrying the outcome
    to the others. ``reading``: the listing, which changes nothing (``CliState.reaching_engram``)."""
    from engram.files.sync import FileSync

    engram = st.reaching_engram(all_agents=all_agents, reading=reading)
    syncer = FileSync.from_settings(engram, engram.settings or st.settings(), reading=reading)
    syncer.log_problems = False  # every report is printed (_print_report)
    return syncer


def _every_syncer(st: CliState, all_agents: bool) -> FileSync | EveryDatabaseSync:
    """The syncer of ``sync`` / ``watch``: the operator's run reaches every agent's database in a
    home with one database per agent (``root.folder_syncer``)."""
    from engram.root import folder_syncer

    syncer = folder_syncer(st.reaching_engram(all_agents=all_agents), st.settings(), all_agents=all_agents)
    syncer.log_problems = False  # every report is printed (_print_report)
    return syncer


_ALL_AGENTS_META = "engram.conflicts.all_agents"  # the group's --all-agents, for its resolve
_ALL_AGENTS_HELP = ("Act as the operator (the whole folder, every agent's), even when an agent is set in ENGRAM_AGENT"
                    " or the config file.")


def _viewer(st: CliState, all_agents: bool = False) -> str | None:
    """The agent whose view a files command acts in; None for the operator's run (no agent
    chosen, or ``--all-agents``), which acts on the whole folder (``conflicts.in_view``)."""
    from engram.root import operators_run

    st.refuse_all_agents_beside_a_view(all_agents, "acts on every agent's folders", "that agent's folders")
    # The settings' agent, the one its engine is opened for: opening it here to ask made the database
    # of an agent with none yet (one per agent) for a listing; a bad name is refused where it opens.
    settings = st.settings()
    return None if operators_run(settings, all_agents=all_agents) else settings.agent


def _seen(report: SyncReport, viewer: str | None, syncer: FileSync | EveryDatabaseSync) -> SyncReport:
    """``report`` as this run is shown it: an agent's view hears only what its own folders met
    (``SyncReport.seen_by``); the operator's run hears all of it."""
    return report.seen_by(viewer, syncer.layout)


def _note_folder_asked_for(st: CliState, syncer: FileSync | EveryDatabaseSync) -> None:
    """The folder as this sync left it was asked for: not plain copies to warn about at each start."""
    from engram.files.wiring import note_written_on_request

    note_written_on_request(st.settings(), syncer.folder.root.rglob("*"))


def _print_report(report: SyncReport, as_json: bool) -> None:
    if as_json:
        render.emit_json({
            "to_database": {"created": report.db_created, "updated": report.db_updated, "forgotten": report.db_forgotten,
                            "moved": report.db_moved},
            "to_files": {"added": report.files_added, "updated": report.files_updated, "removed": report.files_removed,
                         "files_written": report.files_written},
            "conflicts": report.conflicts,
            "problems": [str(p) for p in report.problems],
            "backup": report.backup,
            "off": report.off,
        })
        return
    if report.off:  # nothing done: a note on standard error, as `history show`'s when history is off
        render.note_line(f"nothing synced: {report.off}")
        return
    render.console.print(f"files -> database: {report.db_created} created, {report.db_updated} updated, "
                         f"{report.db_forgotten} forgotten, {report.db_moved} moved")
    render.console.print(f"database -> files: {report.files_added} added, {report.files_updated} updated, "
                         f"{report.files_removed} removed in {len(report.files_written)} file(s)")
    if report.backup:
        render.errors.print(f"[yellow]backup:[/yellow] {report.backup}", highlight=False)
    for path in report.conflicts:
        render.errors.print(f"[yellow]conflict:[/yellow] database version kept; file version saved in {path}")
    for problem in report.problems:
        label = "skipped" if problem.skipped else "note"
        render.errors.print(f"[yellow]{label}:[/yellow] {problem}", highlight=False)


def sync(ctx: typer.Context, all_agents: bool = typer.Option(False, "--all-agents", help=_ALL_AGENTS_HELP)) -> None:
    """One two-way pass between the database and the memory folder, with a summary of each direction.
    Run as one agent, only what its own folders (global/, its agent's, its sessions') met is reported;
    run as no agent (or --all-agents) with per_agent_databases, every agent's database is synced."""
    st = state(ctx)
    viewer = _viewer(st, all_agents)
    # On a database of every agent the pass still settles the whole folder, whoever runs it: the
    # folder is the operator's copy of that database, under one sync state, and an entry copied
    # across folders (a repeated id, a link) is settled against the other folder, so a pass of one
    # agent's folders would leave the state and the other folders half-settled. Only the report is
    # narrowed to the agent's view (``_seen``). With per_agent_databases each database syncs its own
    # part, and the operator's run syncs every agent's database (``root.folder_syncer``).
    syncer = _every_syncer(st, all_agents)
    with render.progress("syncing", quiet=st.as_json) as progress:
        report = syncer.sync(progress=progress)
    _note_folder_asked_for(st, syncer)
    _print_report(_seen(report, viewer, syncer), st.as_json)


def watch(
    ctx: typer.Context,
    duration: float | None = typer.Option(None, "--duration", help="Stop after this many seconds (default: until Ctrl-C)."),
    all_agents: bool = typer.Option(False, "--all-agents", help=_ALL_AGENTS_HELP),
) -> None:
    """Keep the database and the memory folder in sync continuously (file watcher + periodic pass)."""
    from engram.files.watcher import Watcher
    from engram.model import parse_number

    if duration is not None:  # checked before the first pass writes: -1 synced once and stopped, unrefused
        duration = parse_number(duration, "duration", "a number of seconds, 0 or more", 0)
    st = state(ctx)
    viewer = _viewer(st, all_agents)
    settings = st.settings().files
    syncer = _every_syncer(st, all_agents)
    syncer.attach()
    with render.progress("syncing", quiet=st.as_json) as progress:  # the first pass takes in a whole folder
        first = _seen(syncer.sync(progress=progress), viewer, syncer)
    _print_report(first, st.as_json)
    if first.off:  # no pass will do anything: nothing to watch for
        syncer.detach()
        return
    render.errors.print(f"watching {syncer.folder.root} (Ctrl-C to stop)")

    # The periodic pass finds a file it cannot read again each time: each problem is shown once.
    shown = {str(problem) for problem in first.problems}

    def report(rep: SyncReport) -> None:
        rep = _seen(rep, viewer, syncer)
        fresh = [problem for problem in rep.problems if str(problem) not in shown]
        shown.update(str(problem) for problem in fresh)
        if rep.changed or fresh:
            _print_report(dataclasses.replace(rep, problems=fresh), st.as_json)

    deadline = None if duration is None else time.monotonic() + duration
    with Watcher(syncer, debounce_s=settings.debounce_s, poll_interval_s=settings.poll_interval_s,
                 on_report=report) as watcher:
        try:
            # Until Ctrl-C, the duration, or the folder's sync state handed to another store (engram migrate).
            while (deadline is None or time.monotonic() < deadline) and watcher.handed_over is None:
                time.sleep(0.2)
        except KeyboardInterrupt:
            pass
    syncer.detach()
    if watcher.handed_over is not None:
        raise watcher.handed_over
    _note_folder_asked_for(st, syncer)


@conflicts_app.callback()
def conflicts(ctx: typer.Context, all_agents: bool = typer.Option(False, "--all-agents", help=_ALL_AGENTS_HELP)) -> None:
    """List kept conflicts (resolve one with `engram conflicts resolve ID`). Run as an agent, only
    those in its own folders; run as no agent, or with --all-agents, every one."""
    if ctx.invoked_subcommand is not None:
        # `engram conflicts --all-agents resolve ID` means the operator's resolve, as `... resolve ID --all-agents`.
        ctx.meta[_ALL_AGENTS_META] = all_agents
        return
    st = state(ctx)
    viewer = _viewer(st, all_agents)
    syncer = _conflicts_syncer(st, all_agents, reading=True)
    if syncer.off:  # the folder left unread, as sync leaves it: its notes would be set against no memory
        if st.as_json:
            render.emit_json([])
        render.note_line(f"no conflicts listed: {syncer.off}")
        return
    from engram.files import conflicts as conflict_files

    found = conflict_files.list_conflicts(syncer.folder, syncer.fmt, max_content_chars=syncer.max_content_chars,
                                          viewer=viewer, layout=syncer.layout)
    sides = {c.path: conflict_files.database_side(syncer.engram, c, syncer.layout) for c in found}
    moved = {c.path: conflict_files.now_in(sides[c.path], c, syncer.layout, viewer=viewer) for c in found}
    if st.as_json:
        render.emit_json([{"path": c.path, "id": c.entry_id, "file": c.file, "kind": c.kind, "at": c.at,
                           "file_version": [e.content for e in c.entries], "unreadable": list(c.unreadable),
                           "memory_now_in": moved[c.path]} for c in found])
        return
    if not found:
        render.note_line("no conflicts")
        return
    for c in found:
        db = sides[c.path]
        shown = ("(another agent's memory, not shown)" if conflict_files.others_memory(db, viewer)
                 else db.content if db else "(forgotten)")
        kept = (c.entries[0].content if c.entries else f"(unreadable: {'; '.join(c.unreadable)})" if c.unreadable
                else "(deleted)")
        when = f" ({c.at})" if c.at else ""
        render.console.print(f"[bold]{c.entry_id}[/bold] {c.kind or 'unreadable'} in {c.file}{when}", highlight=False)
        render.console.print(f"  database: {shown}", highlight=False)
        if moved[c.path]:
            render.console.print(f"  {conflict_files.where_now(c, moved[c.path])}", highlight=False)
        render.console.print(f"  file:     {kept}", highlight=False)
        render.console.print(f"  kept in   {c.path}", highlight=False)


@conflicts_app.command("resolve")
def resolve(
    ctx: typer.Context,
    ref: str = typer.Argument(..., help="Entry id (or a prefix of it) or the .conflict path."),
    take: str = typer.Option("db", "--take", help="db (keep the database version), file, or merge."),
    content: str | None = typer.Option(None, "--content", help="The merged text (with --take merge)."),
    edit: bool = typer.Option(False, "--edit", help="Write the merged text in $VISUAL, else $EDITOR, else vi (--take merge)."),
    all_agents: bool = typer.Option(False, "--all-agents", help=_ALL_AGENTS_HELP),
) -> None:
    """Resolve one conflict by choosing a side or merging. Run as an agent, never one kept in another
    agent's folder nor a file version onto another agent's memory; run as no agent, or with
    --all-agents, any."""
    if take not in ("db", "file", "merge"):
        raise ValidationError("--take", f"unknown side {jsondoc.shown(take)}", ["db", "file", "merge"])
    st = state(ctx)
    all_agents = all_agents or ctx.meta.get(_ALL_AGENTS_META, False)
    viewer = _viewer(st, all_agents)
    syncer = _conflicts_syncer(st, all_agents)
    if syncer.off:  # nothing settled, the kept text left where it is, as sync leaves the folder
        if st.as_json:
            render.emit_json({"resolved": None, "done": None, "off": syncer.off})
        else:
            render.note_line(f"nothing resolved: {syncer.off}")
        return
    from engram.files import conflicts as conflict_files

    found = conflict_files.list_conflicts(syncer.folder, syncer.fmt, max_content_chars=syncer.max_content_chars)
    conflict = conflict_files.find(found, ref, viewer=viewer, layout=syncer.layout)
    if take == "merge" and content is None and edit:
        db = conflict_files.may_settle(syncer.engram, syncer.folder, conflict, take, viewer=viewer, layout=syncer.layout)
        from engram.files.merge_draft import merge_draft
        from engram.interfaces.cli.editor import edit_text

        # What is written above the draft's scissors line (``merge_draft``); nothing there is the
        # engine's refusal below, naming --content and --edit.
        draft = merge_draft(db, conflict)
        content = draft.merged(edit_text(draft.text))
    # The engine refuses a merge without text on its field ``content``, saying what it wants in its
    # own words ("the content to keep"); this door takes that text by either option, and says so.
    from engram.interfaces import present

    with present.wire_names({"content": "--content"}, accepts={"content": "--content TEXT, or --edit to write it in $EDITOR"}):
        done = conflict_files.resolve(syncer.engram, syncer.folder, conflict, take, content,  # type: ignore[arg-type]
                                      syncer.layout, viewer=viewer)
    # Reflect the outcome in the files even when no writer is attached, from the database it was
    # settled in (``conflicts.database_of``: bob's, for a conflict of agents/bob/ in the operator's run).
    settled = _every_syncer(st, all_agents)
    settled.sync()
    _note_folder_asked_for(st, settled)
    if st.as_json:
        render.emit_json({"resolved": conflict.entry_id, "done": done, "off": None})
    else:
        render.console.print(f"{conflict.entry_id}: {done}")


def export_dir(ctx: typer.Context, fmt: str, path: Path | None, *, all_agents: bool = False) -> None:
    """``engram export --format markdown|yaml|json DIR``: what this agent reads as a memory folder,
    or, run as no agent or with ``all_agents``, every memory in the store (``root.folder_export_memories``)."""
    if path is None:
        raise ValidationError("path", f"--format {fmt} writes a folder", "a folder path")
    st = state(ctx)
    st.refuse_all_agents_beside_a_view(all_agents, "exports every agent", "what that agent reads")
    files = st.settings().files
    from engram.files.export import export_folder
    from engram.files.wiring import note_written_on_request
    from engram.root import folder_export_memories, operators_run

    engram = st.reaching_engram(all_agents=all_agents, reading=True)
    store_wide = operators_run(st.settings(), all_agents=all_agents)
    memories, databases = folder_export_memories(engram, st.settings(), all_agents=all_agents)
    with render.progress(f"exporting as {fmt}", quiet=st.as_json) as report:
        done = export_folder(memories, path, format=fmt, group_by=files.group_by, max_file_bytes=files.max_file_bytes,
                             databases=databases, synced=files.synced_folder(st.settings().home),
                             progress=lambda n, total: report(f"exporting as {fmt}", n, total))
    note_written_on_request(st.settings(), done.files)  # asked for: not plain copies to warn about at each start
    scope = engram.scope
    if st.as_json:
        render.emit_json({"exported": done.memories, "format": fmt, "path": str(path),
                          "view": "store" if store_wide else "agent", "agent": None if store_wide else scope.agent,
                          "session": None if store_wide else scope.session})
        return
    whose = ("the whole store, every agent" if store_wide else
             f"what agent {scope.agent}{'' if scope.session is None else '/' + scope.session} reads")
    render.errors.print(f"exported {counted(done.memories, 'memory')} to {path} as {fmt} ({render.markup_safe(whose)})")


def import_dir(ctx: typer.Context, path: Path) -> None:
    """``engram import DIR``: memory files (markdown, YAML or per-type JSON) with a progress bar."""
    from engram.files.export import import_folder

    st = state(ctx)
    engram = st.engram()
    with render.progress("importing", quiet=st.as_json) as report:
        files = st.settings().files
        summary = import_folder(engram, path, max_file_bytes=files.max_file_bytes,
                                session_folders=files.session_folders,
                                synced=files.synced_folder(st.settings().home),
                                progress=lambda done, total, rel: report(f"importing {render.markup_safe(rel)}",
                                                                         done, total))
    if st.as_json:
        render.emit_json({"files": summary.files, "imported": summary.imported, "created": summary.created,
                          "skipped": summary.skipped, "problems": [str(p) for p in summary.problems]})
        return
    render.console.print(f"read {summary.files} file(s): imported {summary.imported} with their ids, "
                         f"created {summary.created} new, skipped {summary.skipped} already present")
    for problem in summary.problems:
        label = "skipped" if problem.skipped else "note"
        render.errors.print(f"[yellow]{label}:[/yellow] {problem}", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("sync")(sync)
    app.command("watch")(watch)
    app.add_typer(conflicts_app, name="conflicts")
