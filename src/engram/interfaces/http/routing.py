"""The router every API module uses: FastAPI's, with each ``def`` route made one worker-thread hop.

FastAPI runs a ``def`` route on a worker thread, then checks its answer against the response
model it infers from the return type on a worker thread again (only ``async def`` routes have it
checked on the event loop): two hand-offs per request where one will do. Here a ``def`` route is
registered as an ``async def`` one that runs it on a worker thread (the engine's calls block:
they must stay off the event loop), so its answer is checked and serialized (pydantic, in Rust)
on the loop. Signature, dependencies and response model are the route's own (``functools.wraps``).

API routes also refuse a query parameter they do not take, naming it (422), as their bodies refuse
an unknown field: FastAPI ignores one, so a misspelt filter (``?tags=`` for ``?tag=``,
``?sinse=``) silently answered for everything. A parameter that takes one value is refused when
given twice (``?limit=1&limit=2`` was read as its last value). And they refuse a path segment or query value whose
percent-escapes are not UTF-8 (``utf8``), which the server would otherwise read as other text.
A route that needs a token checks it before all of these and before reading its body
(``auth.check_token_first``): without a valid one, 401 whatever else is wrong with the request.

Their JSON bodies are read by ``jsondoc.loads`` with ``unique_names``: a body that is not UTF-8,
nested too deeply or holding a number too long to read got FastAPI's bare "There was an error
parsing the body" (no field, no reason), and one naming a field twice was read as its last value.
Each is now malformed JSON, answered 400 saying what is wrong (``problems``).
"""

from __future__ import annotations

import collections.abc
import functools
import inspect
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, Depends, Request, Response
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from starlette.concurrency import run_in_threadpool

from engram import jsondoc
from engram.errors import ValidationError
from engram.interfaces.http import problems
from engram.interfaces.http.auth import check_token_first, needs_token
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


@dataclass(frozen=True, slots=True)
class QueryNames:
    """The query parameters a route takes, and those of them that take one value."""

    taken: frozenset[str]
    single: frozenset[str]


def query_names(dependant: Dependant) -> QueryNames:
    """The query parameters a route takes, its dependencies' included. One takes many values
    (``?tag=a&tag=b``) when FastAPI reads it as a list, by FastAPI's own test of its type."""
    taken = {param.alias for param in dependant.query_params}
    single = {param.alias for param in dependant.query_params if not _takes_many(param.field_info.annotation)}
    for sub in dependant.dependencies:
        names = query_names(sub)
        taken |= names.taken
        single |= names.single
    return QueryNames(frozenset(taken), frozenset(single))


def _takes_many(annotation: Any) -> bool:
    """Whether a query parameter of this type is read as a list (``?tag=a&tag=b``): a list, tuple or
    set, or an optional or annotated one (FastAPI's rule; its own helper is private API)."""
    origin = typing.get_origin(annotation)
    if origin in (list, tuple, set, frozenset, collections.abc.Sequence):
        return True
    if origin is typing.Annotated:
        return _takes_many(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return any(_takes_many(arg) for arg in typing.get_args(annotation))
    return annotation in (list, tuple, set, frozenset)


# The attribute a route keeps its query parameters in, worked out on its first request (on the
# route itself: routes compare by value, so they cannot key a dict, and an id could be reused).
_TAKEN = "_engram_query_names"


async def refuse_unknown_query(request: Request) -> None:
    """A dependency of every API route: a query parameter the route does not take is an error, and
    so is one that takes one value given twice (FastAPI read the last of ``?limit=1&limit=2``)."""
    if not request.scope.get("query_string"):
        return  # (most requests: nothing to check)
    route = request.scope.get("route")
    dependant = getattr(route, "dependant", None)
    if dependant is None:
        return
    names = getattr(route, _TAKEN, None)
    if names is None:
        names = query_names(dependant)
        setattr(route, _TAKEN, names)
    for name in request.query_params:
        if name not in names.taken:
            raise ValidationError(name, "is not a query parameter of this request",
                                  sorted(names.taken) or "no query parameters")
        if name in names.single and len(given := request.query_params.getlist(name)) > 1:
            times = "twice" if len(given) == 2 else f"{len(given)} times"
            raise ValidationError(name, f"is given {times} ({', '.join(jsondoc.shown(v, 40) for v in given[:5])})",
                                  f"one {name} per request")


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
        # A route acting for a token's caller checks the token before FastAPI's handler reads the
        # body or runs a dependency (the query checks above included): 401 whatever else is wrong.
        token_first = needs_token(self.dependant)

        async def handle(request: Request) -> Response:
            if token_first:
                await check_token_first(request)
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
