"""Query analysis: operators (site:, -site:, quotes, OR), script, ranking-word cleaning, terms and variants."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

STOPWORDS: frozenset[str] = frozenset()


@dataclass(frozen=True)
class QueryAnalysis:
    raw: str
    text: str
    cleaned: str
    script: Literal["cjk", "ascii", "mixed"]
    phrases: tuple[str, ...]
    include_domains: tuple[str, ...]
    exclude_domains: tuple[str, ...]
    alternatives: tuple[str, ...]
    terms: tuple[str, ...]
    cjk_tokens: tuple[str, ...]
    core_variant: str | None

    @property
    def variants(self) -> list[str]:
        return list(dict.fromkeys([self.cleaned, *self.alternatives]))

    @property
    def is_cjk(self) -> bool:
        return self.script in ("cjk", "mixed")


def clean_query(query: str) -> str:
    return query


def important_terms(text: str) -> list[str]:
    return []


def analyze_query(query: str) -> QueryAnalysis:
    q = " ".join(query.split())
    return QueryAnalysis(q, q, q, "ascii", (), (), (), (), (), (), None)
