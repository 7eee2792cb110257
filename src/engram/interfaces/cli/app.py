"""The ``engram`` command: global options, command groups, and the one place errors become exit codes.

Exit codes (docs/cli.md): 0 ok, 1 storage/provider failure, 2 bad input, 3 not found, 4 configuration
(an encryption key that does not open the database included: ``EncryptionKeyError`` is a ``ConfigError``).
"""

from __future__ import annotations

import sys

import typer

from engram.about import DISTRIBUTION, current_version
from engram.errors import ConfigError, EngramError, NotFoundError, ValidationError
from engram.interfaces.cli import chat, configuration, files, history, lifecycle, memory, migrate, parsing, render, server, start
from engram.interfaces.cli.option_names import OptionNamingGroup
from engram.interfaces.cli.state import CliState

app = typer.Typer(
    name="engram",
    help="Long-term memory for LLM agents: remember, recall, forget, link - on one local SQLite file.",
    no_args_is_help=True,
    # --install-completion / --show-completion (bash, zsh, fish, PowerShell)
    pretty_exceptions_enable=False,
    cls=OptionNamingGroup,  # an error names the option typed (--category), for every command
)


def _print_version(value: bool) -> None:
    if value:
        print(f"engram {current_version()} ({DISTRIBUTION})")
        raise typer.Exit()


@app.callback()
def _global_options(
    ctx: typer.Context,
    # Paths read as text (``parsing.path_option``): the raw string tells an empty one from ``.``.
    home: str | None = typer.Option(None, "--home", help="Data folder (default $ENGRAM_HOME, else ~/.engram)."),
    config: str | None = typer.Option(None, "--config", help="Config file, as ENGRAM_CONFIG (default: config.toml, "
                                       ".yaml, .yml or .json in the data folder); engram's keys or another system's."),
    agent: str | None = typer.Option(None, "--agent", "-a", help="Agent whose memory to use (default: default)."),
    session: str | None = typer.Option(None, "--session", "-s", help="Session of the agent (sees session + agent + global)."),
    backend: str | None = typer.Option(
        None, "--backend", help="sqlite (default), jsonfile, inmemory, disabled or postgres (with database_url)."),
    as_json: bool = typer.Option(False, "--json", help="Print machine-readable JSON."),
    _version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                  help="Print the version and exit."),
) -> None:
    home_path = parsing.path_option(home, "--home", "a folder path; leave --home out for $ENGRAM_HOME, else ~/.engram")
    config_path = parsing.path_option(config, "--config", parsing.CONFIG_ALLOWED)
    ctx.obj = CliState(home=home_path, config=config_path, agent=agent, session=session,
                       backend=backend, as_json=as_json)
    ctx.call_on_close(ctx.obj.close)
    start.command_begins()


memory.register(app)
history.register(app)
files.register(app)
chat.register(app)
lifecycle.register(app)
migrate.register(app)
server.register(app)
configuration.register(app)

def hoist_json(argv: list[str]) -> list[str]:
    """``--json`` is a global option, and users also write it after the subcommand (``engram
    recall words --json``): move it to the front. Words after ``--`` are content, never options."""
    end = argv.index("--") if "--" in argv else len(argv)
    if "--json" not in argv[:end]:
        return argv
    return ["--json", *(a for a in argv[:end] if a != "--json"), *argv[end:]]


_EXIT_CODES: list[tuple[type[EngramError], int]] = [
    (ValidationError, 2),
    (NotFoundError, 3),
    (ConfigError, 4),
]


def exit_code(exc: EngramError) -> int:
    """The exit code for an engram error (docs/cli.md): 2 bad input, 3 not found, 4 configuration,
    1 anything else (storage, provider)."""
    return next((code for kind, code in _EXIT_CODES if isinstance(exc, kind)), 1)


def main() -> None:
    """Entry point: run the app (usage errors are the parser's: exit 2 with usage), turning engram
    errors into a message and an exit code, and anything unexpected into one line, not a traceback."""
    from engram.interfaces.logs import show_command_warnings

    try:
        show_command_warnings()
        app(args=hoist_json(sys.argv[1:]), prog_name="engram")
    except KeyboardInterrupt:  # outside the app (typer turns one within it into exit 130)
        if start.nothing_done():
            start.stopped_early()
        raise
    except SystemExit as exc:
        # 130: typer's word for an interrupt. Stopped before the command did anything, say so
        # (a command stopped later says what it did and did not do, or stays silent, as before).
        if exc.code == 130 and start.nothing_done():
            start.stopped_early()
        raise
    except EngramError as exc:
        render.errors.print(f"[red]error:[/red] {render.markup_safe(exc)}", highlight=False)
        sys.exit(exit_code(exc))
    except Exception as exc:  # the edge: anything unexpected is reported, not dumped
        render.errors.print(f"[red]internal error:[/red] {type(exc).__name__}: {render.markup_safe(exc)}", highlight=False)
        sys.exit(1)
