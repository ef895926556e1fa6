"""The default ranker: consensus-v2.1 whose engine weights adapt, per query, to how much the others back them.

consensus-v2.1 (seed 002) scores a page by the evidence of every engine that returned it, with correlated
engines grouped and a bounded metadata correction, then picks a diverse list. Its engine weights are fixed
priors, though, and plain fusion sinks below the best engine when one engine is much better than the rest.
Here each engine's prior is multiplied by its agreement weight for this query (rankers/agreement.py): how
strongly the *other* engine groups back its top rows. No labels, no per-corpus training: an engine nobody
confirms counts less, whoever it is. With fewer than three independent engine groups agreement carries no
information and the weights stay the priors (times list coverage), i.e. plain consensus-v2.1.

Measured (BENCHMARKS.md): equal to consensus on crw56; on MQ2008-agg's metasearch protocol it beats consensus
on every setup and matches the best of RRF/CombMNZ/Borda/best-single chosen in hindsight, without being told.
"""

from __future__ import annotations

from .agreement import engine_lists, engine_parts, estimate_engines
from .base import Candidate, RankContext, Scored, Selection
from .consensus import RANKER as CONSENSUS
from .consensus import rank_candidates


def logical(engine: str, aliases: dict[str, str]) -> str:
    return aliases.get(engine, engine)


class AdaptiveRanker:
    name = "adaptive"
    score_version = "adaptive-1/consensus-v2.1"

    def rank(self, candidates: list[Candidate], ctx: RankContext) -> list[Scored]:
        cfg = ctx.config.consensus
        voter = {e: logical(e, cfg.aliases) for c in candidates for e in c.engine_ranks}
        groups = {e: cfg.groups.get(v, v) for e, v in voter.items()}
        estimates = estimate_engines(
            engine_lists(candidates), ctx.config.agree, ctx.engine_list_sizes, groups
        )
        weights = {
            e: cfg.weights.get(voter[e], cfg.weights.get(e, 1.0)) * est.weight for e, est in estimates.items()
        }
        by_voter: dict[
            str, float
        ] = {}  # consensus weighs logical voters (aliases folded): the best alias counts
        for e, w in weights.items():
            by_voter[voter[e]] = max(w, by_voter.get(voter[e], 0.0))
        scored = rank_candidates(candidates, ctx, by_voter)
        for s in scored:
            s.parts.update(engine_parts(s.candidate.engine_ranks, weights, estimates))
        return scored

    def select(self, scored: list[Scored], ctx: RankContext) -> Selection:
        return CONSENSUS.select(scored, ctx)


RANKER = AdaptiveRanker()
