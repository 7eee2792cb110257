"""``engram mcp``: the MCP server on stdio (no subcommand), and ``engram mcp install`` which writes
an MCP client's configuration entry for it (``interfaces/mcp/install.py`` owns the formats)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from engram import jsondoc
from engram.interfaces.cli import parsing, render
from engram.interfaces.cli.option_names import OptionNamingGroup
from engram.interfaces.cli.state import state
from engram.interfaces.mcp import install as clients

mcp_app = typer.Typer(help="The MCP server on stdin/stdout (what a desktop agent launches), and its set-up.",
                      invoke_without_command=True, cls=OptionNamingGroup)


@mcp_app.callback()
def mcp(
    ctx: typer.Context,
    config: str | None = typer.Option(None, "--config", help="The config file, as the global --config "
                                       "(for launch entries that pass it after the command, as ClawCode's does)."),
) -> None:
    """Run the MCP server on stdin/stdout for --agent/--session (what a desktop agent launches)."""
    config_path = parsing.path_option(config, "--config", parsing.CONFIG_ALLOWED)
    if config_path is not None:
        state(ctx).config = config_path
    if ctx.invoked_subcommand is not None:
        return
    from engram.interfaces.cli.server import _need_server_extra

    _need_server_extra("engram mcp")
    from engram.allocator import limit_arenas

    limit_arenas()  # before the server's threads: see engram/allocator.py
    from engram.interfaces.logs import show_server_logs
    from engram.interfaces.mcp.stdio import BackgroundOpen, run_stdio

    show_server_logs()
    st = state(ctx)

    def open_engram():  # type: ignore[no-untyped-def]
        from engram.root import build_engram

        # Owned (and closed) by the stdio server, not by the CLI state; the audit trail says
        # these writes came over MCP.
        return build_engram(st.settings(), origin="mcp", warm=True)

    def open_reading():  # type: ignore[no-untyped-def]
        from engram.root import build_reading_engram

        # A session that only reads makes no database for an agent with none yet (one per agent).
        return build_reading_engram(st.settings(), origin="mcp", warm=True)

    def prepare(settings):  # type: ignore[no-untyped-def]
        from engram.root import preload_model

        return preload_model(settings)

    # Settings, model and store open in a thread once run_stdio has imported the SDK.
    unusable = run_stdio(BackgroundOpen(st.settings, open_engram, open_reading=open_reading, prepare=prepare))
    if unusable is not None:  # served as every call's error and logged at start: only the exit code is left
        from engram.interfaces.cli.app import exit_code

        raise typer.Exit(exit_code(unusable))


@mcp_app.command("install")
def install(
    ctx: typer.Context,
    client: str = typer.Option(..., "--client", "-c", help=f"One of: {', '.join(clients.CLIENTS)}."),
    print_only: bool = typer.Option(False, "--print", help="Print the entry instead of writing the file."),
    config: str | None = typer.Option(None, "--config", help="The client's config file (default: its usual place)."),
    project: bool = typer.Option(False, "--project", help="The project's file in this folder (.mcp.json, "
                                 ".cursor/mcp.json, .vscode/mcp.json) instead of the user-wide one."),
    name: str = typer.Option("engram", "--name", help="The server's name in the client's config."),
    launcher: str = typer.Option("command", "--launcher", help="command: this installed engram's absolute path; "
                                 "uvx: run the published package with uvx."),
    tools: str | None = typer.Option(None, "--tools", help="Pin server.mcp_tools for this client "
                                     "(clawcode, ptrclaw or both)."),
) -> None:
    """Add engram to an MCP client's configuration (other servers and settings are kept)."""
    from engram.errors import ValidationError

    client_config = parsing.path_option(config, "--config",
                                        "the MCP client's config file; leave --config out for its usual place")
    if launcher not in ("command", "uvx"):
        raise ValidationError("launcher", f"unknown launcher {jsondoc.shown(launcher)}", ["command", "uvx"])
    if tools is not None and tools not in ("clawcode", "ptrclaw", "both"):
        raise ValidationError("tools", f"unknown tool family {jsondoc.shown(tools)}", ["clawcode", "ptrclaw", "both"])
    st = state(ctx)
    settings = st.settings()
    server = clients.entry(client, agent=settings.agent, home=settings.home, kind=launcher,  # type: ignore[arg-type]
                           tools=tools, config=st.config)
    if print_only:
        sys.stdout.write(clients.snippet(client, name, server) + "\n")
        return
    path = client_config or clients.config_path(client, project=Path.cwd() if project else None)
    done = clients.install(client, path, name, server)
    if st.as_json:
        render.emit_json({"client": done.client, "path": str(done.path), "name": done.name, "action": done.action,
                          "entry": done.entry})
        return
    render.console.print(f"{done.action} MCP server {done.name!r} in {done.path}", markup=False, highlight=False)
    # Not markup (rich would take "[local,server]" for a style tag and drop it), never wrapped:
    # the line is meant to be copied into a shell.
    render.console.print(f"  {clients.command_line(done.entry)}", markup=False, highlight=False, soft_wrap=True)
    render.errors.print(f"restart {client} to load it", highlight=False)
