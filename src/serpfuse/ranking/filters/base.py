"""What every filter sees, the filter protocol, and the CJK relevance test on a raw row.

A filter is a small object with a ``name`` and ``check(candidate, ctx)``: None keeps the candidate, a string
drops it and says why in one line a person can read ("covers 1 of 3 query terms"). Filters never reorder.
A filter that knows from the request alone that it keeps every row says so with ``idle(ctx)`` (optional):
then no row is asked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol
from urllib.parse import unquote

from serpfuse.ranking.context import FilterContext
from serpfuse.text import words

if TYPE_CHECKING:
    from serpfuse.ranking.query import QueryAnalysis
    from serpfuse.ranking.types import Candidate


class Filter(Protocol):
    name: str

    def check(self, candidate: Candidate, ctx: FilterContext) -> str | None: ...


# --- the CJK relevance gate, on raw fields so the fan-out can judge an engine's answer too ----------


@dataclass(frozen=True)
class Overlap:
    units: int  # units the row collected
    needed: int  # units it needs (the gate's threshold, capped by what the query can give)
    matched: tuple[str, ...]  # query tokens found, for the explanation

    @property
    def passes(self) -> bool:
        return self.units >= self.needed


def _ascii_hit(term: str, row_words: set[str]) -> bool:
    # A row word that starts with the term counts: "postgres" is found in "PostgreSQL" .
    # One- and two-letter terms must match whole words, or "go" would be found in every "google".
    return term in row_words or (len(term) >= 3 and any(w.startswith(term) for w in row_words))


def cjk_overlap(
    query: QueryAnalysis, title: str, snippet: str, url: str, units: int = 2, ascii_units: int = 2
) -> Overlap:
    """Units of overlap between a CJK/mixed query and a row's title, snippet and (decoded) URL.

    Each distinct query CJK two-character token found counts one unit; each distinct important ASCII word
    counts ``ascii_units``. The threshold is capped by what the query itself can give, so a one-bigram
    query such as ``天气`` is not a query no row can pass.
    """
    haystack = f"{title}\n{snippet}\n{unquote(url)}"
    cjk_tokens, ascii_terms = query.cjk_tokens, query.terms  # each distinct already (analyze_query)
    row_words = set(words(haystack))
    matched = [t for t in cjk_tokens if t in haystack]
    matched += [t for t in ascii_terms if _ascii_hit(t, row_words)]
    got = sum(ascii_units if t.isascii() else 1 for t in matched)
    possible = len(cjk_tokens) + ascii_units * len(ascii_terms)
    return Overlap(units=got, needed=min(units, possible), matched=tuple(matched))


def passes_cjk_gate(
    query: QueryAnalysis, title: str, snippet: str, url: str, units: int = 2, ascii_units: int = 2
) -> bool:
    """The CJK gate on one raw row: ASCII-only queries always pass; a CJK or mixed query needs `units`."""
    if not query.is_cjk:
        return True
    return cjk_overlap(query, title, snippet, url, units, ascii_units).passes
