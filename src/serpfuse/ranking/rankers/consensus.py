"""The consensus-v2.1 ranker: correlation-aware positive evidence, bounded metadata, greedy MMR.

Per page, with one-based provider ranks ``r`` and one vote per logical engine (aliases folded, best rank):

    x_e = w_e * kappa / (kappa + r - 1)
    H_g = max(x in g) + eta_g * (sum(x in g) - max(x in g))   # correlated engines share a group g
    M   = max_e x_e                                            # best single engine, not best group
    C   = sum_g H_g - M
    E   = M + beta * log1p(C)
    score = E * (1 + clip(lexical_w * lexical + freshness_w * freshness, -clip, +clip))

Each engine's weight w_e is consensus.weights times ranking.weights (learned from judgments; 1 when not
named). It is a cold-start design, not a probability: the numbers only order pages. Missing engines, failed
engines and zero weights cast no vote, so they never lower a page's score.
"""

from __future__ import annotations

import datetime as dt
import math
import numbers
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from serpfuse.config import ConsensusConfig
from serpfuse.ranking.context import RankContext
from serpfuse.ranking.query import QueryAnalysis
from serpfuse.ranking.types import Candidate, Scored
from serpfuse.text import RowForm, fold, has_cjk, words

SCORE_VERSION = "consensus-v2.1"
_MAX_FLOAT = sys.float_info.max


@dataclass(frozen=True)
class EvidenceBreakdown:
    """The rank evidence of one page: E and the pieces it is made of."""

    evidence: float  # E
    best_single: float  # M, the largest single-engine contribution
    consensus: float  # C = sum_g H_g - M (capped at the largest float when weights are astronomical)
    consensus_boost: float  # log1p(C)
    engine_ranks: dict[str, int] = field(default_factory=dict)  # logical engine -> best one-based rank
    contributions: dict[str, float] = field(default_factory=dict)  # logical engine -> x_e, only x_e > 0

    @property
    def M(self) -> float:  # the formula's name for best_single
        return self.best_single


def _check_rank(engine: object, rank: object) -> int:
    if not isinstance(engine, str) or not engine:
        raise ValueError(f"observation engine must be a non-empty string, got {engine!r}")
    # bool is an int subclass, and 1.0/inf/nan are not ranks: only a real integer >= 1 is.
    if isinstance(rank, bool) or not isinstance(rank, numbers.Integral) or rank < 1:
        raise ValueError(f"rank of {engine!r} must be an integer >= 1, got {rank!r}")
    return int(rank)


def _check_weight(engine: str, weight: object) -> float:
    if (
        isinstance(weight, bool)
        or not isinstance(weight, int | float)
        or not math.isfinite(weight)
        or weight < 0
    ):
        raise ValueError(f"weight of {engine!r} must be a finite number >= 0, got {weight!r}")
    return float(weight)


def check_config(cfg: ConsensusConfig) -> None:
    """Reject parameters that would make E meaningless (the model may have been built without validation)."""
    if not isinstance(cfg.kappa, int | float) or not math.isfinite(cfg.kappa) or cfg.kappa <= 0:
        raise ValueError(f"consensus kappa must be a finite number > 0, got {cfg.kappa!r}")
    if not isinstance(cfg.beta, int | float) or not math.isfinite(cfg.beta) or cfg.beta < 0:
        raise ValueError(f"consensus beta must be a finite number >= 0, got {cfg.beta!r}")
    for group, eta in cfg.retention.items():
        if isinstance(eta, bool) or not isinstance(eta, int | float) or not 0 <= eta <= 1:
            raise ValueError(f"consensus retention of group {group!r} must be in [0, 1], got {eta!r}")


def _scaled_sum(residuals: list[float]) -> tuple[float, float]:
    """``(s, S/s)`` with ``S = sum(residuals)`` and ``s = max(1, residuals)``: S/s cannot overflow."""
    scale = max(1.0, *residuals) if residuals else 1.0
    return scale, math.fsum(r / scale for r in residuals)


def _log1p_of_sum(scale: float, scaled: float) -> float:
    """log1p(s * scaled) evaluated as log(s) + log(scaled + 1/s), finite for any finite residuals."""
    if scale == 1.0:
        return math.log1p(scaled)
    return math.log(scale) + math.log(scaled + 1.0 / scale)


def evidence(
    observations: Iterable[tuple[str, int]],
    cfg: ConsensusConfig,
    weights: Mapping[str, float] | None = None,
    *,
    checked: bool = False,
) -> EvidenceBreakdown:
    """E of one page from its ``(engine, one-based rank)`` observations.

    A weight comes from ``weights``, else ``cfg.weights``, else 1. Raises ValueError on a rank that is
    not an integer >= 1, a weight that is not a finite number >= 0, or invalid kappa/beta/retention
    (``checked``: the caller has checked kappa, beta and retention already, once for many pages).
    """
    if not checked:
        check_config(cfg)
    best_rank: dict[str, int] = {}
    for engine, rank in observations:
        rank = _check_rank(engine, rank)
        logical = cfg.aliases.get(engine, engine)
        if rank < best_rank.get(logical, rank + 1):
            best_rank[logical] = rank

    kappa = float(cfg.kappa)
    contributions: dict[str, float] = {}
    by_group: dict[str, list[float]] = {}
    for engine in sorted(best_rank):
        if weights is not None and engine in weights:
            w = _check_weight(engine, weights[engine])
        else:
            w = _check_weight(engine, cfg.weights.get(engine, 1.0))
        x = w * (kappa / (kappa + best_rank[engine] - 1))
        if x > 0:  # zero weight: the engine was asked but casts no vote
            contributions[engine] = x
            by_group.setdefault(cfg.groups.get(engine, engine), []).append(x)

    best = max(contributions.values(), default=0.0)
    # Every retained vote except the single global maximum is a residual. Adding the residuals directly
    # (instead of computing sum(H_g) - M) keeps small votes beside a huge maximum and cannot overflow.
    residuals: list[float] = []
    max_removed = False
    for group in sorted(by_group):
        values = sorted(by_group[group], reverse=True)
        eta = float(cfg.retention.get(group, 1.0))
        for i, v in enumerate(values):
            retained = v if i == 0 else v * eta
            if i == 0 and not max_removed and retained == best:
                max_removed = True
            elif retained > 0:
                residuals.append(retained)

    scale, scaled = _scaled_sum(residuals)
    boost = _log1p_of_sum(scale, scaled)
    consensus = _MAX_FLOAT if scaled > _MAX_FLOAT / scale else scale * scaled
    e = min(_MAX_FLOAT, best + cfg.beta * boost)
    ranks = {engine: best_rank[engine] for engine in sorted(best_rank)}
    return EvidenceBreakdown(e, best, consensus, boost, ranks, contributions)


def query_terms(query: QueryAnalysis) -> list[str]:
    """The terms lexical matching counts: query words and CJK two-character tokens, each once."""
    return list(dict.fromkeys(fold(t) for t in (*query.terms, *query.cjk_tokens) if t))


def lexical_match(terms: list[str], title: str, snippet: str) -> float:
    """Fraction of ``terms`` found in title + snippet; 0 (neutral) when there are no terms.

    An ASCII term matches when each of its words is a word of the text; a CJK term matches as a
    substring, since CJK text has no word boundaries.
    """
    return form_lexical_match(terms, RowForm(title, snippet, ""))


def form_lexical_match(terms: list[str], form: RowForm) -> float:
    """``lexical_match`` on a row's form (text.RowForm): its words and folded text are worked out once."""
    if not terms:
        return 0.0
    hits = 0
    for t in terms:
        if has_cjk(t):
            hits += t in form.folded
        else:
            parts = words(t)
            hits += bool(parts) and form.words.issuperset(parts)
    return hits / len(terms)


def _utc(d: dt.datetime) -> dt.datetime:
    return d.replace(tzinfo=dt.UTC) if d.tzinfo is None else d


def freshness(candidate: Candidate, ctx: RankContext) -> float:
    """Half-life recency bonus, only for a requested time range and a known, non-future date."""
    time_range = ctx.request.time_range
    half_life = ctx.config.consensus.recency_half_life_days.get(time_range) if time_range else None
    if not half_life or candidate.date_status != "known" or candidate.published is None:
        return 0.0
    age_days = (_utc(ctx.now) - _utc(candidate.published)).total_seconds() / 86400
    if age_days < 0:  # a future date is not evidence of freshness
        return 0.0
    return 0.5 ** (age_days / half_life)


def score_candidate(
    candidate: Candidate,
    ctx: RankContext,
    terms: list[str],
    weights: Mapping[str, float] | None = None,
    *,
    checked: bool = False,
) -> Scored:
    """E with the bounded metadata correction applied, and every part that made it."""
    cfg = ctx.config.consensus
    ev = evidence(candidate.engine_ranks.items(), cfg, weights, checked=checked)
    lexical = form_lexical_match(terms, candidate.form)
    fresh = freshness(candidate, ctx)
    bound = cfg.metadata_clip
    correction = max(-bound, min(bound, cfg.lexical * lexical + cfg.freshness * fresh))
    score = min(_MAX_FLOAT, ev.evidence * (1 + correction))
    delta = score - ev.evidence
    parts = {
        "evidence": ev.evidence,
        "M": ev.best_single,
        "consensus": ev.consensus,
        "consensusBoost": ev.consensus_boost,
        "lexical": lexical,
        "freshness": fresh,
        "metadataDelta": delta,
    }
    return Scored(
        candidate=candidate,
        score=score,
        evidence=ev.evidence,
        metadata_delta=delta,
        contributions=ev.contributions,
        parts=parts,
    )


def rank_candidates(
    candidates: list[Candidate], ctx: RankContext, weights: Mapping[str, float] | None = None
) -> list[Scored]:
    """Scored rows by quality score, best first, ties by key; rows with zero evidence are dropped.

    ``weights`` (per logical voter) replace the configured ones, as the adaptive ranker does per query.
    """
    terms = query_terms(ctx.query)
    if candidates:  # the configuration is checked once here, not once per page
        check_config(ctx.config.consensus)
    scored = (score_candidate(c, ctx, terms, weights, checked=True) for c in candidates)
    # Metadata must never revive a page no engine voted for.
    kept = [s for s in scored if s.evidence > 0]
    return sorted(kept, key=lambda s: (-s.score, s.candidate.key))


def include_domains(ctx: RankContext) -> list[str]:
    return sorted({*ctx.request.include_domains, *ctx.query.include_domains})


class ConsensusRanker:
    name = "consensus"
    score_version = SCORE_VERSION
    selects_by = "mmr"

    def rank(self, candidates: list[Candidate], ctx: RankContext) -> list[Scored]:
        return rank_candidates(candidates, ctx, voter_weights(candidates, ctx))


def voter_weights(candidates: list[Candidate], ctx: RankContext) -> dict[str, float] | None:
    """Each logical voter's weight, consensus.weights times ranking.weights (the best alias counts); None
    when ranking.weights names no engine, so consensus.weights are read as they are."""
    config = ctx.config
    if not config.weights:
        return None
    cfg = config.consensus
    out: dict[str, float] = {}
    for engine in {e for c in candidates for e in c.engine_ranks}:
        voter = cfg.aliases.get(engine, engine)
        weight = cfg.weights.get(voter, 1.0) * config.weight_of(engine)
        out[voter] = max(weight, out.get(voter, 0.0))
    return out


RANKER = ConsensusRanker()
