"""Readiness: whether the start-up work of ``engram serve`` has finished (``GET /readyz``).

``/healthz`` is liveness: it answers at once, from the first moment the socket listens, so a
supervisor never restarts a process that is merely busy starting. A deployment that routes traffic
needs the other question, the one Kubernetes asks ``/readyz``: is the start-up work done? That work
is named steps - ``store`` (opening the database: its integrity check and migrations, then the
app), ``model`` (loading the embedding model, then embedding memories a crash left without a
vector) and ``maintenance`` (the first pass of due upkeep jobs, when the server runs them). Each
step is marked done, or failed with its error, by whoever runs it; the answer is 503 naming what is
pending (with ``Retry-After``) while any is, then 200. A step that failed leaves it 200 with the
status ``degraded`` naming the failure: the server serves every request (a model that did not load
leaves full-text recall; a maintenance pass that failed is retried at its interval), and a
readiness probe that went on failing would take a server that can answer out of rotation for
good, where a restart would only run the same step into the same error.

Plain Python and a lock: the responder that answers before the web framework is imported
(``starting``) answers ``/readyz`` from the same object.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

STEPS = {
    "store": "opening the database (integrity check, migrations) and the app",
    "model": "loading the embedding model and embedding memories stored without a vector",
    "maintenance": "the first pass of due maintenance jobs",
}


class Readiness:
    """Start-up steps still pending, and the ones that failed; thread-safe."""

    def __init__(self, steps: Iterable[str] = ()) -> None:
        self._lock = threading.Lock()
        self._pending = list(dict.fromkeys(steps))
        self._failed: dict[str, str] = {}

    def done(self, step: str) -> None:
        """``step`` finished (a step not pending is ignored: marking twice changes nothing)."""
        with self._lock:
            if step in self._pending:
                self._pending.remove(step)

    def failed(self, step: str, error: BaseException) -> None:
        """``step`` failed with ``error``: ``/readyz`` names it (``degraded``) from now on."""
        with self._lock:
            if step in self._pending:
                self._pending.remove(step)
            self._failed[step] = f"{type(error).__name__}: {error}"

    def answer(self) -> tuple[int, dict[str, Any], dict[str, str]]:
        """``(status, body, headers)`` for ``GET /readyz``."""
        with self._lock:
            pending, failed = list(self._pending), dict(self._failed)
        if pending:
            said = "; ".join(STEPS.get(step, step) for step in pending)
            body: dict[str, Any] = {"status": "starting", "pending": pending, "detail": f"engram is still starting: {said}"}
            if failed:
                body["failed"] = failed
            return 503, body, {"retry-after": "1"}
        if failed:
            said = "; ".join(f"{step} ({STEPS.get(step, step)}) failed: {why}" for step, why in failed.items())
            return 200, {"status": "degraded", "failed": failed,
                         "detail": f"engram serves, but a start-up step failed (the log has its traceback): {said}"}, {}
        return 200, {"status": "ready"}, {}
