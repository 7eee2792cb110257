"""The HTTP server: REST API, web page and MCP over streamable HTTP in one ASGI app.

``create_app`` takes an opened ``Engram`` (the store) and a ``TokenStore``; each request acts
for the agent its bearer token is bound to (``agent_engine``), so agents never see each other's
memories. Routes are ``def`` functions: FastAPI runs them in worker threads, and SQLite access is
serialised by the store's connection lock. Nothing heavy happens at start-up.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from importlib import resources
from typing import Any

from fastapi import FastAPI
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from starlette.routing import Route

from engram.about import __version__
from engram.auth import TokenStore
from engram.engine import Engram
from engram.errors import ValidationError
from engram.interfaces.http import problems
from engram.interfaces.http.auth import SCOPE_KEY, Caller, McpAuth, TokenChecks, end_revoked_sessions
from engram.interfaces.http.limits import BodyLimit
from engram.interfaces.http.metrics import Metrics, MetricsMiddleware
from engram.interfaces.http.readiness import Readiness
from engram.interfaces.http.refs import EncodedRefs
from engram.interfaces.http.routes_by_key import router as by_key_router
from engram.interfaces.http.routes_import import router as import_router
from engram.interfaces.http.routes_memory import router as memory_router
from engram.interfaces.http.routes_other import compat, public
from engram.interfaces.http.routes_other import router as other_router
from engram.interfaces.http.routes_page import router as page_router
from engram.interfaces.settings import ServerSettings

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def _web_dir() -> Any:
    return resources.files("engram.interfaces.http") / "web"


def _mcp_endpoint(engram: Engram, checks: TokenChecks, settings: ServerSettings) -> tuple[Any, Any]:
    """The MCP streamable-HTTP ASGI app (behind token auth) and its session manager."""
    from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
    from mcp.server.transport_security import TransportSecuritySettings

    from engram.interfaces.mcp.repeats import RefusingRepeatedNames
    from engram.interfaces.mcp.server import build_server

    def resolve(request: Any, *, reading: bool = False) -> Engram:
        who: Caller | None = None if request is None else request.scope.get(SCOPE_KEY)
        if who is None:
            raise ValidationError("authorization", "no authenticated caller", "a bearer token")
        return engram.for_agent(who.agent, who.session, origin="mcp", reading=reading)

    server = build_server(resolve, tools=settings.mcp_tools, remote=True)
    if settings.host in LOOPBACK:  # DNS-rebinding protection for a localhost server (the SDK's default)
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True, allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
            allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"])
    else:  # served beyond loopback: bearer tokens are the guard
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    manager = StreamableHTTPSessionManager(app=server._lowlevel_server, security_settings=security,
                                           max_request_body_size=settings.max_body_bytes,
                                           session_idle_timeout=settings.mcp_session_idle_s or None)
    return McpAuth(RefusingRepeatedNames(StreamableHTTPASGIApp(manager)), checks), manager


def create_app(engram: Engram, tokens: TokenStore, settings: ServerSettings | None = None, *,
               mcp: bool = True, readiness: Readiness | None = None) -> FastAPI:
    """The ASGI app: REST API, web page, and MCP at ``/mcp`` unless ``mcp=False``. ``/readyz``
    answers from ``readiness`` (``engram serve`` marks its start-up steps there); without one, the
    app is ready as soon as it serves."""
    settings = settings or ServerSettings()
    checks = TokenChecks(tokens)  # the REST routes' and MCP's: one read of a token for both
    manager = None
    mcp_app = None
    if mcp:
        mcp_app, manager = _mcp_endpoint(engram, checks, settings)

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if manager is None:
            yield
            return
        async with manager.run():
            # A revoked token's open MCP sessions (their streams) end within a second, not at the idle timeout.
            watcher = asyncio.create_task(end_revoked_sessions(manager, tokens))
            try:
                yield
            finally:
                watcher.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watcher

    app = FastAPI(
        title="engram", version=__version__, lifespan=lifespan, docs_url=None, redoc_url=None,
        description="Long-term memory for LLM agents. Every /api route needs `Authorization: Bearer <token>` "
                    "(`engram token create --agent NAME`); the token decides which agent's memories you see.",
    )
    app.state.engram = engram
    app.state.tokens = tokens
    app.state.token_checks = checks
    app.state.metrics = Metrics(engram, max_age_s=settings.metrics_max_age_s)
    app.state.metrics_agent = settings.metrics_agent
    app.state.readiness = readiness or Readiness()
    problems.install(app)
    problems.document(app)
    app.include_router(public)
    app.include_router(by_key_router)  # before /api/v1/memory/{ref}, which would take "by-key" for a key
    app.include_router(memory_router)
    app.include_router(other_router)
    app.include_router(import_router)
    app.include_router(page_router)
    app.include_router(compat)
    if mcp_app is not None:
        app.router.routes.append(Route("/mcp", endpoint=mcp_app, include_in_schema=False))
    web = _web_dir()
    app.mount("/static", StaticFiles(directory=str(web)), name="static")

    @app.get("/", include_in_schema=False, response_class=HTMLResponse)
    def index() -> HTMLResponse:
        return HTMLResponse((web / "index.html").read_text("utf-8"))

    @app.get("/docs", include_in_schema=False, response_class=HTMLResponse)
    def docs() -> HTMLResponse:  # Swagger UI from the vendored files: the API docs work with no network
        from fastapi.openapi.docs import get_swagger_ui_html

        return get_swagger_ui_html(openapi_url="/openapi.json", title="engram API",
                                   swagger_js_url="/static/swagger-ui-bundle.js",
                                   swagger_css_url="/static/swagger-ui.css", swagger_favicon_url="/static/favicon.svg")

    app.add_middleware(EncodedRefs)
    # Added last = outermost: the size limit refuses a body before anything reads it.
    app.add_middleware(MetricsMiddleware, metrics=app.state.metrics)
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes)
    return app
