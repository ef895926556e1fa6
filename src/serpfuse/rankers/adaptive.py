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

from .agreement import engine_lists, estimate_engines
from .base import Candidate, RankContext, Scored, Selection
from .consensus import RANKER as CONSENSUS
from .consensus import query_terms, score_candidate


def logical(engine: str, aliases: dict[str, str]) -> str:
    return aliases.get(engine, engine)


class AdaptiveRanker:
    name = "adaptive"
    score_version = "adaptive-1/consensus-v2.1"

    def engine_weights(
        self, candidates: list[Candidate], ctx: RankContext
    ) -> dict[str, tuple[float, float | None]]:
        """engine -> (weight used, agreement support or None when not estimated)."""
        cfg = ctx.config.consensus
        groups = {
            e: cfg.groups.get(logical(e, cfg.aliases), logical(e, cfg.aliases))
            for c in candidates
            for e in c.engine_ranks
        }
        estimates = estimate_engines(
            engine_lists(candidates), ctx.config.agree, ctx.engine_list_sizes, groups
        )
        return {
            e: (cfg.weights.get(logical(e, cfg.aliases), cfg.weights.get(e, 1.0)) * est.weight, est.support)
            for e, est in estimates.items()
        }

    def rank(self, candidates: list[Candidate], ctx: RankContext) -> list[Scored]:
        weights = self.engine_weights(candidates, ctx)
        terms = query_terms(ctx.query)
        aliases = ctx.config.consensus.aliases
        by_voter: dict[
            str, float
        ] = {}  # consensus weighs logical voters (aliases folded): the best alias counts
        for e, (w, _) in weights.items():
            by_voter[logical(e, aliases)] = max(w, by_voter.get(logical(e, aliases), 0.0))
        scored = []
        for cand in candidates:
            s = score_candidate(cand, ctx, terms, by_voter)
            if s.evidence <= 0:  # metadata never revives a page no engine voted for
                continue
            for e in cand.engine_ranks:
                w, support = weights[e]
                s.parts[f"weight:{e}"] = w
                if support is not None:
                    s.parts[f"support:{e}"] = support
            scored.append(s)
        return sorted(scored, key=lambda s: (-s.score, s.candidate.key))

    def select(self, scored: list[Scored], ctx: RankContext) -> Selection:
        return CONSENSUS.select(scored, ctx)


RANKER = AdaptiveRanker()
