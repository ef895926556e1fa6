"""Seed 001's competing-region filter: "restaurants in belgrad" must not return the Belgrad Forest."""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import unquote

from ..text import words
from .base import FilterContext
from .tables import contains_phrase, geo_competitors

if TYPE_CHECKING:
    from ..rankers.base import Candidate


def competing_place(query_text: str, title: str, snippet: str, url: str) -> tuple[str, str] | None:
    """(query place, competitor) when the row names a competing place of a place the query names."""
    query_words = words(query_text)
    row_words: list[str] | None = None
    for place, competitors in geo_competitors().items():
        if not contains_phrase(query_words, place):
            continue
        if row_words is None:
            row_words = words(f"{title} {snippet} {unquote(url)}")
        for competitor in competitors:
            # A competitor the query names itself ("paris texas") is what the user asked for.
            if contains_phrase(query_words, competitor):
                continue
            if contains_phrase(row_words, competitor):
                return " ".join(place), " ".join(competitor)
    return None


class GeoFilter:
    name = "geo"

    def check(self, candidate: Candidate, ctx: FilterContext) -> str | None:
        hit = competing_place(ctx.query.text, candidate.title, candidate.snippet, candidate.url)
        if hit is None:
            return None
        place, competitor = hit
        return f"about another {place} ('{competitor}')"


GEO = GeoFilter()
