"""The lexical core (a reranker for SearXNG answers): after the filters, keep the upstream (SearXNG score) order, one row per domain.

us/crw measured its composite re-rank (RRF + BM25 + geo score) against this and the composite lost: with
near-zero cross-engine overlap, ordering adds nothing and the filters do the work. So this ranker scores a
row exactly as SearXNG does, ``(product of engine weights) x (number of sightings) x (sum of 1/rank)``,
and its selection only removes second rows of a registrable domain.
"""

from __future__ import annotations

from serpfuse.ranking.context import RankContext
from serpfuse.ranking.rankers.searxng import searxng_score
from serpfuse.ranking.types import Candidate, Scored


def _sightings(candidate: Candidate) -> list[tuple[str, int]]:
    """(engine, rank) per observation; the best rank per engine when no observations were kept."""
    if candidate.observations:
        return [(obs.engine, obs.rank) for obs in candidate.observations]
    return sorted(candidate.engine_ranks.items())


def sighting_score(candidate: Candidate, weights: dict[str, float]) -> tuple[float, dict[str, float]]:
    """SearXNG's calculate_score over every sighting, and each engine's share of it."""
    sightings = _sightings(candidate)
    engines, ranks = [e for e, _ in sightings], [r for _, r in sightings]
    score = searxng_score(engines, ranks, weights)
    share = score / sum(1.0 / r for r in ranks) if ranks else 0.0  # the common weight factor
    contributions: dict[str, float] = {}
    for engine, rank in sightings:
        contributions[engine] = contributions.get(engine, 0.0) + share / rank
    return score, contributions


def _best_rank(candidate: Candidate) -> int:
    ranks = [rank for _, rank in _sightings(candidate)]
    return min(ranks) if ranks else 1 << 30


class LexicalRanker:
    name = "lexical"
    score_version = "lexical-1"
    selects_by = "top"
    per_domain = 1  # one row per registrable domain: the method's own dedupe

    def rank(self, candidates: list[Candidate], ctx: RankContext) -> list[Scored]:
        weights = ctx.config.lexical.searxng_weights
        scored = []
        for cand in candidates:
            score, contributions = sighting_score(cand, weights)
            sightings = _sightings(cand)
            parts = {
                "searxng": score,
                "sightings": float(len(sightings)),
                "reciprocal_rank_sum": sum(1.0 / r for _, r in sightings),
            }
            scored.append(Scored(cand, score=score, evidence=score, contributions=contributions, parts=parts))
        # Ties keep the upstream order: the better provider rank first, then the key, so replay is stable.
        scored.sort(key=lambda s: (-s.score, _best_rank(s.candidate), s.candidate.key))
        return scored


RANKER = LexicalRanker()
