"""Prometheus metrics (``prometheus_client``): a few counters and one latency histogram, in the text format.

One process: the counts live in this ``Metrics`` (its own registry, so two services in one process never mix).
Under ``serve --workers N`` the supervisor gives the workers one directory (``PROMETHEUS_MULTIPROC_DIR``, see
``serve.workers``) where each writes its counts to memory-mapped files, and a scrape, whichever worker accepts
it, adds up every worker's files (``MultiProcessCollector``): one view of the server, counted once per request.
Counts of a worker that died and was restarted stay in the sum, as a counter's must.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from serpfuse.models import EngineReport

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
LATENCY_BUCKETS_S = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0)
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"  # prometheus_client's own name; read when it is first imported


class Metrics:
    """Counters the HTTP API and the search service update; ``render()`` is the /metrics body."""

    def __init__(self, *, workers: int | None = None) -> None:
        # Imported here, not with the module: the CLI imports the service for every command, and
        # prometheus_client brings http.server and wsgiref along (~25 ms) for its own exporters.
        import prometheus_client
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        prometheus_client.disable_created_metrics()  # no *_created series: the page keeps the names it had
        self.multiprocess_dir = os.environ.get(MULTIPROC_ENV) or None
        # Across workers the metrics belong to no registry: a scrape reads every worker's files instead.
        registry: CollectorRegistry | None = None if self.multiprocess_dir else CollectorRegistry()
        self._registry = registry
        self._children: dict[tuple[Any, tuple[str, ...]], Any] = {}
        self.requests = Counter(
            "serpfuse_http_requests", "HTTP requests by route and status code.", ("route", "status"),
            registry=registry,
        )  # fmt: skip
        self.latency = Histogram(
            "serpfuse_http_request_duration_seconds", "HTTP request latency by route.", ("route",),
            buckets=LATENCY_BUCKETS_S, registry=registry,
        )  # fmt: skip
        self.searches = Counter(
            "serpfuse_searches",
            "Searches by interface and outcome: results, empty, degraded, failed; cached or shared when no engine "
            "was asked for it.",
            ("interface", "outcome"),
            registry=registry,
        )
        self.engine_answers = Counter(
            "serpfuse_engine_answers", "Engine answers by engine and status.", ("engine", "status"),
            registry=registry,
        )  # fmt: skip
        self.cache = Counter(
            "serpfuse_cache_requests",
            "Result-cache lookups: hit, miss or bypass.",
            ("result",),
            registry=registry,
        )
        if workers:
            # Every worker sets the same value: "max" shows it once, whichever workers are alive.
            Gauge(
                "serpfuse_workers", "Server processes whose counts this page adds up.",
                registry=registry, multiprocess_mode="max",
            ).set(workers)  # fmt: skip

    def _labelled(self, metric: Any, *values: str) -> Any:
        """``metric.labels(*values)``, kept: ``labels()`` takes a lock and costs more than the count itself,
        and the label sets are few (routes, statuses, engines)."""
        key = (metric, values)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = metric.labels(*values)
        return child

    def observe_request(self, route: str, status: int, seconds: float) -> None:
        self._labelled(self.requests, route, str(status)).inc()
        self._labelled(self.latency, route).observe(seconds)

    def observe_engines(self, reports: Iterable[EngineReport]) -> None:
        for r in reports:
            self._labelled(self.engine_answers, r.engine, r.status).inc()

    def observe_cache(self, result: str) -> None:
        """``hit``, ``miss`` or ``bypass`` (--no-cache or no cache configured)."""
        self._labelled(self.cache, result).inc()

    def observe_search(self, interface: str, outcome: str) -> None:
        self._labelled(self.searches, interface, outcome).inc()

    def render(self) -> str:
        from prometheus_client import CollectorRegistry, generate_latest
        from prometheus_client.multiprocess import MultiProcessCollector

        registry = self._registry
        if registry is None:
            registry = CollectorRegistry()
            MultiProcessCollector(registry, path=self.multiprocess_dir)
        return generate_latest(registry).decode()


class Uncounted(Metrics):
    """The metrics of a process nobody scrapes (a one-shot ``serpfuse search``): nothing is counted, and
    prometheus_client (25-40 ms to import, a tenth of such a search) is never imported."""

    def __init__(self) -> None:
        self.multiprocess_dir = None
        self._registry = None

    def observe_request(self, route: str, status: int, seconds: float) -> None:
        return None

    def observe_engines(self, reports: Iterable[EngineReport]) -> None:
        return None

    def observe_cache(self, result: str) -> None:
        return None

    def observe_search(self, interface: str, outcome: str) -> None:
        return None

    def render(self) -> str:
        return ""
