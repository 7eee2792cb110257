"""Server commands: ``engram serve`` (HTTP API + web page + MCP over HTTP) and ``engram token
create|list|revoke``; ``engram mcp`` (MCP on stdio, ``install``) is in ``mcp.py``."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import typer

from engram.interfaces.cli import render
from engram.interfaces.cli.option_names import OptionNamingGroup
from engram.interfaces.cli.state import state

if TYPE_CHECKING:
    from engram.interfaces.http.readiness import Readiness


def _need_server_extra(feature: str) -> None:
    """Raise ``MissingDependencyError`` naming ``engram-recall[server]`` when its packages are absent."""
    import importlib.util

    from engram.errors import MissingDependencyError

    for package, module in (("mcp", "mcp"), ("fastapi", "fastapi"), ("uvicorn", "uvicorn")):
        if importlib.util.find_spec(module) is None:
            raise MissingDependencyError(feature, "server", package)


token_app = typer.Typer(help="API tokens for the HTTP API and MCP over HTTP (each bound to one agent).",
                        no_args_is_help=True, cls=OptionNamingGroup)


def serve(
    ctx: typer.Context,
    host: str | None = typer.Option(None, "--host", help="Address to listen on (default 127.0.0.1)."),
    port: int | None = typer.Option(None, "--port", help="Port (default 8765; 0 picks a free one)."),
    no_mcp: bool = typer.Option(False, "--no-mcp", help="Do not serve MCP at /mcp."),
) -> None:
    """Serve the HTTP API, the web page and MCP over HTTP; prints the page's address with a token."""
    _need_server_extra("engram serve")
    from engram.allocator import limit_arenas

    limit_arenas()  # before the server's threads: see engram/allocator.py

    from engram.interfaces.http.readiness import Readiness
    from engram.interfaces.http.serve import address, bind
    from engram.interfaces.http.starting import StartingResponder
    from engram.interfaces.logs import show_server_logs

    show_server_logs()
    st = state(ctx)
    settings = st.settings()
    server_settings = settings.server.listening_on(host, port)  # an address no socket takes: exit 2 naming it
    # Listen first: /healthz answers "starting" while the framework, the store and the app load;
    # /readyz answers 503 naming each start-up step until it is done (see readiness).
    sock = bind(server_settings.host, server_settings.port)
    base = address(sock)
    readiness = Readiness(["store", "model", *(["maintenance"] if server_settings.maintenance_interval_s > 0 else [])])
    responder = StartingResponder(sock, readiness).start()
    render.errors.print(f"engram is starting on {base}/ (/healthz answers now, /readyz once started)", highlight=False)
    try:
        # The store first, the model loading in the background from here: the framework's and
        # the MCP SDK's imports below run meanwhile. Each request acts for its token's agent, whose
        # database opens on its first request (``Engram.for_agent``): run as no agent in a home with
        # one database per agent, the server starts from the operator's reach (``root.reach_agent``)
        # and makes no database for a default agent nobody used (its page token's first request does).
        engram = st.reaching_engram(warm=True)
        from engram.interfaces.http.app import create_app
        from engram.interfaces.http.serve import make_server
        from engram.root import open_tokens

        tokens = open_tokens(settings, engram.backend)
        app = create_app(engram, tokens, server_settings, mcp=not no_mcp, readiness=readiness)
        server = make_server(app, log_level="info")
        readiness.done("store")
    except BaseException:
        responder.stop()
        sock.close()
        raise
    responder.stop()
    from engram.interfaces.http import page_token as run_token

    page_token = None
    run_token.exit_on_signals()
    try:
        tokens.revoke_orphaned_run_tokens()
        if server_settings.print_token:
            page_token, info = tokens.create_run_token(settings.agent)
            render.errors.print(f"engram is serving agent [bold]{settings.agent}[/bold]'s memory")
            render.errors.print(f"  web page:  {base}/?token={page_token}", highlight=False, soft_wrap=True)
        else:
            render.errors.print(f"  web page:  {base}/", highlight=False)
        render.errors.print(f"  API:       {base}/api/v1  (docs {base}/docs)", highlight=False)
        if not no_mcp:
            render.errors.print(f"  MCP:       {base}/mcp  (Authorization: Bearer <token>)", highlight=False)
        if server_settings.maintenance_interval_s > 0:
            render.errors.print(f"  upkeep:    due maintenance jobs checked every {server_settings.maintenance_interval_s:g} s")
        stop = threading.Event()
        threading.Thread(target=_after_listening, args=(server, engram, settings, server_settings.maintenance_interval_s,
                                                         stop, readiness), name="engram-after-listening", daemon=True).start()
        try:
            server.run(sockets=[sock])
        finally:
            stop.set()
    finally:  # every way out, signals included (see page_token)
        if page_token is not None:
            tokens.revoke(info.id)
        tokens.close()


def _after_listening(server: Any, engram: Any, settings: Any, interval_s: float, stop: threading.Event,
                     readiness: Readiness) -> None:
    """Once uvicorn serves: load the embedding model, freeze the heap built so far
    (``freeze_startup_heap``), then run due maintenance (hygiene, decay, retention, summaries,
    backups...) over the whole store every ``interval_s``; nothing of it delays the first answer.
    Each step's end (or failure) is marked in ``readiness`` (``/readyz``)."""
    from engram.interfaces.heap import freeze_startup_heap
    from engram.interfaces.seams import warm_up_in_background

    while not server.started:
        if stop.wait(0.05):
            return
    warm_up_in_background(engram, on_done=lambda error: _mark(readiness, "model", error)).join()
    freeze_startup_heap()  # the heap start-up built, the model's included, left out of full collections
    if interval_s > 0 and not stop.is_set():
        from engram.lifecycle.scheduler import run_periodically
        from engram.root import server_upkeep

        # The server serves every agent: its upkeep is the store-wide pass, whoever's page it opens.
        run_periodically(server_upkeep(engram, settings), interval_s, stop,
                         after_first=lambda error: _mark(readiness, "maintenance", error))


def _mark(readiness: Readiness, step: str, error: BaseException | None) -> None:
    if error is None:
        readiness.done(step)
    else:
        readiness.failed(step, error)


@token_app.command("create")
def token_create(
    ctx: typer.Context,
    agent: str | None = typer.Option(None, "--agent", "-a", show_default=False,
                                     help="The agent this token acts for (default: the global --agent)."),
    name: str = typer.Option("", "--name", help="A note to recognise it by."),
) -> None:
    """Create a token and print it (it is shown only once)."""
    from engram.errors import ValidationError
    st = state(ctx)
    # Never the default agent unasked: a token acts for its agent with full rights over HTTP and MCP.
    agent = agent or st.agent
    if not agent:
        raise ValidationError("agent", "not given", "--agent NAME after the command, or -a NAME before it")
    store = st.token_store()
    try:
        token, info = store.create(agent, name)
    finally:
        store.close()
    if st.as_json:
        render.emit_json({"token": token, "id": info.id, "agent": info.agent, "name": info.name})
        return
    print(token)
    render.errors.print(f"token {info.id} for agent {info.agent}: keep it secret; it is not shown again", highlight=False)


@token_app.command("list")
def token_list(
    ctx: typer.Context,
    agent: str | None = typer.Option(
        None, "--agent", "-a", help="Only this agent's tokens (default: the global --agent, else every agent's)."),
    all_: bool = typer.Option(False, "--all", help="Include revoked tokens."),
) -> None:
    """List tokens (ids and agents; never the tokens themselves)."""
    st = state(ctx)
    store = st.token_store()
    try:
        infos = store.list(agent or st.agent, include_revoked=all_)
    finally:
        store.close()
    if st.as_json:
        render.emit_json([{"id": t.id, "agent": t.agent, "name": t.name, "created_at": t.created_at,
                           "last_used_at": t.last_used_at, "revoked_at": t.revoked_at} for t in infos])
        return
    if not infos:
        whose = f" for agent {agent or st.agent}" if agent or st.agent else ""
        render.note_line(f"no tokens{whose} (" + ("" if all_ else "--all lists revoked ones too; ")
                         + "engram token create --agent NAME makes one)")
        return
    from rich.table import Table

    table = Table("id", "agent", "name", "created", "last used", "revoked")
    for t in infos:
        table.add_row(t.id, t.agent, t.name, render.when(t.created_at), render.when(t.last_used_at),
                      render.when(t.revoked_at))
    render.console.print(table)


@token_app.command("revoke")
def token_revoke(ctx: typer.Context, token_id: str = typer.Argument(..., help="Token id (or the token itself).")) -> None:
    """Revoke a token: requests using it are refused from now on."""
    st = state(ctx)
    store = st.token_store()
    try:
        info, changed = store.revoke(token_id)
    finally:
        store.close()
    if state(ctx).as_json:
        render.emit_json({"id": info.id, "agent": info.agent, "name": info.name, "revoked_at": info.revoked_at,
                          "changed": changed})
        return
    said = (f"revoked token {info.id} of agent {info.agent}" if changed else
            f"token {info.id} of agent {info.agent} was already revoked ({render.when(info.revoked_at)})")
    render.console.print(said, markup=False, highlight=False)


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
    from engram.interfaces.cli.mcp import mcp_app

    app.add_typer(mcp_app, name="mcp")
    app.add_typer(token_app, name="token")
