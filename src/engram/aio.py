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
cancelled before its batch starts is not stored), and it keeps its place: the writes made after it
still wait for it. Views made with ``for_agent`` / ``for_session`` share their parent's threads;
``close`` on the parent refuses new calls (``StorageError``), answers the ones made before (writes
and reads in flight), then closes the store and stops the threads. Several event loops (one per
thread) may share one ``AsyncEngram``: its bookkeeping belongs to no loop.

``mem.history`` is the conversation history on the same threads (``AsyncHistory``): its writes
(append, pop, compact...) take their turn among the engine's writes, so writes to a conversation
are applied in the order they were made, and its reads go to the reader pool.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_for_all
from typing import Any, Concatenate, Literal, ParamSpec, TypeVar

from engram.config import Settings
from engram.engine import CLOSE_WAIT_S, Engram
from engram.errors import ValidationError
from engram.events import Listener
from engram.history.base import DEFAULT_AGENT
from engram.history.service import History
from engram.model import Scope, WriteResult
from engram.writes import closed_refusal

P = ParamSpec("P")
R = TypeVar("R")
Lane = Literal["read", "write"]

log = logging.getLogger("engram.aio")


class _Workers:
    """The writer thread and the reader pool one engine and its views share, the order of its
    writes, and its closing.

    The bookkeeping is plain ``concurrent.futures`` under a lock, never asyncio futures: an asyncio
    future belongs to one event loop, and two loops (two threads each running one) sharing an
    engine waited on each other's futures forever."""

    def __init__(self, readers: int) -> None:
        self.write = ThreadPoolExecutor(max_workers=1, thread_name_prefix="engram-writer")
        self.read = ThreadPoolExecutor(max_workers=readers, thread_name_prefix="engram-reader")
        self._lock = threading.Lock()
        # Writes made and not yet done, each a turn set once its work is done (not when its await is
        # cancelled: the work goes on in its thread): a remember waits for the other writes made
        # before it, another write for every write made before it.
        self._remembering: set[Future[None]] = set()
        self._writing: set[Future[None]] = set()
        self._reading: set[Future[Any]] = set()  # reads handed to the pool and not yet done
        self._closing: Future[None] | None = None  # set once close has begun; done once it is done

    @property
    def closed(self) -> bool:
        return self._closing is not None

    def _refuse_when_closed(self, lane: Lane) -> None:
        if self._closing is not None:
            raise closed_refusal(lane)  # the words Engram's own refusal says

    def turn(self, remember: bool) -> tuple[Future[None], list[Future[None]]]:
        """A new write's turn, and the turns it waits for; ``StorageError`` once close has begun."""
        turn: Future[None] = Future()
        with self._lock:
            self._refuse_when_closed("write")
            earlier = [*self._writing] if remember else [*self._remembering, *self._writing]
            (self._remembering if remember else self._writing).add(turn)
        return turn, earlier

    def end_turn(self, turn: Future[None]) -> None:
        with self._lock:
            self._remembering.discard(turn)
            self._writing.discard(turn)
        turn.set_result(None)

    def submit_read(self, work: Callable[[], R]) -> Future[R]:
        with self._lock:  # (with the check: a read is either refused or waited for by close)
            self._refuse_when_closed("read")
            done = self.read.submit(work)
            self._reading.add(done)
        done.add_done_callback(self._read_done)
        return done

    def _read_done(self, done: Future[Any]) -> None:
        with self._lock:
            self._reading.discard(done)

    def close(self, engram: Engram) -> Future[None]:
        """Refuse new calls, and in a thread of its own wait for the calls made before (writes in
        their order, reads in flight), then close ``engram`` and stop the threads. Every call
        returns the same future: answered once all is closed."""
        with self._lock:
            if self._closing is not None:
                return self._closing
            closing = self._closing = Future()
            closing.set_running_or_notify_cancel()  # an await cancelled on it must not cancel it
            earlier = [*self._remembering, *self._writing, *self._reading]
        threading.Thread(target=self._close, args=(engram, earlier, closing), name="engram-close").start()
        return closing

    def _close(self, engram: Engram, earlier: list[Future[Any]], closing: Future[None]) -> None:
        try:
            # Bounded as Engram.close bounds its wait for queued writes: a call stuck in a remote
            # model must not keep the process from ending.
            if wait_for_all(earlier, CLOSE_WAIT_S).not_done:
                log.warning("closing while calls made before close are still running (waited %.0f s): "
                            "they may fail", CLOSE_WAIT_S)
            engram.close()
            self.shutdown()
        except BaseException as exc:
            closing.set_exception(exc)
        else:
            closing.set_result(None)

    def shutdown(self) -> None:
        # wait=True: work already queued finishes before the threads stop.
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


def _offload_history(
    method: Callable[Concatenate[History, P], R], lane: Lane
) -> Callable[Concatenate[AsyncHistory, P], Coroutine[Any, Any, R]]:
    """``_offload`` for ``History``: the engine's history is looked up in the thread too, since
    the first use opens it (storage, and warming the semantic index may embed)."""

    @functools.wraps(method)
    async def call(self: AsyncHistory, *args: P.args, **kwargs: P.kwargs) -> R:
        engram = self._mem.engram
        return await self._mem._run(lane, lambda: method(engram.history, *args, **kwargs))

    return call


class AsyncHistory:
    """The conversation history of an ``AsyncEngram``'s agent, awaitable: ``await mem.history.append(
    key, "user", text)``. Each method has the arguments, results and errors of the ``History``
    method of the same name, and runs in the engine's threads (writes in its writer thread, in
    the order they were made among all the engine's writes; reads in its reader pool). Another
    agent's is ``mem.for_agent(agent).history``; it closes with the engine (``await mem.close()``)."""

    def __init__(self, mem: AsyncEngram) -> None:
        self._mem = mem

    @property
    def agent(self) -> str:
        """The agent whose conversations this history holds."""
        return self._mem.scope.agent or DEFAULT_AGENT

    # --- writes: the engine's writer thread, in turn with its other writes ---------------------
    append = _offload_history(History.append, "write")
    add = _offload_history(History.add, "write")
    append_many = _offload_history(History.append_many, "write")
    append_reported = _offload_history(History.append_reported, "write")
    append_many_reported = _offload_history(History.append_many_reported, "write")
    append_screened = _offload_history(History.append_screened, "write")
    set_summary = _offload_history(History.set_summary, "write")
    clear_summary = _offload_history(History.clear_summary, "write")
    pop_newest = _offload_history(History.pop_newest, "write")
    purge = _offload_history(History.purge, "write")
    compact = _offload_history(History.compact, "write")

    # --- reads: the reader pool (semantic_recall embeds its query there, as recall does) --------
    recent = _offload_history(History.recent, "read")
    all = _offload_history(History.all, "read")
    count = _offload_history(History.count, "read")
    summary = _offload_history(History.summary, "read")
    conversations = _offload_history(History.conversations, "read")
    restore = _offload_history(History.restore, "read")
    assemble = _offload_history(History.assemble, "read")
    semantic_recall = _offload_history(History.semantic_recall, "read")
    # Checks that write nothing: what append_many and set_summary would refuse, before writing elsewhere.
    check_many = _offload_history(History.check_many, "read")
    screen = _offload_history(History.screen, "read")  # (reads nothing: PII screening, off the event loop)
    checked_summary = _offload_history(History.checked_summary, "read")


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
        self._history = AsyncHistory(self)

    @classmethod
    async def open(cls, settings: Settings | None = None, *, readers: int = 4, **overrides: Any) -> AsyncEngram:
        """``Engram.from_settings`` (which opens and may migrate the store) run off the loop."""
        workers = _Workers(readers)
        try:
            engram = await asyncio.wrap_future(
                workers.write.submit(functools.partial(Engram.from_settings, settings, **overrides)))
        except BaseException:
            workers.shutdown()
            raise
        return cls(engram, _workers=workers, _owner=True)

    async def _run(self, lane: Lane, work: Callable[[], R]) -> R:
        if lane == "read":
            return await asyncio.wrap_future(self._workers.submit_read(work))
        return await self._in_turn(False, lambda: self._workers.write.submit(work))

    async def _in_turn(self, remember: bool, start: Callable[[], Future[R]]) -> R:
        """``start()`` once the writes made before are done (whatever their outcome); this write's
        turn ends when its work is done, even if the await on it was cancelled meanwhile, so the
        writes made after it still come after it."""
        turn, earlier = self._workers.turn(remember)
        try:
            if earlier:
                # (wrapped futures are only waited on here, never cancelled: the earlier work goes on)
                await asyncio.wait([asyncio.wrap_future(f) for f in earlier])
            work = start()
        except BaseException:
            self._workers.end_turn(turn)
            raise
        work.add_done_callback(lambda _: self._workers.end_turn(turn))
        return await asyncio.wrap_future(work)

    @functools.wraps(Engram.remember)
    async def remember(self, content: str, **fields: Any) -> WriteResult:
        # Remembers made one after another do not wait for each other: they share the queue's batches.
        return await self._in_turn(True, lambda: self.engram.remember_soon(content, **fields))

    @functools.wraps(Engram.check_remember)
    async def check_remember(self, content: str, **fields: Any) -> None:
        # Checking reads nothing stored (it is what ``remember`` does on the loop before queueing).
        self.engram.check_remember(content, **fields)

    # --- views and plumbing (no storage work: plain methods) ----------------------------------
    @property
    def scope(self) -> Scope:
        return self.engram.scope

    def for_agent(self, agent: str, session: str | None = None, *, origin: str | None = None,
                  reading: bool = False) -> AsyncEngram:
        """A view for another agent (or session) on the same store and the same threads; ``reading``
        as ``Engram.for_agent``'s (a caller that only reads makes no database for an agent with none)."""
        return AsyncEngram(self.engram.for_agent(agent, session, origin=origin, reading=reading), _workers=self._workers)

    def for_session(self, session: str | None) -> AsyncEngram:
        return AsyncEngram(self.engram.for_session(session), _workers=self._workers)

    @property
    def history(self) -> AsyncHistory:
        """This agent's conversation history, awaitable (``AsyncHistory``), on this engine's threads."""
        return self._history

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """As ``Engram.subscribe``; the listener is called in the writer thread, so a listener
        that touches asyncio objects must hand over with ``loop.call_soon_threadsafe``."""
        return self.engram.subscribe(listener)

    @property
    def closed(self) -> bool:
        """True once this engine (or the one its view came from) began closing: every call then
        raises ``StorageError``. Closed for good when ``close`` returns."""
        return self._workers.closed or self.engram.closed

    async def close(self) -> None:
        """Close: calls made from now on raise ``StorageError``; the calls made before are answered
        (writes applied in their order, reads in flight finished), then the store is closed and the
        threads stopped. Returns once all is closed; closing again (from any task or event loop)
        waits for the same close. Closing a view does nothing, as views share the parent's store.
        Cancelling the await does not stop the close."""
        if not self._owner:
            return
        await asyncio.wrap_future(self._workers.close(self.engram))

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
    import_from = _offload(Engram.import_from, "write")
    mark_used = _offload(Engram.mark_used, "write")
    annotate = _offload(Engram.annotate, "write")

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
    supersedes = _offload(Engram.supersedes, "read")
    visible_memories = _offload(Engram.visible_memories, "read")
    export_snapshot = _offload(Engram.export_snapshot, "read")
    stats = _offload(Engram.stats, "read")
    visible_stats = _offload(Engram.visible_stats, "read")
    link_keys = _offload(Engram.link_keys, "read")
    audit_trail = _offload(Engram.audit_trail, "read")
    audit_of = _offload(Engram.audit_of, "read")
    forgotten = _offload(Engram.forgotten, "read")
