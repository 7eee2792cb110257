"""Concurrent embedding calls become one batch: what lets many clients storing at once run at the
model's batch rate instead of each paying for a batch of one.

Threads hand their texts to a ``Coalescer``, a ``Drain`` (``engram.drain``) whose items are
requests weighted by their number of texts: the caller holding the lead calls the model on
everything that queued up (up to ``max_items`` texts; a request is never split) and splits the
rows back. Nobody waits for a timer: a lone caller runs at once. Errors reach every caller of the
group that failed, and only them.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from engram.drain import Drain


class Coalescer:
    """``coalescer(texts)`` returns ``call(texts)``'s rows; concurrent callers share calls."""

    def __init__(self, call: Callable[[list[str]], np.ndarray], max_items: int) -> None:
        self._call = call
        self._drain: Drain[list[str], np.ndarray] = Drain(self._run, max_items, weight=len)

    @property
    def waiting(self) -> int:
        """Requests queued behind the call in progress."""
        return self._drain.waiting

    def __call__(self, texts: list[str]) -> np.ndarray:
        return self._drain.submit(texts)

    def _run(self, group: list[list[str]]) -> list[np.ndarray]:
        rows = self._call([t for texts in group for t in texts])
        out, start = [], 0
        for texts in group:
            out.append(rows[start : start + len(texts)])
            start += len(texts)
        return out
