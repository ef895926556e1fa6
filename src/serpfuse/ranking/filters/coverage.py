"""The exact-token coverage guard: a row must mention enough of the query's important terms."""

from __future__ import annotations

from typing import TYPE_CHECKING

from serpfuse.ranking.context import FilterContext
from serpfuse.text import words

if TYPE_CHECKING:
    from serpfuse.ranking.types import Candidate


def covered_terms(terms: tuple[str, ...] | list[str], title: str, snippet: str) -> list[str]:
    """The distinct terms that appear as whole tokens of title + snippet (exact tokens)."""
    row_tokens = set(words(f"{title} {snippet}"))
    return [t for t in dict.fromkeys(terms) if t in row_tokens]


def _enough(found: int, distinct: int, min_coverage: float) -> bool:
    # The epsilon keeps 3 of 5 at min_coverage 0.6 from failing on float rounding.
    return distinct == 0 or found >= min_coverage * distinct - 1e-9


def passes_coverage(
    terms: tuple[str, ...] | list[str], title: str, snippet: str, min_coverage: float
) -> bool:
    found = covered_terms(terms, title, snippet)
    return _enough(len(found), len(set(terms)), min_coverage)


class CoverageFilter:
    """Drops rows that cover fewer than ``min_coverage`` of the query's important terms.

    This is what removes the keyword-bait rows (a shop homepage answering "best ramen in tokyo", a to-do
    app answering "things to do in kyoto") without naming any site. It runs on the important ASCII terms
    only: a CJK or mixed query is judged by the CJK gate instead, since its words are not space-separated
    and "PostgreSQL" must still count for "postgres" there.
    """

    name = "coverage"

    def check(self, candidate: Candidate, ctx: FilterContext) -> str | None:
        terms = ctx.query.terms  # distinct already (query.important_terms)
        if not terms or ctx.query.is_cjk:
            return None
        found = covered_terms(terms, candidate.title, candidate.snippet)
        if _enough(len(found), len(terms), ctx.config.min_coverage):
            return None
        return f"covers {len(found)} of {len(terms)} query terms"


COVERAGE = CoverageFilter()
