"""Prometheus metrics: requests by route and status, their latency, and stored memories."""

from __future__ import annotations

import time
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from engram.agent_databases import StoreWideCount
from engram.engine import Engram


class Metrics:
    """One registry per app, so two servers in one process (tests) never share counters."""

    def __init__(self, engram: Engram) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter("engram_http_requests_total", "HTTP requests", ["method", "route", "status"],
                                registry=self.registry)
        self.latency = Histogram("engram_http_request_seconds", "HTTP request latency", ["method", "route"],
                                 registry=self.registry,
                                 buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5))
        memories = Gauge("engram_memories", "Memories stored (all agents; a global one once)", registry=self.registry)
        memories.set_function(StoreWideCount(engram))

    def render(self) -> bytes:
        return generate_latest(self.registry)


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
