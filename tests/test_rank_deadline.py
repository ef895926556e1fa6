"""The ranking runs under the search's deadline: a ranking still running at deadline + ``RANK_GRACE_S`` is
given up, and the search answers with ``fallback_ranking`` (the caller's constraints and plain RRF, linear in
the rows), saying so. In a thread it is abandoned (a daemon: a one-shot search still exits at once); in the
ranking worker the worker is killed and replaced (``test_workers_ranking``)."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import textwrap
import time

import pytest

from serpfuse import pipeline
from serpfuse.config import RankingConfig
from serpfuse.models import EngineAnswer, SearchRequest
from serpfuse.pipeline import fell_back, search
from serpfuse.sources.base import EngineSlot, SourceBase
from test_engine_names_cap import broker_answer
from test_fast_paths import NOW

DEADLINE_S = 0.5
RANKING_S = 12.0  # far past the deadline: a search that waited for it cannot pass for one that did not


class BrokerSource(SourceBase):
    """One engine answering at once, SearXNG-like: 100 results, each seen by 32 engines of its own."""

    name = "broker"

    def __init__(self) -> None:
        self.answer = broker_answer()[0]

    def slots(self, request: SearchRequest) -> list[EngineSlot]:
        return [EngineSlot(name="searxng")]

    async def ask(self, engine: str, variant: str, request: SearchRequest) -> EngineAnswer:
        return self.answer

    async def aclose(self) -> None:
        return None


def slow(seconds: float):
    """``rank_answers``, but only after ``seconds`` of sleep: a ranking that runs long."""
    plain = pipeline.rank_answers

    @functools.wraps(plain)
    def ranking(*args, **kwargs):
        time.sleep(seconds)
        return plain(*args, **kwargs)

    return ranking


@pytest.fixture
def source():
    pipeline.load_tables_for()  # once per process, and not held to the deadline: out of the timing
    return BrokerSource()


async def test_a_ranking_past_the_deadline_gives_way_to_plain_rrf(source, monkeypatch) -> None:
    monkeypatch.setattr(pipeline, "rank_answers", slow(RANKING_S))
    request = SearchRequest(query="rust async runtime", exclude_domains=["site3.example"], limit=8)
    t0 = time.perf_counter()
    got = await search(request, source=source, config=RankingConfig(), deadline_s=DEADLINE_S, now=NOW)
    took = time.perf_counter() - t0
    # Not a timing of the fallback (a shared machine stretches it): the search did not wait for the ranking.
    assert DEADLINE_S <= took < RANKING_S / 2, took
    assert fell_back(got) and got.strategy == "rrf"
    assert len(got.results) == 8
    assert "site3.example" not in {r.domain for r in got.results}  # the caller's constraints still hold
    assert all("ran past the deadline" in r.reason for r in got.results)
    ranks = [r.score for r in got.results]
    assert ranks == sorted(ranks, reverse=True)


def test_the_fallback_is_plain_rrf():
    """Past the deadline the ranks alone decide, as the answer's reason ("plain RRF") says: none of the rrf
    ranker's boosts or tie-breaks, which applied there before."""
    config = pipeline.plain_rrf(RankingConfig(weights={"bing": 0.5}))
    rrf = config.rrf
    assert config.strategy == "rrf" and rrf.rrf_constant == RankingConfig().rrf.rrf_constant
    assert (rrf.authority_boost, rrf.freshness_boost, rrf.interleave, rrf.region_policy) == (
        0,
        0,
        False,
        False,
    )
    assert rrf.weights == {} and config.weight_of("bing") == 0.5  # the operator's learned weights still hold


async def test_a_ranking_in_time_is_the_ranking(source, monkeypatch) -> None:
    request = SearchRequest(query="rust async runtime", limit=8)
    plain = await search(request, source=source, config=RankingConfig(), deadline_s=DEADLINE_S, now=NOW)
    monkeypatch.setattr(pipeline, "rank_answers", slow(0.05))
    later = await search(request, source=source, config=RankingConfig(), deadline_s=DEADLINE_S, now=NOW)
    assert not fell_back(plain) and not fell_back(later)
    assert [r.url for r in later.results] == [r.url for r in plain.results]


def test_a_one_shot_search_exits_though_its_ranking_was_abandoned(tmp_path) -> None:
    """The abandoned ranking is a daemon thread: the process ends when the search has answered."""
    script = textwrap.dedent(
        """
        import asyncio, time
        from serpfuse import pipeline
        from test_rank_deadline import BrokerSource, slow
        from serpfuse.models import EngineAnswer, SearchRequest
        pipeline.rank_answers = slow(60.0)
        got = asyncio.run(pipeline.search(SearchRequest(query="rust"), source=BrokerSource(), deadline_s=0.3))
        print(pipeline.fell_back(got), len(got.results))
        """
    )
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    took = time.perf_counter() - t0
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["True", "8"]
    assert took < 30, took  # far from the 60 s the abandoned ranking would hold an executor's thread
