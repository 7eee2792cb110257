"""Prometheus metrics: requests by route and status, their latency, and the store's figures
(memories, storage size, embedding and recall latency), which the engine computes (``StoreWide``):
this module only spells them in the exposition format."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric, SummaryMetricFamily
from prometheus_client.samples import Sample

from engram.agent_databases import StoreWide, StoreWideFigures
from engram.engine import Engram


class Metrics:
    """One registry per app, so two servers in one process (tests) never share counters."""

    def __init__(self, engram: Engram, *, max_age_s: float = 0.0) -> None:
        """``max_age_s``: how old the memory count and storage size may be (``StoreWide``)."""
        self.registry = CollectorRegistry()
        self.requests = Counter("engram_http_requests_total", "HTTP requests", ["method", "route", "status"],
                                registry=self.registry)
        self.latency = Histogram("engram_http_request_seconds", "HTTP request latency", ["method", "route"],
                                 registry=self.registry,
                                 buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5))
        self.registry.register(StoreCollector(StoreWide(engram, max_age_s=max_age_s)))

    def render(self) -> bytes:
        return generate_latest(self.registry)


class StoreCollector:
    """The store's figures (``StoreWide``: the count and size at most ``max_age_s`` old, with their age)."""

    def __init__(self, figures: Callable[[], StoreWideFigures]) -> None:
        self._figures = figures

    def collect(self) -> Iterator[Metric]:
        found = self._figures()
        yield GaugeMetricFamily("engram_memories", "Memories stored (all agents; a global one once)", value=found.memories)
        yield GaugeMetricFamily("engram_storage_bytes", "Size of the store's files or tables (every database in the home)",
                                value=found.size_bytes)
        yield GaugeMetricFamily("engram_store_figures_age_seconds", "How long ago engram_memories and "
                                "engram_storage_bytes were counted (server.metrics_max_age_s)", value=found.age_s)
        for item in found.latency:
            name = f"engram_{item.name}_seconds"
            family = SummaryMetricFamily(name, f"{item.name.capitalize()} latency: quantiles over the samples kept "
                                               "(engram stats), count and sum since the server started",
                                         count_value=item.count, sum_value=item.total_s)
            # NaN quantiles before any sample, as prometheus_client's own summaries would have them.
            for quantile, ms in (("0.5", item.summary and item.summary.p50_ms), ("0.95", item.summary and item.summary.p95_ms),
                                 ("0.99", item.summary and item.summary.p99_ms)):
                family.samples.append(Sample(name, {"quantile": quantile}, math.nan if ms is None else ms / 1000.0))
            yield family


def _route_name(scope: dict[str, Any]) -> str:
    # The router records the matched route in the (shared) scope: label by its template, so
    # /api/v1/memory/{ref} is one series however many ids are asked for.
    route = scope.get("route")
    return str(getattr(route, "path", None) or ("static" if scope["path"].startswith("/static") else "unmatched"))


class MetricsMiddleware:
    def __init__(self, app: Any, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = [500]

        async def tracking_send(message: Any) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        finally:
            route = _route_name(scope)
            self.metrics.requests.labels(scope["method"], route, str(status[0])).inc()
            self.metrics.latency.labels(scope["method"], route).observe(time.perf_counter() - start)
