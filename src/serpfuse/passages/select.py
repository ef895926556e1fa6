"""The best units of a page under a character budget, as passages in page order.

Units are taken best first while they fit: a unit that does not fit is passed over for a smaller one after it,
so the budget is filled. What a unit adds counts, not only what it holds: a query term a chosen unit already
shows counts at ``REPEAT`` of its part in the next one (a greedy cover, as in maximal marginal relevance), so
the budget spreads over the query's words instead of repeating the ones already shown. Headings are context,
never chosen alone. The chosen units of one block that follow each other are joined into one passage (the
text between them is the page's own), so a passage is always a piece of the page:
``text == page_text[start:end]``. The budget counts the passages' characters.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from serpfuse.passages.score import ScoredUnit


@dataclass(frozen=True)
class ChosenPassage:
    text: str
    start: int
    end: int
    score: float  # the best of its units'
    why: str  # its best unit's reasons
    heading: str | None = None


def _spans(chosen: Sequence[ScoredUnit]) -> list[list[ScoredUnit]]:
    """Chosen units in page order, those of one block that follow each other grouped."""
    groups: list[list[ScoredUnit]] = []
    ordered = sorted(chosen, key=lambda s: s.unit.start)
    for s in ordered:
        last = groups[-1][-1] if groups else None
        if last is not None and last.unit.block == s.unit.block and last.index + 1 == s.index:
            groups[-1].append(s)
        else:
            groups.append([s])
    return groups


def _size(groups: list[list[ScoredUnit]]) -> int:
    return sum(g[-1].unit.end - g[0].unit.start for g in groups)


REPEAT = 0.6  # a term already shown counts at this share of its part (chosen on WikiQA's dev half)


def _gain(s: ScoredUnit, shown: dict[str, float]) -> float:
    """A unit's score less what the chosen units already show of its terms."""
    if not shown:
        return s.score
    return s.score - (1.0 - REPEAT) * sum(min(v, shown.get(t, 0.0)) for t, v in s.shares.items())


def choose(scored: Sequence[ScoredUnit], max_chars: int, *, min_score: float = 0.0) -> list[ScoredUnit]:
    """The units to show: the one that adds most first while they fit in ``max_chars`` (adjacent units joined
    count the space between them). A chosen unit whose terms an earlier one showed is a copy naming them."""
    left = sorted(
        (s for s in scored if s.unit.kind != "heading" and s.score >= min_score),
        key=lambda s: (-s.score, s.unit.start),
    )
    chosen: list[ScoredUnit] = []
    shown: dict[str, float] = {}
    used = 0
    while left and max_chars - used >= 20:
        best, best_gain, best_size = -1, 0.0, 0
        for i, s in enumerate(left):
            if best >= 0 and s.score <= best_gain:
                break  # a unit adds at most its score, and the rest score less
            if used + s.unit.end - s.unit.start > max_chars:
                continue
            gain = _gain(s, shown)
            if best >= 0 and gain <= best_gain:
                continue
            size = _size(_spans([*chosen, s]))
            if size <= max_chars:
                best, best_gain, best_size = i, gain, size
        if best < 0:
            break
        s = left.pop(best)
        repeated = [t for t in s.shares if t in shown]
        chosen.append(replace(s, repeated=repeated) if repeated != s.repeated else s)
        for t, v in s.shares.items():
            shown[t] = max(shown.get(t, 0.0), v)
        used = best_size
    return chosen


def passages_of(text: str, chosen: Sequence[ScoredUnit]) -> list[ChosenPassage]:
    out = []
    for group in _spans(chosen):
        start, end = group[0].unit.start, group[-1].unit.end
        best = max(group, key=lambda s: s.score)
        out.append(
            ChosenPassage(text[start:end], start, end, round(best.score, 4), best.why(), best.unit.heading)
        )
    return out


def select_units(
    text: str, scored: Sequence[ScoredUnit], max_chars: int, *, min_score: float = 0.0
) -> list[ChosenPassage]:
    """The best passages of a page within ``max_chars``, in page order."""
    return passages_of(text, choose(scored, max_chars, min_score=min_score))
