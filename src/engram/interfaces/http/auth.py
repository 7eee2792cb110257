"""Bearer-token authentication: each token acts for one agent (see ``engram.auth``).

``Authorization: Bearer <token>`` on every request but ``/healthz``, ``/readyz`` and the static page; the
optional ``X-Engram-Session`` header narrows the agent to one of its sessions. The same check
guards MCP over HTTP (``McpAuth``), which keeps the agent in the ASGI scope for the tools and ties
each MCP session to the token that opened it (ending it when that token is revoked:
``end_revoked_sessions``), and ``/metrics`` (``metrics_access``: a token of ``server.metrics_agent``)
whenever the server has any live token.

A route that needs a token checks it first (``check_token_first``, called by the API router's
route class before FastAPI reads the body or solves a dependency), so a request without a valid
token gets 401 whatever else is wrong with it: FastAPI reads a JSON body, and runs the router's
query checks, before a route's own dependencies, and a caller with a wrong token was told about
the route's query parameters or its body's syntax instead (and learnt them without a token).
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fastapi import Header, HTTPException, Request
from fastapi.dependencies.models import Dependant
from starlette.concurrency import run_in_threadpool

from engram import jsondoc
from engram.auth import VERIFIED_RECHECK_S, TokenInfo, TokenStore
from engram.engine import Engram
from engram.errors import StorageError

SESSION_HEADER = "X-Engram-Session"
SCOPE_KEY = "engram.caller"
# How often the open MCP sessions' tokens are checked (``end_revoked_sessions``): as soon as a
# token revoked by another process is refused on a new request (``VERIFIED_RECHECK_S``).
REVOKED_SESSIONS_CHECK_S = VERIFIED_RECHECK_S

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Caller:
    agent: str
    session: str | None
    token_id: str


def _bearer(value: str | None) -> str | None:
    if not value:
        return None
    kind, _, token = value.partition(" ")
    return token.strip() if kind.lower() == "bearer" and token.strip() else None


class TokenChecks:
    """The token checks of one server: a token verified within the last second
    (``VERIFIED_RECHECK_S``) is taken from memory on the event loop; otherwise it is read on a
    worker thread (the read waits for any commit in progress, which must not stall the loop), once
    for all the requests that need the same token checked at the same moment.

    Without that sharing, every request in flight when a token's second ran out read it again: 16
    storing clients made ~160 reads (each a thread hop and a database read) per 1,000 stores. A
    request joins a read only when no token was revoked through this server since the read began
    (``TokenStore.revocations``), so a token revoked here is refused from the next request on, and
    only while the read is younger than ``VERIFIED_RECHECK_S``: a read stuck behind a long write
    lock must not answer, for a token another process revoked meanwhile, later than a read of its
    own would, nor hand its lock timeout to requests that have not waited."""

    def __init__(self, tokens: TokenStore) -> None:
        self.tokens = tokens
        # Reads in flight, by (event loop, token, revocations when they began): each with when it began.
        self._reading: dict[tuple[asyncio.AbstractEventLoop, str, int],
                            tuple[asyncio.Future[TokenInfo | None], float]] = {}

    async def check(self, token: str) -> TokenInfo | None:
        """The live token's record, or None (unknown, malformed or revoked)."""
        info = self.tokens.verified_recently(token)
        if info is not None:
            return info
        loop = asyncio.get_running_loop()
        key = (loop, token, self.tokens.revocations)
        joined = self._reading.get(key)
        if joined is not None and loop.time() - joined[1] < VERIFIED_RECHECK_S:
            reading = joined[0]
        else:
            reading = asyncio.ensure_future(run_in_threadpool(self.tokens.verify, token))
            self._reading[key] = (reading, loop.time())
            reading.add_done_callback(lambda done: self._finished(key, done))
        # Shielded: a request that goes away (its client disconnected) does not cancel the others' read.
        return await asyncio.shield(reading)

    def _finished(self, key: tuple[asyncio.AbstractEventLoop, str, int], done: asyncio.Future[TokenInfo | None]) -> None:
        current = self._reading.get(key)
        if current is not None and current[0] is done:
            del self._reading[key]
        if not done.cancelled():
            done.exception()  # retrieved: left to the requests awaiting it, never logged as unretrieved


async def authenticate(checks: TokenChecks, authorization: str | None, session: str | None) -> Caller | None:
    """The caller for these headers, or None when the token is missing, unknown or revoked."""
    token = _bearer(authorization)
    if not token:
        return None
    info = await checks.check(token)
    if info is None:
        return None
    return Caller(info.agent, session or None, info.id)


async def _caller(request: Request, authorization: str | None, session: str | None) -> Caller:
    """The caller ``check_token_first`` found for this request, else the one these headers name, or 401."""
    found: Caller | None = request.scope.get(SCOPE_KEY)
    if found is not None:
        return found
    found = await authenticate(request.app.state.token_checks, authorization, session)
    if found is None:
        raise HTTPException(401, "a valid bearer token is required (create one with `engram token create`)")
    return found


async def check_token_first(request: Request) -> None:
    """The caller of a route that needs a token (``needs_token``), kept in the scope for
    ``agent_engine``, or 401 problem details: called before anything else of the request is read."""
    request.scope[SCOPE_KEY] = await _caller(request, request.headers.get("authorization"),
                                             request.headers.get(SESSION_HEADER))


async def agent_engine(
    request: Request,
    authorization: str | None = Header(None, description="Bearer <token> from `engram token create`."),
    x_engram_session: str | None = Header(None, description="Act within this session of the token's agent."),
) -> Engram:
    """FastAPI dependency: the engine view of the authenticated caller (its agent, and session
    when the header names one), or 401 problem details. Async, and one dependency, not a caller
    dependency feeding an engine one: FastAPI runs each sync dependency on a worker thread of its
    own, and every hop costs the event loop a hand-off on each request (making a view reads
    nothing). Raises ``ValidationError``."""
    found = await _caller(request, authorization, x_engram_session)
    base: Engram = request.app.state.engram
    # A GET only reads: an agent with no database yet (per_agent_databases) gets none made by it.
    reading = request.method in ("GET", "HEAD")
    if base.agent_databases is not None and not base.agent_databases.is_open(found.agent):
        # The agent's own database opens now (per_agent_databases): its integrity check and
        # migrations run off the event loop, which keeps answering the other agents meanwhile.
        return await run_in_threadpool(base.for_agent, found.agent, found.session, origin="http", reading=reading)
    return base.for_agent(found.agent, found.session, origin="http", reading=reading)


async def agent_engine_opener(
    request: Request,
    authorization: str | None = Header(None, description="Bearer <token> from `engram token create`."),
    x_engram_session: str | None = Header(None, description="Act within this session of the token's agent."),
) -> Callable[..., Engram]:
    """FastAPI dependency of a route whose body says whether it only reads (``POST /forget`` with
    ``dry_run``): the caller authenticated as ``agent_engine`` does, and ``open(reading=...)``
    giving its engine view, to be called by the route (a sync one: on a worker thread, where
    opening an agent's database may take its time). A read makes no database for an agent with
    none yet (per_agent_databases)."""
    found = await _caller(request, authorization, x_engram_session)
    base: Engram = request.app.state.engram
    return functools.partial(base.for_agent, found.agent, found.session, origin="http")


# The dependencies that make a route need a token (``metrics_access`` is not one: /metrics is
# open on a server with no live token, and answers 403 to another agent's).
_TOKEN_DEPENDENCIES = (agent_engine, agent_engine_opener)


def needs_token(dependant: Dependant) -> bool:
    """Whether a route (its ``dependant``) acts for the caller of a token, through any of its dependencies."""
    return any(sub.call in _TOKEN_DEPENDENCIES or needs_token(sub) for sub in dependant.dependencies)


async def metrics_access(
    request: Request,
    authorization: str | None = Header(None, description="Bearer <token> of the agent `server.metrics_agent` names."),
) -> None:
    """FastAPI dependency of ``/metrics``: a live token of the agent ``server.metrics_agent`` names
    (``metrics`` by default), else 401 (no valid token) or 403 (another agent's) problem details.

    The figures are the whole server's: request counts and latencies of every agent's calls and the
    store-wide memory count. Every token is bound to an agent, and one agent learns nothing of
    another's memories, counts included (``/api/v1/stats`` shows an agent its own), so only the
    scraper's own agent reads them (``engram token create --agent metrics``). A server that has no
    live token at all serves no agent over HTTP, and ``/metrics`` stays open there as before."""
    checks: TokenChecks = request.app.state.token_checks
    scraper: str = request.app.state.metrics_agent
    caller = await authenticate(checks, authorization, None)
    if caller is not None:
        if caller.agent == scraper:
            return
        raise HTTPException(403, f"/metrics gives every agent's figures (requests, the store-wide memory count): "
                                 f"a token of agent {jsondoc.shown(caller.agent)} may not read them, only one of the agent "
                                 f"server.metrics_agent names ({jsondoc.shown(scraper)}; create one with "
                                 f"`engram token create --agent {scraper}`)")
    if await run_in_threadpool(checks.tokens.has_live_tokens):
        raise HTTPException(401, "a valid bearer token is required for /metrics while the server has tokens "
                                 f"(one of the agent server.metrics_agent names, {jsondoc.shown(scraper)}; create one with "
                                 f"`engram token create --agent {scraper}`)")


class McpAuth:
    """ASGI wrapper for the MCP endpoint: 401 without a valid token, else the caller in the scope,
    for the tools (each call acts for the token of the request that carries it), and as the scope's
    ``user`` for the SDK's session manager.

    The manager ties an MCP session (``Mcp-Session-Id``) to the ``user`` of the request that opened
    it and answers any other 404 "Session not found", as it answers an unknown session: a request
    with another token, another agent's or the same agent's, neither runs a tool, reads the
    session's stream nor ends it (DELETE) within a session it did not open; with no ``user`` the
    manager ties a session to no one, and any token holding its id was served in it. The owner is
    the token (its id), not its agent: the token is what a request proves."""

    def __init__(self, app: Any, checks: TokenChecks) -> None:
        # (imported here: the SDK loads only for a server that serves MCP)
        from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
        from mcp.server.auth.provider import AccessToken

        self.app = app
        self.checks = checks
        self._user_type = AuthenticatedUser
        self._token_type = AccessToken

    def _user(self, token: str, who: Caller) -> Any:
        """The SDK's user for the caller: the session manager compares its ``client_id`` (the
        token's id; ``subject``, the agent, follows from it) with the session owner's."""
        return self._user_type(self._token_type(token=token, client_id=who.token_id, subject=who.agent, scopes=[]))

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or []}
        authorization = headers.get("authorization")
        who = await authenticate(self.checks, authorization, headers.get(SESSION_HEADER.lower()))
        if who is None:
            body = json.dumps({"type": "https://engram.dev/problems/unauthorized", "title": "Unauthorized",
                               "status": 401, "detail": "a valid bearer token is required"}).encode()
            await send({"type": "http.response.start", "status": 401,
                        "headers": [(b"content-type", b"application/problem+json"), (b"www-authenticate", b"Bearer")]})
            await send({"type": "http.response.body", "body": body})
            return
        scope[SCOPE_KEY] = who
        scope["user"] = self._user(_bearer(authorization) or "", who)
        await self.app(scope, receive, send)


def _forget_ended(manager: Any) -> None:
    """Drop from the SDK manager's tables the sessions its transport has ended (``is_terminated``):
    a client's DELETE terminates the transport, and the manager (mcp 2.1) forgets the session on
    its idle timeout or crash only (modelcontextprotocol/python-sdk#3300; once the SDK forgets them
    itself this finds none), so each session a client ended kept its closed transport and
    its owner for the server's life, and this watch, which runs while any session has an owner,
    read the tokens every second from the first such end on. An owner whose session the manager
    no longer holds goes with it. A request naming a dropped session gets the 404 "Session not
    found" of one never opened (the closed transport's own answer was a 404 too)."""
    instances: dict[str, Any] = manager._server_instances
    for session_id, transport in list(instances.items()):
        if getattr(transport, "is_terminated", False) is True:
            del instances[session_id]
    for session_id in [s for s in manager._session_owners if s not in instances]:
        del manager._session_owners[session_id]


async def end_revoked_sessions(manager: Any, tokens: TokenStore, every: float = REVOKED_SESSIONS_CHECK_S) -> None:
    """Run for the server's life beside the MCP session manager: every ``every`` seconds while any
    MCP session is open, end the sessions whose token (``McpAuth`` made it their owner) is no
    longer live, revoked by this server or by another process (``engram token revoke``).

    A revoked token is refused on its next request, but a session it opened held what it had
    open: its GET stream (the server's messages to the client) stayed open until the client left
    or ``server.mcp_session_idle_s`` (30 minutes) ran out, and a user revoking a leaked token
    expects it to stop now. The SDK ends a session so on its idle timeout: the transport's
    ``terminate`` closes its streams, the manager forgets it (``_server_instances``,
    ``_session_owners``: it offers no public way to list or end sessions), and a request naming it
    gets 404 "Session not found". One read of the live tokens per round, none while no session is
    open; a read that fails (the database busy) is retried at the next round. Each round first
    forgets the sessions their clients ended (``_forget_ended``), which the SDK keeps."""
    if not (isinstance(getattr(manager, "_session_owners", None), dict)
            and isinstance(getattr(manager, "_server_instances", None), dict)):
        # An MCP SDK whose manager keeps its sessions otherwise: a revoked token's sessions then end
        # at their idle timeout, as before, rather than the server's lifespan failing.
        logger.warning("this MCP SDK's session manager cannot be read: a revoked token's open MCP sessions "
                       "end at server.mcp_session_idle_s")
        return
    while True:
        await asyncio.sleep(every)
        _forget_ended(manager)
        owners: dict[str, Any] = dict(manager._session_owners)
        if not owners:
            continue
        try:
            live = {info.id for info in await run_in_threadpool(tokens.list)}
        except StorageError as exc:
            logger.warning("could not check the open MCP sessions' tokens (retried in %ss): %s", every, exc)
            continue
        for session_id, owner in owners.items():
            if owner.get("client_id") in live or manager._session_owners.get(session_id) is not owner:
                continue
            manager._session_owners.pop(session_id, None)
            transport = manager._server_instances.pop(session_id, None)
            if transport is not None:
                logger.info("MCP session %s ended: its token (%s) was revoked", session_id, owner.get("client_id"))
                try:
                    await transport.terminate()
                except Exception:  # one session's stream failing to close must not stop the watch of the others
                    logger.warning("MCP session %s: its streams could not be closed", session_id, exc_info=True)
