"""In-process latency metrics (recall, embedding) with percentiles, persisted cheaply.

Each metric keeps its most recent ``samples`` durations in a bounded deque: recording is an
append, nothing touches the disk on the hot path. ``save`` merges this process's new samples into
a small JSON file beside the database (on close and after ``engram maintain``), so ``engram stats``
in a later process still shows percentiles; concurrent savers may drop a few samples, never
corrupt the file (atomic replace).
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from collections import deque
from collections.abc import Iterator
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
        out = []
        for name, values in sorted(items.items()):
            arr = np.asarray(values) * 1000.0
            p50, p95, p99 = (float(np.percentile(arr, q)) for q in (50, 95, 99))
            out.append(LatencySummary(name, len(values), round(p50, 3), round(p95, 3), round(p99, 3),
                                      round(float(arr.max()), 3)))
        return out

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
