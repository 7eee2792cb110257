"""Concurrent calls drained as one batch by whichever caller holds the lead: what lets many
clients storing at once share one model call and one transaction instead of each paying for its own.

Threads (HTTP and MCP requests each run in one) ``submit`` an item. The first becomes the leader
and runs the batch function on everything pending; items that arrive meanwhile wait, and when the
batch is done the leader answers its group and hands the lead to the first waiting thread, which
runs everything that queued up as the next batch (up to ``max_weight``; an item is never split).
So there is one leader at a time and a queue it drains, with no thread of its own and no timer:
a lone caller runs at once. With ``early_handoff`` the leader may pass the lead on before its batch
is finished (the write queue does once its texts are embedded, and commits meanwhile). The
batch function answers each item in its place, a result or the exception that item alone raises;
an exception out of the batch function reaches every caller of that batch, and only them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class _Pending(Generic[T, R]):
    __slots__ = ("done", "error", "item", "lead", "ready", "result")

    def __init__(self, item: T) -> None:
        self.item = item
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
        self._pending: list[_Pending[T, R]] = []
        self._leading = False  # invariant: no leader means nothing is pending

    @property
    def waiting(self) -> int:
        """How many submitted items are not yet in a batch (for tests and metrics)."""
        with self._lock:
            return len(self._pending)

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

    def _lead(self) -> None:
        with self._lock:
            group: list[_Pending[T, R]] = []
            size = 0
            while self._pending:
                weight = self._weight(self._pending[0].item)
                if group and size + weight > self._max_weight:
                    break
                size += weight
                group.append(self._pending.pop(0))
        handed = False

        def hand_off() -> None:
            nonlocal handed
            if handed:
                return
            handed = True
            with self._lock:
                if self._pending:
                    successor = self._pending[0]
                    successor.lead = True
                    successor.ready.set()
                else:
                    self._leading = False

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
        with self._lock:
            for r in group:
                r.done = True
                r.ready.set()
        hand_off()
