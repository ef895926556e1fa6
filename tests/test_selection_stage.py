"""The selection stage is one stage for every ranker: the score floor, the per-domain cap and the diversity
selection apply whatever the strategy, and each cut carries one name in the explanations."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from serpfuse.config import RankingConfig
from serpfuse.models import SearchRequest
from serpfuse.pipeline import rank_answers
from serpfuse.ranking.query import analyze_query
from serpfuse.ranking.rankers import available
from serpfuse.sources.fanout import fan_out
from serpfuse.sources.replay import ReplaySource

QUERY = "top restaurants in belgrad"
CUT_NAMES = {"min_score", "per_domain", "diversity", "limit"}


@pytest.fixture(scope="module")
def answers(recording):
    import asyncio

    request = SearchRequest(query=QUERY)
    return asyncio.run(fan_out(ReplaySource(recording), request, analyze_query(QUERY))).answers


@pytest.mark.parametrize("strategy", available())
def test_min_score_floor_applies_to_every_strategy(answers, strategy: str) -> None:
    config = RankingConfig()
    shown = rank_answers(answers, SearchRequest(query=QUERY, strategy=strategy), config=config)
    assert shown.results, "the query has results without a floor"
    floored = rank_answers(
        answers, SearchRequest(query=QUERY, strategy=strategy, min_score=1000), config=config, explain=True
    )
    assert floored.results == []
    assert not floored.truncated  # nothing eligible was left out
    steps = {c.cut_by for c in floored.candidates or [] if c.cut_by}
    assert "min_score" in steps


@pytest.mark.parametrize("strategy", available())
def test_selection_cuts_have_one_name_each(answers, strategy: str) -> None:
    response = rank_answers(
        answers,
        SearchRequest(query=QUERY, strategy=strategy, limit=3),
        config=RankingConfig(selection={"per_domain": 1}),
        explain=True,
    )
    assert len(response.results) == 3 and response.truncated
    domains = [r.domain for r in response.results]
    assert len(domains) == len(set(domains)) or strategy in ("adaptive", "consensus")  # MMR has its own cap
    selection_steps = {c.cut_by for c in response.candidates or [] if c.cut_by} - {
        "junk",
        "relevance",
        "coverage",
        "geo",
        "domains",
        "timerange",
        "cjk_gate",
        "rank",
    }
    assert selection_steps <= CUT_NAMES


@pytest.mark.parametrize("method", ["top", "mmr"])
def test_the_method_is_a_knob_for_any_ranker(answers, method: str) -> None:
    config = RankingConfig(selection={"method": method})
    response = rank_answers(answers, SearchRequest(query=QUERY, strategy="rrf"), config=config)
    assert 0 < len(response.results) <= 8
    assert RankingConfig(selection={"method": method}).fingerprint() != RankingConfig().fingerprint()


def test_cli_min_score_1000_returns_nothing_for_rrf(recording) -> None:
    out = subprocess.run(
        [str(Path(sys.executable).parent / "serpfuse"), "search", QUERY, "--replay", str(recording), "--strategy", "rrf",
         "--min-score", "1000", "--json"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode in (0, 1), out.stderr
    assert json.loads(out.stdout)["results"] == []
