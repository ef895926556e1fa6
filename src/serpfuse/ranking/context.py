"""What a filter and a ranker see of one search: the request, the query, the knobs, the clock, and the pool
analysis the pipeline ran once for both."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from serpfuse.config import FilterConfig, RankingConfig
    from serpfuse.models import SearchRequest
    from serpfuse.ranking.pool import PoolTerms
    from serpfuse.ranking.query import QueryAnalysis


@dataclass
class FilterContext:
    request: SearchRequest
    query: QueryAnalysis
    config: FilterConfig
    now: dt.datetime
    pool: PoolTerms | None = None  # the query read against every candidate (filters.relevance.analyze_pool)


@dataclass
class RankContext:
    request: SearchRequest
    query: QueryAnalysis
    config: RankingConfig
    now: dt.datetime
    # engine name -> tier ("primary"/"fallback") and each engine's full ranked list length, when known
    engine_tiers: dict[str, str] = field(default_factory=dict)
    engine_list_sizes: dict[str, int] = field(default_factory=dict)
    # the region policy: the engines that lead for this query's script (None = not known, e.g. replay)
    lead_engines: list[str] | None = None
    # the query read against every candidate, cut ones included (None for bare lists, which have no text)
    pool: PoolTerms | None = None
