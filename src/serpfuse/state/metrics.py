"""Prometheus metrics in the text exposition format (0.0.4), written by hand: a few counters and one histogram.

Per process. Under ``serve --workers N`` each worker counts alone and a scrape of the shared port reaches
whichever worker accepts it, so each page names its worker (``serpfuse_worker_info{pid, workers}``). Counts are
not added up across workers: that would cost every request a write to a shared store.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterable

from serpfuse.models import EngineReport

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
LATENCY_BUCKETS_S = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0)

Labels = tuple[tuple[str, str], ...]


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(labels: Labels) -> str:
    if not labels:
        return ""
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in labels) + "}"


def _number(value: float) -> str:
    if value == float("inf"):
        return "+Inf"
    return repr(float(value)) if not float(value).is_integer() else str(int(value))


class Histogram:
    def __init__(self, buckets: Iterable[float] = LATENCY_BUCKETS_S) -> None:
        self.buckets = tuple(sorted(buckets))
        self.counts = [0] * len(self.buckets)
        self.total = 0
        self.sum = 0.0

    def observe(self, value: float) -> None:
        self.total += 1
        self.sum += value
        for i, bound in enumerate(self.buckets):
            if value <= bound:
                self.counts[i] += 1  # cumulative, as the format wants


class Metrics:
    """Counters the HTTP API and the search service update; ``render()`` is the /metrics body."""

    def __init__(self, *, workers: int | None = None) -> None:
        self.workers = workers  # serve --workers N: this is one of N processes, and says so on its page
        self.requests: dict[Labels, int] = defaultdict(int)
        self.latency: dict[Labels, Histogram] = {}
        self.engine_answers: dict[Labels, int] = defaultdict(int)
        self.cache: dict[Labels, int] = defaultdict(int)
        self.searches: dict[Labels, int] = defaultdict(int)

    def observe_request(self, route: str, status: int, seconds: float) -> None:
        self.requests[(("route", route), ("status", str(status)))] += 1
        key = (("route", route),)
        self.latency.setdefault(key, Histogram()).observe(seconds)

    def observe_engines(self, reports: Iterable[EngineReport]) -> None:
        for r in reports:
            self.engine_answers[(("engine", r.engine), ("status", r.status))] += 1

    def observe_cache(self, result: str) -> None:
        """``hit``, ``miss`` or ``bypass`` (--no-cache or no cache configured)."""
        self.cache[(("result", result),)] += 1

    def observe_search(self, interface: str, outcome: str) -> None:
        self.searches[(("interface", interface), ("outcome", outcome))] += 1

    def render(self) -> str:
        lines: list[str] = []

        def counter(name: str, help_text: str, values: dict[Labels, int]) -> None:
            lines.append(f"# HELP {name} {help_text}")
            lines.append(f"# TYPE {name} counter")
            for labels, value in sorted(values.items()):
                lines.append(f"{name}{_labels(labels)} {value}")

        if self.workers:
            name = "serpfuse_worker_info"
            lines.append(
                f"# HELP {name} This page is one worker's of {self.workers}: every count on it is its own."
            )
            lines.append(f"# TYPE {name} gauge")
            lines.append(f'{name}{{pid="{os.getpid()}",workers="{self.workers}"}} 1')
        counter("serpfuse_http_requests_total", "HTTP requests by route and status code.", self.requests)
        name = "serpfuse_http_request_duration_seconds"
        lines.append(f"# HELP {name} HTTP request latency by route.")
        lines.append(f"# TYPE {name} histogram")
        for labels, hist in sorted(self.latency.items()):
            for bound, count in zip(hist.buckets, hist.counts, strict=True):
                lines.append(f"{name}_bucket{_labels((*labels, ('le', _number(bound))))} {count}")
            lines.append(f"{name}_bucket{_labels((*labels, ('le', '+Inf')))} {hist.total}")
            lines.append(f"{name}_sum{_labels(labels)} {_number(hist.sum)}")
            lines.append(f"{name}_count{_labels(labels)} {hist.total}")
        counter("serpfuse_searches_total", "Searches by interface and outcome.", self.searches)
        counter("serpfuse_engine_answers_total", "Engine answers by engine and status.", self.engine_answers)
        counter("serpfuse_cache_requests_total", "Result-cache lookups: hit, miss or bypass.", self.cache)
        return "\n".join(lines) + "\n"
