"""SearXNG's own score (searx/results.py ``calculate_score``), as a baseline and a score oracle.

    weight = product of the weights of the engines that returned the URL  x  number of positions
    score  = sum over positions p of weight / p
A CombMNZ over reciprocal ranks with no k constant.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from serpfuse.ranking.context import RankContext
from serpfuse.ranking.types import Candidate, Scored


def searxng_score(engines: Iterable[str], positions: Iterable[int], weights: Mapping[str, float]) -> float:
    positions = list(positions)
    weight = math.prod(weights.get(e, 1.0) for e in set(engines)) * len(positions)
    return sum(weight / p for p in positions)


class SearxngRanker:
    name = "searxng"
    score_version = "searxng-1"
    selects_by = "top"

    def rank(self, candidates: list[Candidate], ctx: RankContext) -> list[Scored]:
        weights = ctx.config.searxng.weights
        scored = []
        for cand in candidates:
            score = searxng_score(cand.engine_ranks, cand.engine_ranks.values(), weights)
            contributions = {e: weights.get(e, 1.0) / r for e, r in cand.engine_ranks.items()}
            scored.append(Scored(cand, score, score, contributions=contributions, parts={"searxng": score}))
        return sorted(
            scored, key=lambda s: (-s.score, min(s.candidate.engine_ranks.values()), s.candidate.key)
        )


RANKER = SearxngRanker()
