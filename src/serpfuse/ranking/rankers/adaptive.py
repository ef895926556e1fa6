"""consensus-v2.1 whose engine weights adapt, per query, to how much the others back them (opt-in: none of its
weighting components earned a place in the default on two corpora, BENCHMARKS.md).

consensus-v2.1 scores a page by the evidence of every engine that returned it, with correlated
engines grouped and a bounded metadata correction, then picks a diverse list. Its engine weights are fixed
priors, though, and plain fusion sinks below the best engine when one engine is much better than the rest.
Here each engine's prior is multiplied by its agreement weight for this query (rankers/agreement.py): how
strongly the *other* engine groups back its top rows. No labels, no per-corpus training: an engine nobody
confirms counts less, whoever it is. With fewer than three independent engine groups agreement carries no
information and the weights stay the priors (times list coverage), i.e. plain consensus-v2.1.

Agreement cannot see an engine that answers off-topic when there are only two groups, and it can only
sharpen what the consensus believes. So each weight is also multiplied by the engine's content reliability
for the query: how much of the query's *specific* meaning its top rows carry, relative to the best engine's
(``PoolTerms.engine_content``). A term's share of that meaning is how much more specific (wordfreq) it is
than the query's commonest term: a list that matches only the words every page near the topic has ("trails",
"professional", "requirements") carries none of it, while a list that has the subject and not the filler
("Mercury" without "facts") is not held back. Bare lists carry no text and keep the weights above.

Each weight is also multiplied by the engine's ``ranking.weights`` entry (learned from judgments by
``serpfuse calibrate``; 1 when not named), so an engine known to be better counts more whatever the query.

Measured (BENCHMARKS.md, benchmarks/ablation.py): equal to consensus on crw56; on MQ2008-agg it beats plain
CombMNZ, through the list-length weight alone (MQ2008's weak rankers leave documents out), which does nothing on
the web corpus.
"""

from __future__ import annotations

from dataclasses import dataclass

from serpfuse.ranking.candidates import engine_lists
from serpfuse.ranking.context import RankContext
from serpfuse.ranking.rankers.agreement import EngineEstimate, engine_parts, estimate_engines
from serpfuse.ranking.rankers.consensus import rank_candidates
from serpfuse.ranking.types import Candidate, Scored


def logical(engine: str, aliases: dict[str, str]) -> str:
    return aliases.get(engine, engine)


def content_reliability(ctx: RankContext) -> dict[str, float]:
    """Each engine's content reliability for this query, in (0, 1]: the share of the query's specific meaning
    its top rows carry (filters.relevance.PoolTerms.engine_content, cut rows included), relative to the best
    engine's, to the power ``agree.content_power``. Empty (every engine 1) without text to judge by."""
    power = ctx.config.agree.content_power
    if ctx.pool is None or power == 0:
        return {}
    content = ctx.pool.engine_content(ctx.config.agree.support_depth)
    best = max(content.values(), default=0.0)
    if best <= 0:
        return {}
    floor = ctx.config.agree.content_floor  # faint, not zero: zero would drop the engine's rows
    return {e: max(floor, (c / best) ** power) for e, c in content.items()}


@dataclass(frozen=True)
class QueryWeights:
    """One query's engine weights, as adaptive fuses with them."""

    engines: dict[str, float]  # engine -> prior x ranking.weights x agreement x content
    voters: dict[str, float]  # logical voter -> the best of its engines' weights (what consensus reads)
    estimates: dict[str, EngineEstimate]
    content: dict[str, float]


def query_weights(candidates: list[Candidate], ctx: RankContext) -> QueryWeights:
    cfg = ctx.config.consensus
    voter = {e: logical(e, cfg.aliases) for c in candidates for e in c.engine_ranks}
    groups = {e: cfg.groups.get(v, v) for e, v in voter.items()}
    estimates = estimate_engines(engine_lists(candidates), ctx.config.agree, ctx.engine_list_sizes, groups)
    content = content_reliability(ctx)
    weights = {
        e: cfg.weights.get(voter[e], cfg.weights.get(e, 1.0))
        * ctx.config.weight_of(e)
        * est.weight
        * content.get(e, 1.0)
        for e, est in estimates.items()
    }
    by_voter: dict[str, float] = {}  # consensus weighs logical voters (aliases folded): the best alias counts
    for e, w in weights.items():
        by_voter[voter[e]] = max(w, by_voter.get(voter[e], 0.0))
    return QueryWeights(weights, by_voter, estimates, content)


class AdaptiveRanker:
    name = "adaptive"
    score_version = "adaptive-1/consensus-v2.1"
    selects_by = "mmr"

    def rank(self, candidates: list[Candidate], ctx: RankContext) -> list[Scored]:
        w = query_weights(candidates, ctx)
        scored = rank_candidates(candidates, ctx, w.voters)
        for s in scored:
            s.parts.update(engine_parts(s.candidate.engine_ranks, w.engines, w.estimates))
            s.parts.update({f"content:{e}": w.content[e] for e in s.candidate.engine_ranks if e in w.content})
        return scored


RANKER = AdaptiveRanker()
