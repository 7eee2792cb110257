"""Lifecycle commands: audit, backup, restore, vacuum, maintain, summaries."""

from __future__ import annotations

import json

import typer

from engram.interfaces.cli import render
from engram.interfaces.cli.state import state
from engram.lifecycle import JOBS  # the names alone: no job is imported
from engram.text import counted

# The lifecycle modules are imported inside each command: `engram --help` needs none of them.


def audit(
    ctx: typer.Context,
    # Every action of ``audit.AUDITED`` (not imported here: `engram --help` loads no engine module).
    action: str | None = typer.Option(
        None, "--action", help="stored, updated, forgotten, linked, unlinked, imported, moved, recalled or erased."),
    memory: str | None = typer.Option(None, "--memory", "-m", help="Only entries about this memory (id or key)."),
    origin: str | None = typer.Option(None, "--origin", help="Only from this interface: library, cli, mcp, maintenance..."),
    since: str | None = typer.Option(
        None, "--since", help="At or after: a date or ISO time, epoch seconds, or a phrase (yesterday, last week)."),
    until: str | None = typer.Option(
        None, "--until", help="At or before: as --since (a day or a phrase counts whole: --until yesterday)."),
    limit: int = typer.Option(50, "--limit", "-n", help="How many entries to show, newest first."),
) -> None:
    """Show the audit trail of this agent's memories (and global ones), newest first (forgotten
    entries show what was removed)."""
    from engram.interfaces import seams

    st = state(ctx)
    rows = seams.audit(st.reading_engram()).entries(
        limit, action=action, memory=memory, origin=origin, since=since, until=until)
    if st.as_json:
        render.emit_json(rows)
        return
    if not rows:  # the trail this view reads: its agent's memories (its session's with -s) and global ones
        agent = st.reading_engram().scope.agent
        whose = f"agent {agent}'s memories or global ones" if agent else "global memories"
        filtered = any(v is not None for v in (action, memory, origin, since, until))
        render.note_line("nothing in the audit trail: " + ("no entry matches the filters" if filtered
                                                           else f"no entry about {whose}"))
        return
    from rich.table import Table

    table = Table(title="audit")
    for column in ("when", "action", "origin", "memory", "scope", "reason", "detail"):
        table.add_column(column, overflow="fold")
    for r in rows:
        detail = (r.detail or {}).get("content") or json.dumps(r.detail or {}, ensure_ascii=False)
        if r.action == "recalled" and r.detail:  # the query, then what came back
            # An erased memory's hit keeps its id only (``audit.erased``).
            found = ", ".join(f"{hit['key'] or hit['id']} {hit['score']:.2f}" for hit in r.detail.get("results", []))
            detail = f"{r.detail.get('query')!r} -> {found or 'nothing'}"
        elif r.action == "moved" and r.detail:  # where from, where to
            detail = f"{r.detail.get('from')} -> {r.detail.get('to')}"
            if r.detail.get("previous_key"):
                detail += f" (key was {r.detail['previous_key']})"
        elif r.detail and r.detail.get("changed") is not None:  # an update: what changed, then the content
            detail = f"changed {', '.join(r.detail['changed']) or 'nothing'}: {detail}"
        # Stored text (keys, reasons, contents) as it is: no markup read.
        table.add_row(render.when(r.at), r.action, r.origin, render.cell(r.memory_key or r.memory_id or ""),
                      r.memory_scope or "", render.cell(r.reason or ""), render.cell(str(detail)[:200]))
    render.console.print(table)


_ALL_AGENTS_HELP = ("Act as the operator (every agent's data), even when an agent is set in ENGRAM_AGENT or the"
                    " config file.")


def backup(
    ctx: typer.Context,
    list_only: bool = typer.Option(False, "--list", help="List backups instead of taking one."),
    all_agents: bool = typer.Option(False, "--all-agents", help=_ALL_AGENTS_HELP),
) -> None:
    """Take a backup now (writers may keep running), or list backups. With per_agent_databases,
    run as no agent (or with --all-agents: the operator), every agent's database is backed up, and
    --list lists every agent's backups, each with its agent."""
    from engram.agent_care import agent_backups, take_backups

    st = state(ctx)
    st.refuse_all_agents_beside_a_view(all_agents, "backs up every agent's database", "that agent's database")
    if list_only:
        every = agent_backups(st.settings(), all_agents=all_agents)
        found = [(agent, b) for agent, backups in every for b in backups.list()]
        if st.as_json:
            render.emit_json([{"path": str(b.path), "created_at": b.created_at, "reason": b.reason,
                               "size_bytes": b.size_bytes, "agent": agent} for agent, b in found])
            return
        for agent, b in found:
            whose = "" if agent is None else f"{agent:<12} "
            render.console.print(f"{render.when(b.created_at)}  {whose}{b.reason:<16} {b.size_bytes:>10}  {b.path}",
                                 highlight=False)
        if not found:
            render.note_line(f"no backups in {', '.join(str(backups.folder) for _, backups in every)}")
        return
    taken = take_backups(st.reaching_engram(all_agents=all_agents), st.settings(), all_agents=all_agents)
    if st.as_json:
        shown = [{"path": str(info.path), "size_bytes": info.size_bytes, "agent": agent} for agent, info in taken]
        # One database: its backup, as before; one per agent (per_agent_databases): each agent's too.
        render.emit_json(shown[0] if len(shown) == 1 else {**shown[0], "agent_databases": shown[1:]})
        return
    keep = st.settings().lifecycle.backup.keep
    for agent, info in taken:
        whose = "" if agent is None or len(taken) == 1 else f"agent {agent}'s "
        render.console.print(f"{whose}backup written: {info.path} ({info.size_bytes} bytes; keeping {keep})",
                             highlight=False)


def restore(
    ctx: typer.Context,
    backup_ref: str | None = typer.Argument(None, help="Backup file (path or name); default: the newest."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
    all_agents: bool = typer.Option(False, "--all-agents", help=_ALL_AGENTS_HELP),
) -> None:
    """Replace the database with a backup (the current one is backed up, or moved aside if damaged).
    Run as an agent, a backup (or a database) holding another agent's memories or conversations
    is refused; run as no agent, or with --all-agents (the operator), any backup is restored, with
    per_agent_databases into the database of the agent whose backups folder holds it, or whose
    data it holds."""
    from engram.agent_care import restore_choice

    st = state(ctx)
    st.refuse_all_agents_beside_a_view(all_agents, "restores as the operator", "a backup of that agent's alone")
    backups, chosen, agent = restore_choice(st.settings(), backup_ref, all_agents=all_agents)
    backups.refuse_other_agents(chosen, agent)  # before asking: a refused restore asks nothing
    # (asked on standard error: standard output holds the result alone, the answer piped in or not)
    if not yes and not render.confirmed(f"replace {backups.db_path} with {chosen.path}?"):
        render.declined(f"nothing restored into {backups.db_path}")  # exit 0: declining is no failure
        if st.as_json:
            render.emit_json({"restored": None, "database": str(backups.db_path)})
        return
    st.close()  # the live file must not be open in this process
    used = backups.restore(chosen.path, agent=agent)
    if st.as_json:
        render.emit_json({"restored": str(used.path), "database": str(backups.db_path)})
    else:
        render.console.print(f"restored {backups.db_path} from {used.path}", highlight=False)


def vacuum(
    ctx: typer.Context,
    all_agents: bool = typer.Option(False, "--all-agents", help=_ALL_AGENTS_HELP),
) -> None:
    """Rebuild the database file to reclaim free space, and the embedding cache file when there is
    one. With per_agent_databases, run as no agent (or with --all-agents: the operator), every
    agent's database is rebuilt."""
    from engram.agent_care import vacuum_databases
    from engram.lifecycle.backup import vacuum_embedding_cache

    st = state(ctx)
    st.refuse_all_agents_beside_a_view(all_agents, "rebuilds every agent's database", "that agent's database")
    engram = st.reaching_engram(all_agents=all_agents)
    done = vacuum_databases(engram, st.settings(), all_agents=all_agents)
    cache = vacuum_embedding_cache(engram)
    if st.as_json:
        shown = [{"before_bytes": before, "after_bytes": after, "agent": agent} for agent, before, after in done]
        # One database: its sizes, as before; one per agent (per_agent_databases): each agent's too.
        out = ({k: v for k, v in shown[0].items() if k != "agent"} if len(shown) == 1
               else {**shown[0], "agent_databases": shown[1:]})
        if cache is not None:
            out["embedding_cache"] = {"before_bytes": cache[0], "after_bytes": cache[1]}
        render.emit_json(out)
        return
    for agent, before, after in done:
        whose = "" if agent is None or len(done) == 1 else f"agent {agent}'s database "
        render.console.print(f"{whose}vacuumed: {before} -> {after} bytes", highlight=False)
    if cache is not None:
        render.console.print(f"embedding cache vacuumed: {cache[0]} -> {cache[1]} bytes", highlight=False)


def maintain(
    ctx: typer.Context,
    job: list[str] | None = typer.Option(None, "--job", "-j",
                                         help=f"Only this job (repeatable): {', '.join(JOBS)}."),
    force: bool = typer.Option(False, "--force", help="Run the jobs even when they are not due."),
    all_agents: bool = typer.Option(
        False, "--all-agents", help="Maintain the whole store (every agent and global), even when an agent is "
                                    "set in ENGRAM_AGENT or the config file."),
) -> None:
    """Run every due lifecycle job once (--job names them). With --agent (or --session: a session
    of that agent, or of the default one), only that agent's memories are maintained (global ones
    and other agents' are left alone); with neither, or with --all-agents, the whole store. Backup
    and vacuum always work on the whole database file."""
    from engram.root import maintenance_passes

    st = state(ctx)
    st.refuse_all_agents_beside_a_view(all_agents, "maintains every agent", "that agent's memories")
    engram = st.reaching_engram(all_agents=all_agents)
    passes = maintenance_passes(engram, st.settings(), all_agents=all_agents)
    reports = []
    for database, maintenance in passes:
        maintenance.engram.origin = "maintenance"
        with render.progress("maintaining" if database is None else f"maintaining {database}'s database",
                             quiet=st.as_json) as progress:
            reports.append((database, maintenance.run(only=job or None, force=force, progress=progress)))
    if st.as_json:
        shown = [{"agent": report.agent, "store_wide": report.agent is None, "database_of": database,
                  "ran": [{"job": r.job, "removed": [m.to_dict() for m in r.removed], "changed": r.changed,
                           "notes": list(r.notes)} for r in report.ran], "skipped": report.skipped}
                 for database, report in reports]
        # One database: its report, as before; one per agent (per_agent_databases): each agent's too.
        render.emit_json(shown[0] if len(shown) == 1 else {**shown[0], "agent_databases": shown[1:]})
        return
    for database, report in reports:
        if database is not None:
            render.console.print(f"[dim]agent {database}'s own database:[/dim]")
        if report.agent is None:
            render.console.print("[dim]maintaining the whole store: every agent and global[/dim]")
        else:
            render.console.print(f"[dim]maintaining agent {report.agent}'s memories (global and other agents' "
                                 "are left alone)[/dim]")
        for r in report.ran:
            render.console.print(r.line())
        for name, why in report.skipped.items():
            render.console.print(f"[dim]{name}: skipped ({why})[/dim]")


def summaries(
    ctx: typer.Context,
    period: str | None = typer.Option(None, "--period", help="daily or weekly."),
    limit: int = typer.Option(20, "--limit", "-n", help="How many summaries to show, newest first."),
    make: bool = typer.Option(False, "--make",
                              help="Create missing summaries of ended periods first (of --period alone when given)."),
) -> None:
    """List daily/weekly summaries of this agent's memories (newest first)."""
    from engram.interfaces import present
    from engram.lifecycle import summaries as summaries_job

    st = state(ctx)
    with present.wire_names({"period_type": "--period"}):  # the engine's word for what --period fills
        # Without --make only read: an agent with no database yet (one per agent) gets none made.
        found = summaries_job.list_summaries(st.engram() if make else st.reading_engram(), period, limit,
                                             make=st.settings().lifecycle.summaries if make else None)
    if st.as_json:
        render.emit_json(found)
        return
    for m in found:
        meta = m.metadata
        render.console.print(f"[bold]{m.key}[/bold] ({counted(meta.get('source_memory_count'), 'memory')}, {meta.get('method')})")
        render.console.print(m.content)
    if not found and make:
        # Only ended periods are summarised: memories stored today wait for the day to end.
        render.note_line("no summaries yet: no ended period holds memories (the current one is summarised once it ends)")
    elif not found:
        render.note_line("no summaries yet (run `engram maintain` or `engram summaries --make`)")


def register(app: typer.Typer) -> None:
    for fn, name in ((audit, "audit"), (backup, "backup"), (restore, "restore"), (vacuum, "vacuum"),
                     (maintain, "maintain"), (summaries, "summaries")):
        app.command(name)(fn)
