"""The router every API module uses: FastAPI's, with each ``def`` route made one worker-thread hop.

FastAPI runs a ``def`` route on a worker thread, then checks its answer against the response
model it infers from the return type on a worker thread again (only ``async def`` routes have it
checked on the event loop): two hand-offs per request where one will do. Here a ``def`` route is
registered as an ``async def`` one that runs it on a worker thread (the engine's calls block:
they must stay off the event loop), so its answer is checked and serialized (pydantic, in Rust)
on the loop. Signature, dependencies and response model are the route's own (``functools.wraps``).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool


def on_worker_thread(route: Callable[..., Any]) -> Callable[..., Any]:
    """``route`` as an ``async def`` that runs it on a worker thread (itself when it is async)."""
    if inspect.iscoroutinefunction(route):
        return route

    @functools.wraps(route)
    async def run(*args: Any, **kwargs: Any) -> Any:
        return await run_in_threadpool(route, *args, **kwargs)

    return run


class Router(APIRouter):
    def add_api_route(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        super().add_api_route(path, on_worker_thread(endpoint), **kwargs)
