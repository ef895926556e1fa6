"""Fusion of bare ranked lists (TREC runs, MQ2008 rankings): any ranker, ranks only, no text and no filters."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence

from serpfuse.config import RankingConfig
from serpfuse.models import SearchRequest
from serpfuse.ranking.candidates import candidates_from_lists
from serpfuse.ranking.context import RankContext
from serpfuse.ranking.query import analyze_query
from serpfuse.ranking.rankers import get_ranker
from serpfuse.ranking.types import Candidate

_REQUEST = SearchRequest(query="ranked lists", limit=20)
_QUERY = analyze_query("ranked lists")
_EPOCH = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)


def bare_context(
    lists: Mapping[str, Sequence[str]], config: RankingConfig
) -> tuple[list[Candidate], RankContext]:
    """The candidates and the context a ranker sees for bare lists (no text, no clock, every engine primary)."""
    candidates = candidates_from_lists({e: list(d) for e, d in lists.items()})
    ctx = RankContext(
        request=_REQUEST,
        query=_QUERY,
        config=config,
        now=_EPOCH,
        engine_tiers=dict.fromkeys(lists, "primary"),
        engine_list_sizes={e: len(d) for e, d in lists.items()},
    )
    return candidates, ctx


def fuse_lists(
    lists: Mapping[str, Sequence[str]], strategy: str = "consensus", config: RankingConfig | None = None
) -> list[tuple[str, float]]:
    """engine -> docids (best first) in; (docid, score) best first out. Unknown engines weigh 1, no group."""
    config = (config or RankingConfig()).with_strategy(strategy)
    candidates, ctx = bare_context(lists, config)
    return [(s.candidate.key, s.score) for s in get_ranker(strategy).rank(candidates, ctx)]
