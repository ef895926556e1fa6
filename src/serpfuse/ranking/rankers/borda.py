"""Borda count (de Borda, 1781; Aslam & Montague, 2001).

Each engine's list gives ``n - rank + 1`` points, n being the length of that engine's shown list (cut at
``depth``); a result an engine did not show gets nothing from it.
"""

from __future__ import annotations

from serpfuse.ranking.context import RankContext
from serpfuse.ranking.rankers.combmnz import list_sizes
from serpfuse.ranking.types import Candidate, Scored


class BordaRanker:
    name = "borda"
    score_version = "borda-3"
    selects_by = "top"

    def rank(self, candidates: list[Candidate], ctx: RankContext) -> list[Scored]:
        depth = ctx.config.borda.depth
        sizes = list_sizes(candidates, ctx, depth)
        scored = []
        for cand in candidates:
            points = {e: float(sizes[e] - r + 1) for e, r in cand.engine_ranks.items() if r <= sizes[e]}
            total = sum(points.values())
            scored.append(Scored(cand, total, total, contributions=points, parts={"borda": total}))
        return sorted(scored, key=lambda s: (-s.score, s.candidate.key))


RANKER = BordaRanker()
