"""In-process latency metrics (recall, embedding) with percentiles, persisted cheaply.

Each metric keeps its most recent ``samples`` durations in a bounded deque: recording is an
append, nothing touches the disk on the hot path. ``save`` merges this process's new samples into
a small JSON file beside the database (on close and after ``engram maintain``), so ``engram stats``
in a later process still shows percentiles; concurrent savers may drop a few samples, never
corrupt the file (atomic replace). Beside the samples each metric counts its durations since the
process started (how many, their sum): cumulative, as a Prometheus summary's ``_count`` and
``_sum`` must be, where the kept samples are a window that stops growing at ``samples``.
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger("engram.metrics")


@dataclass(frozen=True, slots=True)
class LatencySummary:
    name: str
    count: int
    p50_ms: float
    p95_ms: float
    p99_ms: float
    max_ms: float


# The durations the engine times: ``embedding`` (TimedEmbedder), ``recall`` (recalling.py).
TIMED = ("embedding", "recall")


@dataclass(frozen=True, slots=True)
class ObservedLatency:
    """One timed operation's figures for ``/metrics``: ``summary`` the percentiles ``engram stats``
    shows (None before any sample), ``count``/``total_s`` its durations since the process started."""

    name: str
    summary: LatencySummary | None
    count: int
    total_s: float


class Metrics:
    """Bounded latency samples per metric name (seconds), optionally persisted to ``path``."""

    def __init__(self, path: Path | None = None, samples: int = 1000) -> None:
        self.path = path
        self.samples = samples
        self._lock = threading.Lock()
        self._data: dict[str, deque[float]] = {}
        # Samples not yet saved: capped like ``_data``, since ``save`` keeps only the last ``samples``
        # anyway and a process that never saves (``engram mcp`` runs no maintenance; ``serve`` with
        # it off) would otherwise keep every duration it ever timed.
        self._new: dict[str, deque[float]] = {}
        self._totals: dict[str, tuple[int, float]] = {}  # name -> (count, sum in seconds) since start
        if path is not None:
            self._load(path)

    def _load(self, path: Path) -> None:
        try:
            stored = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError):
            return  # no file yet, or a damaged one: metrics are best effort
        for name, values in (stored.get("latency_s") or {}).items():
            if isinstance(values, list):
                self._data[name] = deque((float(v) for v in values if isinstance(v, int | float)), maxlen=self.samples)

    def record(self, name: str, seconds: float) -> None:
        with self._lock:
            self._data.setdefault(name, deque(maxlen=self.samples)).append(seconds)
            self._new.setdefault(name, deque(maxlen=self.samples)).append(seconds)
            count, total = self._totals.get(name, (0, 0.0))
            self._totals[name] = (count + 1, total + seconds)

    @contextmanager
    def timed(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.record(name, time.perf_counter() - start)

    def summary(self) -> list[LatencySummary]:
        with self._lock:
            items = {name: list(values) for name, values in self._data.items() if values}
        return [_summarise(name, values) for name, values in sorted(items.items())]

    def _samples(self, name: str) -> list[float]:
        with self._lock:
            return list(self._data.get(name, ()))

    def _total(self, name: str) -> tuple[int, float]:
        with self._lock:
            return self._totals.get(name, (0, 0.0))

    def save(self) -> None:
        """Merge new samples into the file (if any); failures are logged, never raised."""
        if self.path is None:
            return
        with self._lock:
            new, self._new = self._new, {}
        if not new:
            return
        from engram.store.jsonfile import atomic_write

        try:
            try:
                stored: dict[str, Any] = json.loads(self.path.read_text("utf-8"))
            except (OSError, ValueError):
                stored = {}
            latency = stored.get("latency_s") if isinstance(stored.get("latency_s"), dict) else {}
            for name, values in new.items():
                merged = [v for v in latency.get(name, []) if isinstance(v, int | float) and math.isfinite(v)]
                latency[name] = (merged + list(values))[-self.samples:]
            stored["latency_s"] = latency
            atomic_write(self.path, json.dumps(stored))
        except Exception:  # metrics must never fail the caller
            log.warning("could not save metrics to %s", self.path, exc_info=True)


def _summarise(name: str, values: Sequence[float]) -> LatencySummary:
    arr = np.asarray(values) * 1000.0
    p50, p95, p99 = (float(np.percentile(arr, q)) for q in (50, 95, 99))
    return LatencySummary(name, len(values), round(p50, 3), round(p95, 3), round(p99, 3), round(float(arr.max()), 3))


def observed(every: Sequence[Metrics], names: Sequence[str] = TIMED) -> list[ObservedLatency]:
    """Each of ``names`` over every ``Metrics`` given (each once: views share their engine's): the
    percentiles of their kept samples together, computed as ``summary`` does (one ``Metrics``: the
    very figures ``engram stats`` shows), and the counts and sums since start added up."""
    unique = list({id(m): m for m in every}.values())
    out = []
    for name in names:
        samples = [v for m in unique for v in m._samples(name)]
        totals = [m._total(name) for m in unique]
        out.append(ObservedLatency(name, _summarise(name, samples) if samples else None,
                                   sum(c for c, _ in totals), sum(t for _, t in totals)))
    return out


class TimedEmbedder:
    """Wraps an embedder so every ``embed`` / ``embed_query`` call is timed as ``embedding``."""

    def __init__(self, inner: Any, metrics: Metrics) -> None:
        self._inner = inner
        self._metrics = metrics

    @property
    def identity(self) -> Any:
        return self._inner.identity

    def embed(self, texts: list[str]) -> np.ndarray:
        with self._metrics.timed("embedding"):
            return self._inner.embed(texts)

    def embed_query(self, text: str) -> np.ndarray:
        with self._metrics.timed("embedding"):
            return self._inner.embed_query(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
