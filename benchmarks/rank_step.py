"""The ranking step alone, warm: `rank_answers` on each crw56 query's recorded answers, best of 7 calls, the median
over the 56 queries. Run it for two trees side by side (alternating, on the same machine) to compare them:

    PYTHONPATH=/tmp/other/src .venv/bin/python -m benchmarks.rank_step before
    .venv/bin/python -m benchmarks.rank_step after

(`git worktree add /tmp/other REV` makes the other tree.) It prints one line; timings mean something only as a
ratio of two runs made together.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import statistics
import sys
import time
from pathlib import Path

from serpfuse.config import RankingConfig
from serpfuse.models import SearchRequest
from serpfuse.pipeline import rank_answers
from serpfuse.sources.replay import ReplaySource

try:  # the layout before the ranking wing, for older trees
    from serpfuse.ranking.query import analyze_query
    from serpfuse.sources.fanout import fan_out
except ImportError:  # pragma: no cover
    from serpfuse.fanout import fan_out
    from serpfuse.query import analyze_query

NOW = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def main(label: str = "this tree") -> float:
    recording = Path(os.environ.get("SERPFUSE_DATA", "../shared/data")) / "crw56" / "searxng_raw.json"
    source, config = ReplaySource(recording), RankingConfig()
    queries = [e["query"] for e in json.loads(recording.read_text(encoding="utf-8"))]

    async def answers():
        out = []
        for q in queries:
            request, query = SearchRequest(query=q), analyze_query(q)
            out.append((request, query, (await fan_out(source, request, query)).answers))
        return out

    medians = []
    for request, query, got in asyncio.run(answers()):
        best = float("inf")
        for _ in range(7):
            t0 = time.perf_counter()
            rank_answers(got, request, config=config, query=query, now=NOW)
            best = min(best, time.perf_counter() - t0)
        medians.append(best * 1000)
    value = statistics.median(medians)
    print(f"{label}: ranking step, warm, median per crw56 query {value:.3f} ms")
    return value


if __name__ == "__main__":
    main(*sys.argv[1:2])
