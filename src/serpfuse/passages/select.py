"""The best units of a page under a character budget, as passages in page order.

Units are taken best first while they fit: a unit that does not fit is passed over for a smaller one after it,
so the budget is filled. Headings are context, never chosen alone. The chosen units of one block that follow
each other are joined into one passage (the text between them is the page's own), so a passage is always a
piece of the page: ``text == page_text[start:end]``. The budget counts the passages' characters.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

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


def choose(scored: Sequence[ScoredUnit], max_chars: int, *, min_score: float = 0.0) -> list[ScoredUnit]:
    """The units to show: best first while they fit in ``max_chars`` (adjacent units joined count the space
    between them)."""
    chosen: list[ScoredUnit] = []
    used = 0
    for s in sorted(scored, key=lambda s: (-s.score, s.unit.start)):
        if s.unit.kind == "heading" or s.score < min_score:
            continue
        length = s.unit.end - s.unit.start
        if used + length > max_chars:
            continue
        trial = _size(_spans([*chosen, s]))
        if trial <= max_chars:
            chosen.append(s)
            used = trial
        if max_chars - used < 20:
            break
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
