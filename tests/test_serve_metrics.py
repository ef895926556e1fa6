"""The /metrics page (``serve.metrics``): its names, one process's counts, and several processes' counts added up
through a shared directory (what ``serve --workers N`` sets up; the real server is in test_workers.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from serpfuse.models import EngineReport
from serpfuse.state.metrics import MULTIPROC_ENV, Metrics


def value(page: str, sample: str) -> float | None:
    found = re.search(rf"^{re.escape(sample)} (\S+)$", page, re.M)
    return float(found[1]) if found else None


def test_one_process_page_keeps_its_names_and_counts() -> None:
    metrics = Metrics()
    metrics.observe_request("native", 200, 0.03)
    metrics.observe_request("native", 200, 2.0)
    metrics.observe_cache("hit")
    metrics.observe_search("http", "results")
    metrics.observe_engines(
        [EngineReport(engine="google", status="ok"), EngineReport(engine="bing", status="ok")]
    )
    page = metrics.render()
    assert value(page, 'serpfuse_http_requests_total{route="native",status="200"}') == 2
    assert value(page, 'serpfuse_http_request_duration_seconds_bucket{le="0.05",route="native"}') == 1
    assert value(page, 'serpfuse_http_request_duration_seconds_bucket{le="+Inf",route="native"}') == 2
    assert value(page, 'serpfuse_http_request_duration_seconds_sum{route="native"}') == 2.03
    assert value(page, 'serpfuse_cache_requests_total{result="hit"}') == 1
    assert value(page, 'serpfuse_searches_total{interface="http",outcome="results"}') == 1
    assert value(page, 'serpfuse_engine_answers_total{engine="bing",status="ok"}') == 1
    assert "_created" not in page
    assert Metrics().render().count("} ") == 0  # each service counts alone: a new one starts at nothing


def test_processes_sharing_a_directory_are_counted_once_each_on_every_page(tmp_path) -> None:
    env = {**os.environ, MULTIPROC_ENV: str(tmp_path)}
    count = (
        "import sys\nfrom serpfuse.state.metrics import Metrics\n"
        "m = Metrics(workers=3)\n"
        "for _ in range(int(sys.argv[1])): m.observe_request('openapi', 200, 0.01)\n"
        "m.observe_cache('miss')\n"
    )
    for requests in (2, 3, 5):  # three workers, one after another (a dead worker's counts stay in the sum)
        subprocess.run([sys.executable, "-c", count, str(requests)], check=True, env=env)
    scrape = "from serpfuse.state.metrics import Metrics\nprint(Metrics(workers=3).render())"
    page = subprocess.run(
        [sys.executable, "-c", scrape], check=True, env=env, capture_output=True, text=True
    ).stdout
    assert value(page, 'serpfuse_http_requests_total{route="openapi",status="200"}') == 10
    assert value(page, 'serpfuse_http_request_duration_seconds_count{route="openapi"}') == 10
    assert value(page, 'serpfuse_cache_requests_total{result="miss"}') == 3
    assert value(page, "serpfuse_workers") == 3
