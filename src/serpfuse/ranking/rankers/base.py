"""What every ranker sees and returns.

A ranker is a pure function of the surviving candidates and a ``RankContext``: it scores and orders them
(``rank``) and then picks the final list (``select``). No I/O happens here.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from serpfuse.models import DateStatus, Observation, SearchRequest
from serpfuse.text import RowForm, row_form

if TYPE_CHECKING:
    from serpfuse.config import RankingConfig
    from serpfuse.ranking.filters.relevance import PoolTerms
    from serpfuse.ranking.query import QueryAnalysis


@dataclass
class Candidate:
    """All observations of one page (one dedup key), merged."""

    key: str
    url: str
    title: str
    snippet: str
    domain: str
    host: str
    published: dt.datetime | None = None
    date_status: DateStatus = "unknown"
    observations: list[Observation] = field(default_factory=list)
    # best 1-based provider rank per engine name as the engine reported it (aliases not yet folded)
    engine_ranks: dict[str, int] = field(default_factory=dict)

    @property
    def engines(self) -> list[str]:
        return sorted(self.engine_ranks)

    @property
    def form(self) -> RowForm:
        """Its title, snippet and URL as every stage reads them, each worked out once (text.RowForm)."""
        return row_form(self.title, self.snippet, self.url)


@dataclass
class Scored:
    candidate: Candidate
    score: float
    evidence: float
    metadata_delta: float = 0.0
    contributions: dict[str, float] = field(default_factory=dict)
    parts: dict[str, float] = field(default_factory=dict)
    selection_score: float | None = None


@dataclass
class Cut:
    step: str
    reason: str


@dataclass
class Selection:
    selected: list[Scored]
    cut: dict[str, Cut]  # candidate key -> why it is not in the list
    truncated: bool


@dataclass
class RankContext:
    request: SearchRequest
    query: QueryAnalysis
    config: RankingConfig
    now: dt.datetime
    # engine name -> tier ("primary"/"fallback") and each engine's full ranked list length, when known
    engine_tiers: dict[str, str] = field(default_factory=dict)
    engine_list_sizes: dict[str, int] = field(default_factory=dict)
    # seed 000's region policy: the engines that lead for this query's script (None = not known, e.g. replay)
    lead_engines: list[str] | None = None
    # the query read against every candidate, cut ones included (None for bare lists, which have no text)
    pool: PoolTerms | None = None


class Ranker(Protocol):
    name: str
    score_version: str

    def rank(self, candidates: list[Candidate], ctx: RankContext) -> list[Scored]: ...

    def select(self, scored: list[Scored], ctx: RankContext) -> Selection: ...


def demote(scored: list[Scored], reasons: dict[str, str], factor: float) -> list[Scored]:
    """The scored rows with each listed row's score multiplied by ``factor`` (its reason kept in ``parts``
    as ``demoted``), re-sorted best first; ties keep their order."""
    if not reasons or factor >= 1:
        return scored
    for s in scored:
        if s.candidate.key in reasons:
            s.score *= factor
            s.parts["demoted"] = factor
    return sorted(scored, key=lambda s: -s.score)
