"""The rows every stage of the ranking reads and returns: a candidate page, its score, why it was cut, and the
final selection. Pure data; every stage of the ranking imports it, and it imports no stage."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from functools import cached_property

from serpfuse.models import DateStatus, Observation
from serpfuse.text import RowForm, row_form


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

    @cached_property
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
