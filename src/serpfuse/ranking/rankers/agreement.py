"""Agreement-weighted fusion: each engine's weight is estimated, per query and without labels, from how well its
list agrees with what the *other* engines say; then a weighted reciprocal-rank fusion.

For every engine ``e`` showing ``n_e`` rows:

    backing_-e(d) = sum over the other engines f of  w_f / (k + rank_f(d))          (leave-one-out)
    support_e     = sum_{j<=m} backing_-e(row j of e) / max backing_-e / log2(j + 1)
                    / sum_{j<=m} 1 / log2(j + 1)                                  (position-aware, 0..1)
    w_e           = coverage_e * (support_e / max support) ** power,  coverage_e = (n_e / max n) ** coverage
                    (then divided by the largest w, so the best-backed engine keeps its prior; an engine with
                    support 0 gets a vanishing budget shared among its n_e rows instead)
    score(d)      = sum over engines e showing d of  w_e / (k + rank_e(d))

``support_e`` asks how strongly the other engines back the rows ``e`` puts on top: an engine whose top rows
nobody else returns is likely noise, one whose top rows everybody returns is likely sound. ``w`` starts at
``coverage`` and the support step is repeated ``iterations`` times, so backing from weak engines counts less.
Support is measured against the others only, so an engine cannot vote for itself. With fewer than
``min_engines`` engines support is symmetric (two engines back each other exactly as much) and carries no
information: the weights stay at ``coverage`` and the ranker is plain weighted RRF.

Each row's ``contributions`` hold every engine's vote ``w_e / (k + rank)``; ``parts`` hold the estimated weight
(``weight:<engine>``) and support (``support:<engine>``) of each engine that voted for it.

Measured on MQ2008-agg (bench-notes/mq2008-fusion.md): see there for where it wins and by how much.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from serpfuse.config import AgreementConfig
from serpfuse.ranking.candidates import EngineLists, engine_lists
from serpfuse.ranking.context import RankContext
from serpfuse.ranking.types import Candidate, Scored


@dataclass(frozen=True)
class EngineEstimate:
    weight: float
    support: float | None  # 0..1; None when not estimated (too few engines)


def _votes(
    lists: EngineLists,
    weights: Mapping[str, float],
    k: float,
    skip: frozenset[str] = frozenset(),
    share: Mapping[str, float] | None = None,
) -> dict[str, float]:
    """Weighted reciprocal-rank votes; ``share`` scales an engine's votes (1 / its group's size when backing)."""
    scores: dict[str, float] = {}
    for engine, keys in lists.items():
        if engine in skip:
            continue
        w = weights[engine] * (share[engine] if share else 1.0)
        for rank, key in enumerate(keys, start=1):
            scores[key] = scores.get(key, 0.0) + w / (k + rank)
    return scores


def support(keys: Sequence[str], backing: Mapping[str, float], depth: int) -> float:
    """How strongly ``backing`` (the other engines' votes) supports the top ``depth`` of ``keys``, in 0..1.

    Each row counts its backing relative to the best-backed row, discounted by log2(position + 1); the sum is
    divided by the discounts of a full ``depth``-row list, so a list with fewer rows cannot score as high.
    """
    top = max(backing.values(), default=0.0)
    if top <= 0:
        return 0.0
    discounts = [1.0 / math.log2(j + 2) for j in range(depth)]
    backed = math.fsum(backing.get(key, 0.0) / top * discounts[j] for j, key in enumerate(keys[:depth]))
    return backed / math.fsum(discounts)


def estimate_engines(
    lists: EngineLists,
    cfg: AgreementConfig,
    list_sizes: Mapping[str, int] | None = None,
    groups: Mapping[str, str] | None = None,
) -> dict[str, EngineEstimate]:
    """Each engine's weight (and support) for this query, from the lists alone.

    ``groups`` names engines that share an index (bing, ddg and yahoo): they never count as backing each other,
    since their agreement is a copy, not a confirmation.
    """
    group_of = {e: (groups or {}).get(e, e) for e in lists}
    peers = {e: frozenset(o for o in lists if group_of[o] == group_of[e]) for e in lists}
    share = {e: 1.0 / len(peers[e]) for e in lists}  # a group backs others as one voter, not as many
    if not lists:
        return {}
    sizes = {e: max(len(keys), (list_sizes or {}).get(e, 0)) for e, keys in lists.items()}
    longest = max(sizes.values()) or 1
    coverage = {e: (sizes[e] / longest) ** cfg.coverage for e in lists}
    if len(set(group_of.values())) < cfg.min_engines or cfg.power == 0:
        return {e: EngineEstimate(coverage[e], None) for e in lists}
    weights = dict(coverage)
    supports: dict[str, float] = {}
    for _ in range(cfg.iterations):
        supports = {
            e: support(keys, _votes(lists, weights, cfg.rrf_constant, peers[e], share), cfg.support_depth)
            for e, keys in lists.items()
        }
        best = max(supports.values())
        if best <= 0:  # nobody backs anybody: support says nothing, keep the coverage weights
            return {e: EngineEstimate(coverage[e], 0.0) for e in lists}
        weights = relative_weights(coverage, supports, sizes, cfg.power, cfg.unbacked_budget)
    return {e: EngineEstimate(weights[e], supports[e]) for e in lists}


def relative_weights(
    coverage: Mapping[str, float],
    supports: Mapping[str, float],
    sizes: Mapping[str, int],
    power: float,
    unbacked_budget: float,
) -> dict[str, float]:
    """Each engine's weight, coverage x (support / best support) ** power, divided by the largest.

    Weights are relative: the best-backed engine keeps its prior, so the longest list (an off-topic one
    included) cannot rescale every vote, and consensus's log1p is not scale-free. An engine none of the others
    backs shares ``unbacked_budget`` (a vanishing one: its rows stay in play, just last) among its rows whatever its length: nothing confirms that its rows belong to
    the query (a shuffled or off-topic list looks exactly like this), so a long unconfirmed list must not
    outrank a short one by coverage.
    """
    best = max(supports.values())
    backed = {e: coverage[e] * (s / best) ** power for e, s in supports.items() if s > 0}
    top = max(backed.values())
    return {e: backed[e] / top if e in backed else unbacked_budget / max(sizes[e], 1) for e in supports}


def fuse(
    lists: EngineLists, cfg: AgreementConfig, list_sizes: Mapping[str, int] | None = None
) -> tuple[list[tuple[str, float]], dict[str, EngineEstimate]]:
    """(key, score) best first (ties by key) and the engine estimates: the whole method on bare lists."""
    estimates = estimate_engines(lists, cfg, list_sizes)
    scores = _votes(lists, {e: est.weight for e, est in estimates.items()}, cfg.rrf_constant)
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0])), estimates


def engine_parts(
    engines: Iterable[str], weights: Mapping[str, float], estimates: Mapping[str, EngineEstimate]
) -> dict[str, float]:
    """The explanation of a row: each voting engine's weight and, when estimated, its support."""
    parts: dict[str, float] = {}
    for e in engines:
        parts[f"weight:{e}"] = weights[e]
        support = estimates[e].support
        if support is not None:
            parts[f"support:{e}"] = support
    return parts


class AgreementRanker:
    name = "agree"
    score_version = "agree-1"
    selects_by = "top"

    def rank(self, candidates: list[Candidate], ctx: RankContext) -> list[Scored]:
        cfg = ctx.config.agree
        # The engines' own ranks (not list positions) give the votes, as in RRF; the lists give the support.
        lists = engine_lists(candidates)
        estimates = estimate_engines(lists, cfg, ctx.engine_list_sizes)
        weights = {e: est.weight for e, est in estimates.items()}
        scored = []
        for cand in candidates:
            votes = {
                e: weights[e] / (cfg.rrf_constant + rank) for e, rank in sorted(cand.engine_ranks.items())
            }
            evidence = math.fsum(votes.values())
            parts = {"agree": evidence, **engine_parts(votes, weights, estimates)}
            scored.append(Scored(cand, evidence, evidence, contributions=votes, parts=parts))
        return sorted(scored, key=lambda s: (-s.score, s.candidate.key))


RANKER = AgreementRanker()
