"""``python -m benchmarks --signal-cost``: what the content signals add to the ranking step, A/B in one process.

The cost target: the content signals add at most 0.2 ms per query to the ranking step on the crw56 replay
(median, measured in one run against the previous default). Two things are measured, per recorded query:

- **The ranking step A/B.** ``rank_answers`` with the default configuration (A) and with the signals that a
  configuration can switch off switched off (B: no anchor demotion, ``filters.anchor_demotion=1``; no
  content reliability, ``agree.content_power=0``). A and B take turns, ``repeat`` times each, after one warm
  call each; each keeps its fastest time, so a pause of the shared machine falls on neither.
- **The pool analysis beyond the plain reading.** The query's vocabulary learned from the pool (spellings,
  lemmas), wordfreq's specificity, the anchor and the echo rule run inside ``analyze_pool``, whatever the
  configuration, so B still pays for them. They are timed the same way against what the relevance guard
  needs without them: the query's terms as typed, found in each row (``found_terms``).

The table shows the medians over the queries of each time, of the per-query differences (A - B, and the
analysis beyond the plain reading) and of the per-query ratios. Times are CPU-bound and this machine is
shared: the ratios and differences are the figures to read, the absolute times only say what they are of.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.tables import Tables
from serpfuse.config import RankingConfig

RECORDING = "crw56/searxng_raw.json"
NOW = dt.datetime(2026, 5, 31, tzinfo=dt.UTC)
SIGNALS_OFF = {"filters": {"anchor_demotion": 1.0}, "agree": {"content_power": 0.0}}
TARGET_MS = 0.2


def signals_off(config: RankingConfig) -> RankingConfig:
    """``config`` with the switchable content signals off: no anchor demotion, no content reliability."""
    return config.model_copy(
        update={
            section: getattr(config, section).model_copy(update=knobs)
            for section, knobs in SIGNALS_OFF.items()
        }
    )


def recorded_queries(root: Path) -> list[str]:
    from serpfuse.sources.replay import load_recording

    return [recorded.query for recorded in load_recording(Path(root) / RECORDING).values()]


def replay_cases(root: Path) -> list[tuple[Any, Any, list]]:
    """(request, analysed query, engine answers) for every recorded crw56 query, as the pipeline fans out."""
    from serpfuse.models import SearchRequest
    from serpfuse.ranking.query import analyze_query
    from serpfuse.sources.fanout import fan_out
    from serpfuse.sources.replay import ReplaySource, load_recording

    path = Path(root) / RECORDING
    source = ReplaySource(path)

    async def answers() -> list:
        out = []
        for recorded in load_recording(path).values():
            request = SearchRequest(query=recorded.query)
            query = analyze_query(recorded.query)
            out.append((request, query, (await fan_out(source, request, query)).answers))
        return out

    return asyncio.run(answers())


def fastest(calls: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """Each call's fastest time in ms over ``repeat`` rounds, after one warm call each. The calls take turns,
    in reverse order every other round: the first call of a round runs a little slower (measured: +0.01 ms
    when A and B are the same configuration), and no call should always be first."""
    for call in calls.values():
        call()
    best = dict.fromkeys(calls, float("inf"))
    order = list(calls.items())
    for round_ in range(repeat):
        for name, call in order if round_ % 2 == 0 else order[::-1]:
            t0 = time.perf_counter()
            call()
            best[name] = min(best[name], time.perf_counter() - t0)
    return {name: seconds * 1000 for name, seconds in best.items()}


def measure(root: Path, repeat: int = 5, tick: Callable[[], None] | None = None) -> dict[str, Any]:
    """Per-query times of the A/B and of the pool analysis (see the module doc), and their medians."""
    from serpfuse.pipeline import rank_answers
    from serpfuse.ranking.candidates import build_candidates
    from serpfuse.ranking.pool import analyze_pool
    from serpfuse.ranking.words import RowText, found_terms, query_terms

    on = RankingConfig()
    off = signals_off(on)
    per_query = []
    for request, query, answers in replay_cases(root):
        candidates, _ = build_candidates(answers, query)

        def plain_reading(candidates=candidates, query=query) -> object:
            terms = query_terms(query)
            return [found_terms(terms, RowText.of_candidate(c)) for c in candidates]

        times = fastest(
            {
                "default": lambda r=request, q=query, a=answers: rank_answers(
                    a, r, config=on, query=q, now=NOW
                ),
                "off": lambda r=request, q=query, a=answers: rank_answers(a, r, config=off, query=q, now=NOW),
                "analysis": lambda c=candidates, q=query, r=request: analyze_pool(c, q, r.language),
                "plain": plain_reading,
            },
            repeat,
        )
        per_query.append({"query": request.query, "cjk": query.is_cjk, **times})
        if tick:
            tick()
    return {"repeat": repeat, "queries": per_query, "medians": medians(per_query)}


def medians(per_query: list[dict[str, Any]]) -> dict[str, float]:
    def med(values) -> float:
        return statistics.median(list(values))

    return {
        "default_ms": med(q["default"] for q in per_query),
        "off_ms": med(q["off"] for q in per_query),
        "difference_ms": med(q["default"] - q["off"] for q in per_query),
        "ratio": med(q["default"] / q["off"] for q in per_query),
        "analysis_ms": med(q["analysis"] for q in per_query),
        "plain_ms": med(q["plain"] for q in per_query),
        "analysis_beyond_plain_ms": med(q["analysis"] - q["plain"] for q in per_query),
        "added_ms": med(q["default"] - q["off"] + q["analysis"] - q["plain"] for q in per_query),
    }


def table(result: dict[str, Any]) -> Tables:
    m = result["medians"]
    added = m["added_ms"]
    rows = [
        ["ranking step, default (A)", f"{m['default_ms']:.3f} ms", ""],
        ["ranking step, anchor demotion and content reliability off (B)", f"{m['off_ms']:.3f} ms", ""],
        ["A - B, per query", f"{m['difference_ms']:+.3f} ms", f"A ÷ B {m['ratio']:.3f}"],
        ["pool analysis (analyze_pool)", f"{m['analysis_ms']:.3f} ms", ""],
        ["plain reading (terms as typed, found in each row)", f"{m['plain_ms']:.3f} ms", ""],
        ["analysis beyond the plain reading, per query", f"{m['analysis_beyond_plain_ms']:+.3f} ms", ""],
        [
            "the content signals in all (A - B + analysis beyond), per query",
            f"{added:+.3f} ms",
            f"target ≤ {TARGET_MS} ms: {'met' if added <= TARGET_MS else 'NOT met'}",
        ],
    ]
    note = (
        f"crw56 replay, {len(result['queries'])} recorded queries, each call's fastest of {result['repeat']} "
        f"rounds taking turns after a warm call; medians over the queries (differences and ratios taken per "
        f"query first). One process, this machine, now: rerun with `make bench-cost`."
    )
    return Tables(result, [("content signals: ranking step A/B", ["what", "median", ""], rows, 1)], note)
