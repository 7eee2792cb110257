"""Run synchronous test code against ``AsyncEngram``: the contract suite, unchanged, through it.

``SyncDriver(async_engram)`` looks like an ``Engram`` to a test: each call of an async method is
awaited to completion on the driver's own event loop, so the assertions written for the
synchronous engine check exactly what asyncio users get (arguments, results, errors). Views
(``for_agent`` / ``for_session``) come back wrapped the same way; other attributes are read from
the wrapped engine.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

from engram.aio import AsyncEngram


class SyncDriver:
    def __init__(self, mem: AsyncEngram, runner: asyncio.Runner | None = None) -> None:
        self._mem = mem
        self._owns_runner = runner is None
        self._runner = runner or asyncio.Runner()

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._mem, name, None)
        if attr is None:
            return getattr(self._mem.engram, name)
        if name in ("for_agent", "for_session"):
            return lambda *args, **kwargs: SyncDriver(attr(*args, **kwargs), self._runner)
        if inspect.iscoroutinefunction(attr):
            return self._drive(attr)
        return attr

    def _drive(self, method: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            return self._runner.run(method(*args, **kwargs))

        return call

    def close(self) -> None:
        """Stop the engine's threads and the loop (the store is left to its owner to close)."""
        self._mem._workers.shutdown()
        if self._owns_runner:
            self._runner.close()

