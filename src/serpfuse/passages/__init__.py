"""Passages: the pieces of a page's main text that answer a query, under a character budget.

Pure functions, no I/O: ``split`` cuts the text into units that respect its structure, ``score`` weighs each unit
against the query, ``select`` takes the best under the budget and returns them in page order with their offsets.
``passages`` does all three for one page; ``across`` shares one budget between several pages.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from serpfuse.passages.score import ScoredUnit, score_units
from serpfuse.passages.select import ChosenPassage, choose, passages_of, select_units
from serpfuse.passages.split import markdown_headings, split

__all__ = ["ChosenPassage", "PageText", "across", "markdown_headings", "passages", "score_page"]

DEFAULT_MAX_CHARS = 1500  # per page


def score_page(text: str, query: str, headings: Collection[str] = ()) -> list[ScoredUnit]:
    return score_units(text, split(text, headings), query)


def passages(
    text: str, query: str, max_chars: int = DEFAULT_MAX_CHARS, *, headings: Collection[str] = ()
) -> list[ChosenPassage]:
    """The passages of ``text`` that best answer ``query`` within ``max_chars`` characters, in page order."""
    if max_chars <= 0 or not text.strip():
        return []
    return select_units(text, score_page(text, query, headings), max_chars)


@dataclass(frozen=True)
class PageText:
    key: str  # the caller's name for the page (its URL)
    text: str
    headings: tuple[str, ...] = ()


RANK_DECAY = 0.05  # a page's units lose this much score per place the page stands lower in the list


def across(
    pages: Sequence[PageText], query: str, max_chars: int, *, per_page: int | None = None
) -> list[tuple[str, ChosenPassage]]:
    """The query's best passages across ``pages`` (in their list's order of trust) under one budget of
    ``max_chars``, at most ``per_page`` from any one page; grouped by page in list order, each in page order."""
    pooled: list[tuple[int, ScoredUnit]] = []
    for rank, page in enumerate(pages):
        for s in score_page(page.text, query, page.headings):
            s.score -= RANK_DECAY * rank
            pooled.append((rank, s))
    used = 0
    picked: dict[int, list[ScoredUnit]] = {}
    for rank, s in sorted(pooled, key=lambda p: (-p[1].score, p[0], p[1].unit.start)):
        if max_chars - used < 20:
            break
        mine = picked.get(rank, [])
        cap = per_page if per_page is not None else max_chars
        before = sum(p.end - p.start for p in passages_of(pages[rank].text, mine))
        trial = choose([*mine, s], min(cap, before + (max_chars - used)))
        if len(trial) == len(mine) + 1:
            after = sum(p.end - p.start for p in passages_of(pages[rank].text, trial))
            picked[rank] = trial
            used += after - before
    out: list[tuple[str, ChosenPassage]] = []
    for rank in sorted(picked):
        out.extend((pages[rank].key, p) for p in passages_of(pages[rank].text, picked[rank]))
    return out
