"""CombMNZ (Fox & Shaw, 1994): the sum of an item's normalised scores times the number of lists holding it.

Each engine's list, cut to ``depth``, is scored by rank: ``(n - rank + 1) / n`` with n the length of that engine's
shown list (1 at the top, 1/n at its end), the rank-based normalisation that suits engines reporting no
comparable scores. ``combmnz.short_list_scale`` (opt-in) divides a short list's scores by a share of the longest
shown list's length instead (1: every list on the longest's scale, Borda's points times the number of lists), so
a list of two vouches for its first row less than a list of twenty does: it mends CombMNZ's worst MQ2008 subsets
(rankers that retrieve one or two documents a query weighed like full lists); at 1 it also rewards a padded
list on the web (crw56's generic-rows variants lose). BENCHMARKS.md has both. An engine's scores are multiplied by its ``ranking.weights`` entry (1 when not named: plain
CombMNZ); an engine weighted 0 casts nothing and is not counted among the lists holding the item.

The total is rounded to 10 decimal places (``rounded``), so rows whose exact totals are equal (1/3 + 1/3 + 1/3 and 1) tie
however float rounding fell, broken by key as exact arithmetic would be; ``serpfuse calibrate``'s numpy replica
of this formula (bench/calibrate/problem.py) rounds the same way, so it orders the rows as this does.
"""

from __future__ import annotations

import math

from serpfuse.ranking.context import RankContext
from serpfuse.ranking.types import Candidate, Scored


def rounded(total: float) -> float:
    return round(total, 10)  # far above float noise, far below any gap that changes a list


def rank_score(rank: int, depth: int, scale: float | None = None) -> float:
    """A row's score in a list of ``depth`` rows, over ``scale`` (default ``depth``: the list's own length)."""
    return max(0.0, (depth - rank + 1) / (scale or depth))


def score_scales(sizes: dict[str, int], share: float) -> dict[str, float]:
    """What each engine's rank scores are divided by: its own list's length, or ``share`` of the longest shown
    list's when that is more (``combmnz.short_list_scale``)."""
    if not share:
        return dict(sizes)
    floor = share * max(sizes.values(), default=1)
    return {e: max(n, floor) for e, n in sizes.items()}


def list_sizes(candidates: list[Candidate], ctx: RankContext, depth: int | None) -> dict[str, int]:
    """How many rows each engine showed (at most ``depth``): its list length when known, else its worst rank."""
    sizes: dict[str, int] = {}
    for cand in candidates:
        for e, r in cand.engine_ranks.items():
            sizes[e] = max(sizes.get(e, 0), r)
    shown = {e: max(n, ctx.engine_list_sizes.get(e, 0)) for e, n in sizes.items()}
    return shown if depth is None else {e: min(depth, n) for e, n in shown.items()}


class CombMNZRanker:
    name = "combmnz"
    score_version = "combmnz-3"
    selects_by = "top"

    def rank(self, candidates: list[Candidate], ctx: RankContext) -> list[Scored]:
        depth = ctx.config.combmnz.depth
        sizes = list_sizes(candidates, ctx, depth)
        scales = score_scales(sizes, ctx.config.combmnz.short_list_scale)
        scored = []
        for cand in candidates:
            parts = {
                e: ctx.config.weight_of(e) * rank_score(r, sizes[e], scales[e])
                for e, r in cand.engine_ranks.items()
                if r <= sizes[e] and ctx.config.weight_of(e) > 0
            }
            total = rounded(math.fsum(parts.values()) * len(parts))
            scored.append(
                Scored(
                    cand,
                    total,
                    total,
                    contributions=parts,
                    parts={"combsum": math.fsum(parts.values()), "hits": len(parts)},
                )
            )
        return sorted(scored, key=lambda s: (-s.score, s.candidate.key))


RANKER = CombMNZRanker()
