"""``AsyncEngram``: the engine for asyncio code, without ever blocking the event loop.

engram's core is synchronous (SQLite and psycopg used synchronously, see the style notes). The
async facade never runs it on the loop, so a coroutine awaiting a recall lets the loop serve
other tasks meanwhile:

- ``remember`` goes straight to the engine's write queue (``Engram.remember_soon``): remembers
  awaited at once share one embedding batch and one transaction, as concurrent threads' do, and no
  thread waits for any of them;
- other writes (update, forget, link, import, reindex...) go to one dedicated writer thread
  per engine, as with datasette's single write thread;
- writes are applied in the order they were made: each waits for the writes made before it, but
  remembers made one after another go to the queue together;
- reads (recall, get, list, count, stats...) go to a small pool of reader threads, so a slow
  write (typically one waiting on a remote embedding service) never holds up recalls. The
  stores already serialise their own storage work (one SQLite connection under a lock, a
  PostgreSQL pool), so readers and the writer meet only for the short moment of a statement.

Each method has the same arguments, results and errors as the ``Engram`` method of the same name
(see its docstring). A cancelled await does not stop work already handed to a thread: a cancelled
write may still be applied, exactly as one that had already reached the database (a ``remember``
cancelled before its batch starts is not stored).
Views made with ``for_agent`` / ``for_session`` share their parent's threads; ``close`` on the
parent closes the store and stops the threads, after the writes already queued.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Concatenate, Literal, ParamSpec, TypeVar

from engram.config import Settings
from engram.engine import Engram
from engram.errors import ValidationError
from engram.events import Listener
from engram.model import Scope, WriteResult

P = ParamSpec("P")
R = TypeVar("R")
Lane = Literal["read", "write"]


class _Workers:
    """The writer thread and the reader pool one engine and its views share."""

    def __init__(self, readers: int) -> None:
        self.write = ThreadPoolExecutor(max_workers=1, thread_name_prefix="engram-writer")
        self.read = ThreadPoolExecutor(max_workers=readers, thread_name_prefix="engram-reader")
        # Writes made and not yet done (each stands as a future set when it is): a remember waits
        # for the other writes made before it, another write for every write made before it.
        self.remembering: set[asyncio.Future[None]] = set()
        self.writing: set[asyncio.Future[None]] = set()

    def shutdown(self) -> None:
        # wait=True: work already queued (writes in particular) finishes before the threads stop.
        self.write.shutdown(wait=True)
        self.read.shutdown(wait=True)


def _offload(
    method: Callable[Concatenate[Engram, P], R], lane: Lane
) -> Callable[Concatenate[AsyncEngram, P], Coroutine[Any, Any, R]]:
    """An async method running ``method`` of the wrapped ``Engram`` in the ``lane``'s threads,
    with its signature and docstring (so help() and type checkers see the real arguments)."""

    @functools.wraps(method)
    async def call(self: AsyncEngram, *args: P.args, **kwargs: P.kwargs) -> R:
        return await self._run(lane, functools.partial(method, self.engram, *args, **kwargs))

    return call


async def _in_turn(made: set[asyncio.Future[None]], earlier: set[asyncio.Future[None]],
                   start: Callable[[], Awaitable[R]]) -> R:
    """``await start()`` once the writes in ``earlier`` are done (whatever their outcome); this
    write stands in ``made`` from the call until it is done, for the writes made after it to wait on."""
    turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    made.add(turn)
    try:
        if earlier:
            await asyncio.wait(earlier)
        return await start()
    finally:
        made.discard(turn)
        turn.set_result(None)


class AsyncEngram:
    """Long-term memory for asyncio code: ``await mem.remember(...)``, ``await mem.recall(...)``.

    Wrap an ``Engram`` (``AsyncEngram(Engram(store))``) or open the configured one with
    ``await AsyncEngram.open()``; use ``async with`` or ``await mem.close()`` when done.
    """

    def __init__(self, engram: Engram, *, readers: int = 4, _workers: _Workers | None = None,
                 _owner: bool | None = None) -> None:
        if readers < 1:
            raise ValidationError("readers", f"{readers} is too few", "1 or more reader threads")
        self.engram = engram  # the synchronous engine, for code that is already in a thread
        # The engine that made the threads closes them (and the store); its views do not.
        self._owner = _workers is None if _owner is None else _owner
        self._workers = _workers or _Workers(readers)

    @classmethod
    async def open(cls, settings: Settings | None = None, *, readers: int = 4, **overrides: Any) -> AsyncEngram:
        """``Engram.from_settings`` (which opens and may migrate the store) run off the loop."""
        workers = _Workers(readers)
        loop = asyncio.get_running_loop()
        try:
            engram = await loop.run_in_executor(
                workers.write, functools.partial(Engram.from_settings, settings, **overrides))
        except BaseException:
            workers.shutdown()
            raise
        return cls(engram, _workers=workers, _owner=True)

    async def _run(self, lane: Lane, work: Callable[[], R]) -> R:
        loop = asyncio.get_running_loop()
        if lane == "read":
            return await loop.run_in_executor(self._workers.read, work)
        earlier = self._workers.remembering | self._workers.writing
        return await _in_turn(self._workers.writing, earlier, lambda: loop.run_in_executor(self._workers.write, work))

    @functools.wraps(Engram.remember)
    async def remember(self, content: str, **fields: Any) -> WriteResult:
        # Remembers made one after another do not wait for each other: they share the queue's batches.
        return await _in_turn(self._workers.remembering, set(self._workers.writing),
                              lambda: asyncio.wrap_future(self.engram.remember_soon(content, **fields)))

    # --- views and plumbing (no storage work: plain methods) ----------------------------------
    @property
    def scope(self) -> Scope:
        return self.engram.scope

    def for_agent(self, agent: str, session: str | None = None, *, origin: str | None = None) -> AsyncEngram:
        """A view for another agent (or session) on the same store and the same threads."""
        return AsyncEngram(self.engram.for_agent(agent, session, origin=origin), _workers=self._workers)

    def for_session(self, session: str | None) -> AsyncEngram:
        return AsyncEngram(self.engram.for_session(session), _workers=self._workers)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """As ``Engram.subscribe``; the listener is called in the writer thread, so a listener
        that touches asyncio objects must hand over with ``loop.call_soon_threadsafe``."""
        return self.engram.subscribe(listener)

    async def close(self) -> None:
        """Close the store once queued writes are done, then stop the threads (parent only;
        closing a view does nothing, as views share the parent's store)."""
        if not self._owner:
            return
        await self._run("write", self.engram.close)
        await asyncio.get_running_loop().run_in_executor(None, self._workers.shutdown)

    async def __aenter__(self) -> AsyncEngram:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # --- writes: the single writer thread (``remember``, above: the write queue) -----------------
    remember_many = _offload(Engram.remember_many, "write")
    update = _offload(Engram.update, "write")
    replace = _offload(Engram.replace, "write")
    forget = _offload(Engram.forget, "write")
    forget_own = _offload(Engram.forget_own, "write")
    link = _offload(Engram.link, "write")
    unlink = _offload(Engram.unlink, "write")
    supersede = _offload(Engram.supersede, "write")
    import_snapshot = _offload(Engram.import_snapshot, "write")
    reindex = _offload(Engram.reindex, "write")
    embed_missing = _offload(Engram.embed_missing, "write")

    # --- reads: the reader pool (a recall's access marks are a short store write under its lock) ---
    recall = _offload(Engram.recall, "read")
    find = _offload(Engram.find, "read")
    get = _offload(Engram.get, "read")
    get_by_key = _offload(Engram.get_by_key, "read")
    named = _offload(Engram.named, "read")
    list = _offload(Engram.list, "read")
    count = _offload(Engram.count, "read")
    most_important = _offload(Engram.most_important, "read")
    most_recent = _offload(Engram.most_recent, "read")
    versions = _offload(Engram.versions, "read")
    neighbours = _offload(Engram.neighbours, "read")
    export_snapshot = _offload(Engram.export_snapshot, "read")
    stats = _offload(Engram.stats, "read")
    visible_stats = _offload(Engram.visible_stats, "read")
