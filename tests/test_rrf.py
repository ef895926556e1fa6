"""Seed 000's ranker: weighted RRF, authority and freshness boosts, weighted round-robin, region policy.

Expected values are written as the formula, so they can be checked against the seed by eye.
"""

from __future__ import annotations

import datetime as dt

import pytest

from serpfuse.config import RankingConfig
from serpfuse.models import Observation, SearchRequest
from serpfuse.ranking.context import RankContext
from serpfuse.ranking.query import analyze_query
from serpfuse.ranking.rankers.rrf import RANKER, freshness, interleave_order
from serpfuse.ranking.types import Candidate

NOW = dt.datetime(2026, 6, 1, tzinfo=dt.UTC)


def cand(key: str, host: str, ranks: dict[str, int], published: dt.datetime | None = None) -> Candidate:
    obs = [Observation(engine=e, rank=r, url=f"https://{host}/{key}") for e, r in ranks.items()]
    return Candidate(
        key=key, url=f"https://{host}/{key}", title=key, snippet="", domain=host, host=host,
        published=published, date_status="known" if published else "unknown", observations=obs,
        engine_ranks=dict(ranks),
    )  # fmt: skip


def ctx(query: str = "kubernetes ingress", lead: list[str] | None = None, **rrf) -> RankContext:
    return RankContext(
        request=SearchRequest(query=query), query=analyze_query(query), config=RankingConfig(rrf=rrf), now=NOW,
        lead_engines=lead,
    )  # fmt: skip


def test_weighted_rrf_votes_and_authority_boost() -> None:
    rows = [
        cand("a", "seo-farm.example", {"ddg": 1, "bing": 2}),
        cand("b", "kubernetes.io", {"ddg": 3}),
        cand("c", "blog.example", {"anysearch": 1}),
    ]
    scored = {s.candidate.key: s for s in RANKER.rank(rows, ctx())}
    assert scored["a"].score == pytest.approx(1 / 61 + 1 / 62)
    assert scored["b"].score == pytest.approx(1 / 63 + 0.25)  # kubernetes.io is an official domain
    assert scored["c"].score == pytest.approx(2 / 61)  # anysearch carries weight 2 (seed 000)
    assert [s.candidate.key for s in RANKER.rank(rows, ctx())] == ["b", "c", "a"]


def test_freshness_boost_is_linear_over_freshness_days_and_neutral_when_unknown() -> None:
    assert freshness(NOW - dt.timedelta(days=15), NOW, 30) == pytest.approx(0.5)
    assert freshness(NOW - dt.timedelta(days=45), NOW, 30) == 0.0
    assert freshness(NOW + dt.timedelta(days=2), NOW, 30) == 0.0  # a future date is not fresh
    assert freshness(None, NOW, 30) == 0.0
    fresh = cand("f", "news.example", {"ddg": 1}, published=NOW - dt.timedelta(days=3))
    scored = RANKER.rank([fresh], ctx())[0]
    assert scored.score == pytest.approx(1 / 61 + 0.2 * (1 - 3 / 30))


def test_weighted_round_robin_gives_a_weight_2_engine_two_slots_per_round() -> None:
    rows = [cand(f"x{i}", "x.example", {"ddg": i}) for i in (1, 2, 3)] + [
        cand(f"y{i}", "y.example", {"anysearch": i}) for i in (1, 2, 3)
    ]
    order = interleave_order(rows, {"ddg": 1.0, "anysearch": 2.0}, lead=[])
    assert sorted(order, key=order.get) == ["y1", "y2", "x1", "y3", "x2", "x3"]


def test_region_policy_lets_the_lead_engines_go_first_on_ties() -> None:
    rows = [cand("cn", "cn.example", {"bing-cn": 1}), cand("gl", "gl.example", {"ddg": 1})]
    cjk = [s.candidate.key for s in RANKER.rank(rows, ctx("东数西算 国家枢纽节点", lead=["bing-cn"]))]
    ascii_ = [s.candidate.key for s in RANKER.rank(rows, ctx("rust async runtime", lead=["ddg"]))]
    assert cjk == ["cn", "gl"] and ascii_ == ["gl", "cn"]
    # without the fan-out's regions, the engine names decide
    assert [s.candidate.key for s in RANKER.rank(rows, ctx("东数西算 国家枢纽节点"))] == ["cn", "gl"]
