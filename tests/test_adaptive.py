"""The default ranker: consensus-v2.1 with per-query agreement weights."""

from __future__ import annotations

import datetime as dt
import random

import pytest

from serpfuse.config import RankingConfig
from serpfuse.models import SearchRequest
from serpfuse.ranking.candidates import candidates_from_lists
from serpfuse.ranking.context import RankContext
from serpfuse.ranking.query import analyze_query
from serpfuse.ranking.rankers import get_ranker
from serpfuse.ranking.selection import select

NOW = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def ctx(lists: dict[str, list[str]], limit: int = 8, **config) -> RankContext:
    return RankContext(
        request=SearchRequest(query="q", limit=limit),
        query=analyze_query("q"),
        config=RankingConfig(**config),
        now=NOW,
        engine_list_sizes={e: len(d) for e, d in lists.items()},
    )


def rank(strategy: str, lists: dict[str, list[str]], **config):
    c = ctx(lists, **config)
    return get_ranker(strategy).rank(candidates_from_lists(lists), c)


def test_is_opt_in() -> None:
    """No weighting component of it earned a place in the default on two corpora (benchmarks/ablation.py)."""
    assert RankingConfig().strategy != "adaptive"
    assert RankingConfig(strategy="adaptive").with_strategy("adaptive").strategy == "adaptive"


def test_two_engine_groups_are_plain_consensus() -> None:
    """Agreement needs three independent groups; below that the scores are consensus-v2.1's exactly."""
    lists = {
        "google": ["a", "b", "c", "d"],
        "bing": ["c", "a", "e"],
        "ddg": ["a", "f"],
    }  # bing+ddg: one group
    ours = [(s.candidate.key, s.score) for s in rank("adaptive", lists, agree={"coverage": 0})]
    ref = [(s.candidate.key, s.score) for s in rank("consensus", lists)]
    assert [k for k, _ in ours] == [k for k, _ in ref]
    assert [v for _, v in ours] == pytest.approx([v for _, v in ref], rel=1e-12)


def test_a_strong_engine_among_noisy_ones_gets_the_largest_weight() -> None:
    rng = random.Random(3)
    good = [f"r{i}" for i in range(10)]  # the relevant documents, best first
    lists = {"strong": good[:], "echo1": good[:6] + ["x1", "x2"], "echo2": good[2:8]}
    for n in range(3):
        noise = [f"n{n}-{i}" for i in range(10)]
        rng.shuffle(noise)
        lists[f"noisy{n}"] = noise
    scored = rank("adaptive", lists)
    weights = {
        k.removeprefix("weight:"): v for s in scored for k, v in s.parts.items() if k.startswith("weight:")
    }
    assert max(weights, key=weights.get) == "strong"
    assert all(weights[f"noisy{n}"] < weights["echo2"] for n in range(3))
    top = [s.candidate.key for s in scored[:5]]
    assert all(k.startswith("r") for k in top)


def test_same_index_engines_do_not_back_each_other() -> None:
    """bing, ddg and yahoo share an index: their agreement is a copy, so it earns them no weight."""
    copy = ["a", "b", "c", "d", "e"]
    lists = {"bing": copy, "ddg": copy, "yahoo": copy, "brave": ["v", "w", "x"], "exa": ["v", "w", "y"]}
    scored = rank("adaptive", lists, agree={"coverage": 0})
    support = {
        k.removeprefix("support:"): v for s in scored for k, v in s.parts.items() if k.startswith("support:")
    }
    assert support["bing"] == support["ddg"] == 0.0  # only their own copies back them
    assert support["brave"] > 0.3 and support["exa"] > 0.3


def test_deterministic_and_selection_is_consensus_mmr() -> None:
    lists = {"a": ["1", "2", "3"], "b": ["2", "3", "4"], "c": ["3", "1", "5"]}
    first = [(s.candidate.key, s.score) for s in rank("adaptive", lists)]
    again = [(s.candidate.key, s.score) for s in rank("adaptive", dict(reversed(list(lists.items()))))]
    assert first == again
    c = ctx(lists, limit=2)
    ranker = get_ranker("adaptive")
    picked = select(ranker.rank(candidates_from_lists(lists), c), ranker, c)
    assert len(picked.selected) == 2 and picked.truncated
