"""Concurrent calls drained as one batch by whichever caller holds the lead: what lets many
clients storing at once share one model call and one transaction instead of each paying for its own.

Threads (MCP requests each run in one) ``submit`` an item. The first becomes the leader
and runs the batch function on everything pending; items that arrive meanwhile wait, and when the
batch is done the leader answers its group and hands the lead to the first waiting thread, which
runs everything that queued up as the next batch (up to ``max_weight``; an item is never split).
So there is one leader at a time and a queue it drains, with no thread of its own and no timer:
a lone caller runs at once. Callers that must not block (asyncio code) ``submit_soon`` instead and
get a ``concurrent.futures.Future``: their item joins the same queue, and when the lead falls to it
a thread of a pool the process's drains share leads (a thread per batch, not per item: 16 waiting
coroutines cost no threads, where 16 waiting threads cost 16 hand-offs; HTTP stores come this
way). With ``early_handoff`` the leader may pass the lead on before its batch is finished (the
write queue does once its texts are embedded, and commits meanwhile). The batch function answers
each item in its place, a result or the exception that item alone raises; an exception out of
the batch function reaches every caller of that batch, and only them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")

# Threads that lead batches for ``submit_soon``, shared by every drain of the process. Leaders
# overlap only while one commits and the next embeds, so a few are busy at once; the bound is far
# above that because a leader may wait for a queued one (a listener of its batch that writes).
LEADER_THREADS = 64
_leaders: ThreadPoolExecutor | None = None
_leaders_lock = threading.Lock()
# The drains whose batch this thread is running (a batch's listener may submit to another drain).
_inside = threading.local()


def _leader_pool() -> ThreadPoolExecutor:
    global _leaders
    with _leaders_lock:
        if _leaders is None:
            _leaders = ThreadPoolExecutor(max_workers=LEADER_THREADS, thread_name_prefix="engram-leader")
        return _leaders


class _Pending(Generic[T, R]):
    __slots__ = ("done", "error", "future", "item", "lead", "ready", "result")

    def __init__(self, item: T, future: Future[R] | None = None) -> None:
        self.item = item
        self.future = future  # answered here when the caller is not waiting on ``ready``
        self.ready = threading.Event()
        self.lead = False
        self.done = False
        self.result: R | None = None
        self.error: BaseException | None = None


class Drain(Generic[T, R]):
    """``drain.submit(item)`` returns ``run([..., item, ...])``'s answer for ``item``."""

    def __init__(
        self,
        run: Callable[..., Sequence[R | BaseException]],
        max_weight: int,
        weight: Callable[[T], int] = lambda _item: 1,
        *,
        early_handoff: bool = False,
    ) -> None:
        """``run(items)`` answers a batch; with ``early_handoff`` it is called as
        ``run(items, hand_off)`` and may call ``hand_off()`` once the part that must not overlap is
        done (embedding), so the next batch starts while this one finishes (its commit)."""
        self._run = run
        self._early_handoff = early_handoff
        self._max_weight = max_weight
        self._weight = weight
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)  # notified when the last batch in progress ends
        self._pending: list[_Pending[T, R]] = []
        self._leading = False  # invariant: no leader means nothing is pending
        self._running = 0  # batches taken and not yet answered (several overlap with early hand-off)

    @property
    def waiting(self) -> int:
        """How many submitted items are not yet in a batch (for tests and metrics)."""
        with self._lock:
            return len(self._pending)

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until every item submitted so far is answered: nothing pending, no batch in
        progress (what closing the store behind the drain needs). Returns False on ``timeout``,
        and at once when called from inside one of this drain's batches (a listener of a write
        closing its engine), which would otherwise wait for itself."""
        if self in getattr(_inside, "drains", ()):
            return False
        with self._idle:
            return self._idle.wait_for(lambda: not self._pending and not self._leading and not self._running, timeout)

    def submit(self, item: T) -> R:
        """Run ``item`` in the next batch and return its answer; raises the exception it got."""
        request: _Pending[T, R] = _Pending(item)
        with self._lock:
            self._pending.append(request)
            if not self._leading:
                self._leading = request.lead = True
        if not request.lead:
            request.ready.wait()  # answered, or handed the lead
        if not request.done:
            self._lead()
        if request.error is not None:
            raise request.error
        return request.result  # type: ignore[return-value]

    def submit_soon(self, item: T) -> Future[R]:
        """Queue ``item`` without waiting: the future gets its answer (or its exception) once its
        batch is done. Cancelling the future before a batch takes the item leaves it out; after,
        the cancel fails and the item is run."""
        request: _Pending[T, R] = _Pending(item, Future())
        with self._lock:
            self._pending.append(request)
            start = not self._leading
            self._leading = True
        if start:
            self._start_leader()
        assert request.future is not None
        return request.future

    def _start_leader(self) -> None:
        _leader_pool().submit(self._lead)  # (the pool's threads finish the batch in progress at exit)

    def _lead(self) -> None:
        with self._lock:
            group: list[_Pending[T, R]] = []
            size = 0
            while self._pending:
                weight = self._weight(self._pending[0].item)
                if group and size + weight > self._max_weight:
                    break
                size += weight
                request = self._pending.pop(0)
                if request.future is None or request.future.set_running_or_notify_cancel():
                    group.append(request)  # (a future cancelled while queued is left out)
            self._running += 1
        handed = False

        def hand_off() -> None:
            nonlocal handed
            if handed:
                return
            handed = True
            with self._lock:
                if not self._pending:
                    self._leading = False
                    self._idle.notify_all()
                    return
                successor = self._pending[0]
                if successor.future is None:
                    successor.lead = True
                    successor.ready.set()
                    return
            self._start_leader()  # its caller is not waiting on a thread: one is started to lead

        if not group:  # every item taken was cancelled
            self._finished()
            hand_off()
            return
        inside = _inside.__dict__.setdefault("drains", [])
        inside.append(self)
        try:
            items = [r.item for r in group]
            answers = self._run(items, hand_off) if self._early_handoff else self._run(items)
            if len(answers) != len(group):
                raise RuntimeError(f"a batch of {len(group)} got {len(answers)} answers")
            for r, answer in zip(group, answers, strict=True):
                if isinstance(answer, BaseException):
                    r.error = answer
                else:
                    r.result = answer
        except BaseException as exc:  # every caller of this batch gets the failure, as if alone
            for r in group:
                r.error = exc
        finally:
            inside.remove(self)
        with self._lock:
            for r in group:
                r.done = True
                r.ready.set()
        for r in group:  # outside the lock: a future's callbacks may submit again
            if r.future is not None:
                if r.error is not None:
                    r.future.set_exception(r.error)
                else:
                    r.future.set_result(r.result)  # type: ignore[arg-type]
        self._finished()
        hand_off()

    def _finished(self) -> None:
        with self._lock:
            self._running -= 1
            self._idle.notify_all()
