"""mem0's ``AsyncMemory``: ``from engram.compat.mem0 import AsyncMemory``; the methods of the
mem0-shaped ``Memory`` as coroutines, ``from_config`` included (as in mem0). Each call runs in a
worker thread, so awaiting it never blocks the event loop; the store serialises its own writes.
``AsyncMemory()`` opens the configured store where it is called, as mem0's constructor builds its
clients there: on a running loop, prefer ``await AsyncMemory.from_config({})`` or pass an engine.
The results and errors are the synchronous facade's, which does the work."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, Concatenate, ParamSpec, TypeVar

from engram.agent.extract import FactExtractor
from engram.aio import AsyncEngram
from engram.compat.mem0 import Memory
from engram.engine import Engram
from engram.integrations import checked_call

P = ParamSpec("P")
R = TypeVar("R")


def _in_thread(method: Callable[Concatenate[Memory, P], R]) -> Callable[Concatenate[AsyncMemory, P], Coroutine[Any, Any, R]]:
    @functools.wraps(method)
    async def call(self: AsyncMemory, *args: P.args, **kwargs: P.kwargs) -> R:
        return await asyncio.to_thread(method, self.memory, *args, **kwargs)

    return call


class AsyncMemory:
    """mem0's ``AsyncMemory`` API over engram (differences: see ``engram.compat.mem0``)."""

    @checked_call("{owner}(), {owner}(mem), or {owner}.from_config(config)")
    def __init__(self, engram: Engram | AsyncEngram | None = None, *, extractor: FactExtractor | None = None) -> None:
        self.memory = Memory(engram, extractor=extractor)  # the synchronous facade doing the work

    @classmethod
    async def from_config(cls, config_dict: Mapping[str, Any]) -> AsyncMemory:
        """``await AsyncMemory.from_config(config)``, a coroutine as mem0's is: ``Memory.from_config``
        (which opens, and may migrate, the store) run in a worker thread, with its errors."""
        mem = cls.__new__(cls)
        mem.memory = await asyncio.to_thread(Memory.from_config, config_dict)
        return mem

    @property
    def engram(self) -> Engram:
        return self.memory.engram

    add = _in_thread(Memory.add)
    get = _in_thread(Memory.get)
    get_all = _in_thread(Memory.get_all)
    search = _in_thread(Memory.search)
    update = _in_thread(Memory.update)
    delete = _in_thread(Memory.delete)
    delete_all = _in_thread(Memory.delete_all)
    history = _in_thread(Memory.history)
    reset = _in_thread(Memory.reset)
    import_mem0 = _in_thread(Memory.import_mem0)
    close = _in_thread(Memory.close)
