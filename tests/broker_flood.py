"""``python tests/broker_flood.py``: a broker's answer of 100 results, each naming 32 engines of its own, as
SearXNG could send it. Prints the ranking step's time on it (the process's first ranking, after the word tables
loaded as a search loads them while its engines are asked; then the median of five more, each on rows built anew,
so no row's text is memoised) and the wall time of a one-shot ``serpfuse search`` process over it, the answer
served by a loopback fake reached through SearXNG's base URL setting, as a user would set it.

The hardening issue's figures (BENCHMARKS.md "Reliability"): ranked in < 50 ms, the one-shot search < 2.5 s.
Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from fakeserver import FakeServer, Reply  # noqa: E402
from redis_server import free_port  # noqa: E402
from serpfuse.config import RankingConfig  # noqa: E402
from serpfuse.engines import base_url_env  # noqa: E402
from serpfuse.models import SearchRequest  # noqa: E402
from serpfuse.pipeline import load_tables_for, rank_answers  # noqa: E402
from serpfuse.ranking.query import analyze_query  # noqa: E402
from test_engine_names_cap import QUERY, broker_answer  # noqa: E402

RESULTS, NAMES = 100, 32


def searxng_body() -> bytes:
    """The same rows as ``broker_answer``, in SearXNG's JSON: one result per page, its engines and positions."""
    results = [
        {
            "url": f"https://site{i}.example/page",
            "title": f"rust async runtime page {i}",
            "content": "tokio and async-std compared for the rust async runtime",
            "engine": f"e{i}-0",
            "engines": [f"e{i}-{j}" for j in range(NAMES)],
            "positions": [i + 1] * NAMES,
        }
        for i in range(RESULTS)
    ]
    return json.dumps({"query": QUERY, "results": results}).encode()


def ranking_ms() -> tuple[float, float]:
    load_tables_for(None)
    config, request, query = RankingConfig(), SearchRequest(query=QUERY), analyze_query(QUERY)
    times = []
    for _ in range(6):
        answers = broker_answer(RESULTS, NAMES)  # new rows: nothing memoised from the last ranking
        t0 = time.perf_counter()
        rank_answers(answers, request, config=config, query=query)
        times.append((time.perf_counter() - t0) * 1000)
    return times[0], statistics.median(times[1:])


def one_shot_s(runs: int = 3) -> tuple[float, int]:
    """Median wall seconds of ``serpfuse search --engine searxng`` over the flood, and its result count."""
    walls, count = [], 0
    with FakeServer(lifetime_s=120) as fake, tempfile.TemporaryDirectory() as tmp:
        fake.route("/search", Reply(200, {"Content-Type": "application/json"}, searxng_body()))
        dead = f"http://127.0.0.1:{free_port()}"
        env = {**os.environ, base_url_env("searxng"): fake.url, "SERPFUSE_CACHE_DIR": tmp}
        env |= {"NO_PROXY": "127.0.0.1,localhost"}
        env |= {k: dead for k in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy")}
        cmd = [sys.executable, "-c", "from serpfuse.cli import main; main()", "search", QUERY]
        cmd += ["--engine", "searxng", "--no-cache", "--json"]
        for _ in range(runs):
            t0 = time.perf_counter()
            done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
            walls.append(time.perf_counter() - t0)
            if done.returncode != 0:
                raise SystemExit(f"serpfuse search failed: {done.stderr.strip()[-300:]}")
            count = len(json.loads(done.stdout)["results"])
    return statistics.median(walls), count


def main() -> None:
    first, later = ranking_ms()
    wall, count = one_shot_s()
    print(f"{RESULTS} results x {NAMES} engine names each")
    print(f"ranking step on new rows: {first:.1f} ms the process's first, then {later:.1f} ms (median of 5)")
    print(f"one-shot serpfuse search over it (median of 3 processes): {wall:.2f} s, {count} results")


if __name__ == "__main__":
    main()
