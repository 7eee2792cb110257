"""The router every API module uses: FastAPI's, with each ``def`` route made one worker-thread hop.

FastAPI runs a ``def`` route on a worker thread, then checks its answer against the response
model it infers from the return type on a worker thread again (only ``async def`` routes have it
checked on the event loop): two hand-offs per request where one will do. Here a ``def`` route is
registered as an ``async def`` one that runs it on a worker thread (the engine's calls block:
they must stay off the event loop), so its answer is checked and serialized (pydantic, in Rust)
on the loop. Signature, dependencies and response model are the route's own (``functools.wraps``).

API routes also refuse a query parameter they do not take, naming it (422), as their bodies refuse
an unknown field: FastAPI ignores one, so a misspelt filter (``?tags=`` for ``?tag=``,
``?sinse=``) silently answered for everything. And they refuse a path segment or query value whose
percent-escapes are not UTF-8 (``utf8``), which the server would otherwise read as other text.

Their JSON bodies are read by ``jsondoc.loads`` with ``unique_names``: a body that is not UTF-8,
nested too deeply or holding a number too long to read got FastAPI's bare "There was an error
parsing the body" (no field, no reason), and one naming a field twice was read as its last value.
Each is now malformed JSON, answered 400 saying what is wrong (``problems``).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Depends, Request, Response
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from starlette.concurrency import run_in_threadpool

from engram import jsondoc
from engram.errors import ValidationError
from engram.interfaces.http import problems
from engram.interfaces.http.utf8 import refuse_undecodable

API_PREFIX = "/api/"


def on_worker_thread(route: Callable[..., Any]) -> Callable[..., Any]:
    """``route`` as an ``async def`` that runs it on a worker thread (itself when it is async)."""
    if inspect.iscoroutinefunction(route):
        return route

    @functools.wraps(route)
    async def run(*args: Any, **kwargs: Any) -> Any:
        return await run_in_threadpool(route, *args, **kwargs)

    return run


def query_names(dependant: Dependant) -> frozenset[str]:
    """The query parameters a route takes, its dependencies' included."""
    names = {param.alias for param in dependant.query_params}
    for sub in dependant.dependencies:
        names |= query_names(sub)
    return frozenset(names)


# The attribute a route keeps its query parameters in, worked out on its first request (on the
# route itself: routes compare by value, so they cannot key a dict, and an id could be reused).
_TAKEN = "_engram_query_names"


async def refuse_unknown_query(request: Request) -> None:
    """A dependency of every API route: a query parameter the route does not take is an error."""
    if not request.scope.get("query_string"):
        return  # (most requests: nothing to check)
    route = request.scope.get("route")
    dependant = getattr(route, "dependant", None)
    if dependant is None:
        return
    taken = getattr(route, _TAKEN, None)
    if taken is None:
        taken = query_names(dependant)
        setattr(route, _TAKEN, taken)
    for name in request.query_params:
        if name not in taken:
            raise ValidationError(name, "is not a query parameter of this request",
                                  sorted(taken) or "no query parameters")


class _JSONRequest(Request):
    """A request whose JSON body is read by ``jsondoc.loads`` (FastAPI turns the
    ``JSONDecodeError`` it raises into a ``json_invalid`` error, with its reason)."""

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = jsondoc.loads(await self.body(), unique_names=True)
        return self._json


class _JSONRoute(APIRoute):
    def get_route_handler(self) -> Callable[[Request], Any]:
        handler = super().get_route_handler()

        async def handle(request: Request) -> Response:
            return await handler(_JSONRequest(request.scope, request.receive))  # type: ignore[no-any-return]

        return handle


class Router(APIRouter):
    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("route_class", _JSONRoute)
        super().__init__(**kwargs)

    def add_api_route(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        if (self.prefix + path).startswith(API_PREFIX):
            kwargs["dependencies"] = [*(kwargs.get("dependencies") or ()), Depends(refuse_undecodable),
                                      Depends(refuse_unknown_query)]
            # What every API route may answer besides its success (a route adds 404 where it
            # names a memory), as the problem details the server sends: FastAPI's default 422
            # documented its own body ({"detail": [...]}) as application/json.
            takes_body = bool(set(kwargs.get("methods") or ()) & {"POST", "PUT", "PATCH"})
            kwargs["responses"] = {**problems.responses(*((400, 401, 413, 422, 503) if takes_body else
                                                          (401, 422, 503))), **(kwargs.get("responses") or {})}
        super().add_api_route(path, on_worker_thread(endpoint), **kwargs)
