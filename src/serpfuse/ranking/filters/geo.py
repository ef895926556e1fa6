"""The competing-region filter: "restaurants in belgrad" must not return the Belgrad Forest."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING
from urllib.parse import unquote

from serpfuse.ranking.context import FilterContext
from serpfuse.ranking.tables import contains_phrase, geo_competitors
from serpfuse.text import words

if TYPE_CHECKING:
    from serpfuse.ranking.types import Candidate


def competing_place(query_text: str, title: str, snippet: str, url: str) -> tuple[str, str] | None:
    """(query place, competitor) when the row names a competing place of a place the query names."""
    rivals = _rivals(query_text)
    if not rivals:
        return None
    row_words = words(f"{title} {snippet} {unquote(url)}")
    for place, competitors in rivals:
        for competitor in competitors:
            if contains_phrase(row_words, competitor):
                return " ".join(place), " ".join(competitor)
    return None


@lru_cache(maxsize=64)
def _rivals(query_text: str) -> tuple[tuple[tuple[str, ...], tuple[tuple[str, ...], ...]], ...]:
    """The places the query names, each with its competitors the query does not name, in table order: read
    once per query, not once per row."""
    query_words = words(query_text)
    return tuple(
        # A competitor the query names itself ("paris texas") is what the user asked for.
        (place, tuple(c for c in competitors if not contains_phrase(query_words, c)))
        for place, competitors in geo_competitors().items()
        if contains_phrase(query_words, place)
    )


class GeoFilter:
    name = "geo"

    def idle(self, ctx: FilterContext) -> bool:
        return not _rivals(ctx.query.text)

    def check(self, candidate: Candidate, ctx: FilterContext) -> str | None:
        hit = competing_place(ctx.query.text, candidate.title, candidate.snippet, candidate.url)
        if hit is None:
            return None
        place, competitor = hit
        return f"about another {place} ('{competitor}')"


GEO = GeoFilter()
