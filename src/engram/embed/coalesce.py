"""Concurrent embedding calls become one batch: what lets many clients storing at once run at the
model's batch rate instead of each paying for a batch of one.

Threads (HTTP and MCP requests each run in one) hand their texts to a ``Coalescer``. The first
becomes the leader and calls the model; texts that arrive meanwhile wait, and when the call
returns the leader answers its own group and hands the lead to the first waiting thread, which
runs everything that queued up as one call (up to ``max_items`` texts; a request is never
split). Nobody waits for a timer: a lone caller runs at once, as before. Errors reach every
caller of the group that failed, and only them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np


class _Request:
    __slots__ = ("done", "error", "lead", "ready", "result", "texts")

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts
        self.ready = threading.Event()
        self.lead = False
        self.done = False
        self.result: np.ndarray | None = None
        self.error: BaseException | None = None


class Coalescer:
    """``coalescer(texts)`` returns ``call(texts)``'s rows; concurrent callers share calls."""

    def __init__(self, call: Callable[[list[str]], np.ndarray], max_items: int) -> None:
        self._call = call
        self._max_items = max_items
        self._lock = threading.Lock()
        self._pending: list[_Request] = []
        self._leading = False  # invariant: no leader means nothing is pending

    def __call__(self, texts: list[str]) -> np.ndarray:
        request = _Request(texts)
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
        assert request.result is not None
        return request.result

    def _lead(self) -> None:
        with self._lock:
            group, size = [], 0
            while self._pending and (not group or size + len(self._pending[0].texts) <= self._max_items):
                size += len(self._pending[0].texts)
                group.append(self._pending.pop(0))
        try:
            rows = self._call([t for r in group for t in r.texts])
            start = 0
            for r in group:
                r.result = rows[start : start + len(r.texts)]
                start += len(r.texts)
        except BaseException as exc:  # every caller of this group gets the failure, as if alone
            for r in group:
                r.error = exc
        with self._lock:
            for r in group:
                r.done = True
                r.ready.set()
            if self._pending:
                successor = self._pending[0]
                successor.lead = True
                successor.ready.set()
            else:
                self._leading = False
