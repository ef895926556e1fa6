"""The ranking step alone: `rank_answers` on each crw56 query's recorded answers, the median over the 56 queries,
warm (best of 7 calls: every per-text memo filled) and cold (one call after every bounded memo is emptied, so
its rows, words and hosts are new, as a live search's are; ``perf_probe.clear_memos``). Run it for two trees
side by side (alternating, on the same machine) to compare them:

    PYTHONPATH=/tmp/other/src:. .venv/bin/python -m benchmarks.rank_step before
    .venv/bin/python -m benchmarks.rank_step after

(`git archive REV src | tar -x -C /tmp/other` makes the other tree.) It prints one line; timings mean something
only as a ratio of two runs made together. Cold and warm give the same responses (checked).
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

from benchmarks.perf_probe import clear_memos
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


def main(label: str = "this tree") -> tuple[float, float]:
    recording = Path(os.environ.get("SERPFUSE_DATA", "../shared/data")) / "crw56" / "searxng_raw.json"
    source, config = ReplaySource(recording), RankingConfig()
    queries = [e["query"] for e in json.loads(recording.read_text(encoding="utf-8"))]

    async def answers():
        out = []
        for q in queries:
            request, query = SearchRequest(query=q), analyze_query(q)
            out.append((request, query, (await fan_out(source, request, query)).answers))
        return out

    cases = asyncio.run(answers())
    warm, cold = [], []
    for request, query, got in cases:  # loads the tables; not timed
        rank_answers(got, request, config=config, query=query, now=NOW)
    for request, query, got in cases:
        clear_memos()
        t0 = time.perf_counter()
        first = rank_answers(got, request, config=config, query=query, now=NOW)
        cold.append((time.perf_counter() - t0) * 1000)
        best = float("inf")
        for _ in range(7):
            t0 = time.perf_counter()
            again = rank_answers(got, request, config=config, query=query, now=NOW)
            best = min(best, time.perf_counter() - t0)
        if again.model_dump(exclude={"took_ms"}) != first.model_dump(exclude={"took_ms"}):
            raise SystemExit(f"cold and warm rankings differ for {request.query!r}")
        warm.append(best * 1000)
    w, c = statistics.median(warm), statistics.median(cold)
    print(f"{label}: ranking step, median per crw56 query: warm {w:.3f} ms, cold {c:.3f} ms")
    return w, c


if __name__ == "__main__":
    main(*sys.argv[1:2])
