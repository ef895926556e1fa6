"""Weighted reciprocal-rank fusion with authority and freshness boosts.

    vote  = w_e / (rrfConstant + rank)     w_e = rrf.weights x ranking.weights (1 when not named)
    score = sum of votes + authorityBoost * isOfficialDomain + freshnessBoost * freshness(date, freshnessDays)

Ties are broken by a weighted round-robin interleave of the engines' lists (an engine of weight 2 gets two slots
per round), with the query's region leading (CJK engines first for a CJK query), so one verbose engine cannot
fill the list before another is looked at.
"""

from __future__ import annotations

import datetime as dt
import math

from serpfuse.ranking.context import RankContext
from serpfuse.ranking.tables import is_official
from serpfuse.ranking.types import Candidate, Scored

CJK_ENGINES = frozenset({"bing-cn", "anysearch", "baidu", "wikipedia-zh"})


def freshness(published: dt.datetime | None, now: dt.datetime, days: float) -> float:
    """1 for today, falling linearly to 0 at ``days`` old; unknown or future dates are neutral (0)."""
    if published is None:
        return 0.0
    if published.tzinfo is None:
        published = published.replace(tzinfo=dt.UTC)
    age = (now - published).total_seconds() / 86400
    if age < 0:
        return 0.0
    return max(0.0, 1.0 - age / days)


def interleave_order(
    candidates: list[Candidate], weights: dict[str, float], lead: list[str]
) -> dict[str, int]:
    """Weighted round-robin over the engines' lists: candidate key -> position of its first appearance."""
    lists: dict[str, list[tuple[int, str]]] = {}
    for cand in candidates:
        for engine, rank in cand.engine_ranks.items():
            lists.setdefault(engine, []).append((rank, cand.key))
    for rows in lists.values():
        rows.sort()
    engines = sorted(lists, key=lambda e: (e not in lead, -weights.get(e, 1.0), e))
    slots = {e: max(1, round(weights.get(e, 1.0))) for e in engines}
    order: dict[str, int] = {}
    cursors = dict.fromkeys(engines, 0)
    while any(cursors[e] < len(lists[e]) for e in engines):
        for engine in engines:
            for _ in range(slots[engine]):
                if cursors[engine] < len(lists[engine]):
                    key = lists[engine][cursors[engine]][1]
                    cursors[engine] += 1
                    order.setdefault(key, len(order))
    return order


class RRFRanker:
    name = "rrf"
    score_version = "rrf-1"
    selects_by = "top"

    def rank(self, candidates: list[Candidate], ctx: RankContext) -> list[Scored]:
        cfg = ctx.config.rrf
        lead: list[str] = []
        if cfg.region_policy:
            engines = {e for c in candidates for e in c.engine_ranks}
            if ctx.lead_engines is not None:  # the fan-out knew each engine's region
                lead = [e for e in engines if e in ctx.lead_engines]
            else:  # bare lists or a recording: judge by name
                lead = [e for e in engines if (e in CJK_ENGINES) == ctx.query.is_cjk]
        weights = {
            e: cfg.weights.get(e, 1.0) * ctx.config.weight_of(e) * (1 + cfg.region_lead_bonus * (e in lead))
            for c in candidates
            for e in c.engine_ranks
        }
        order = interleave_order(candidates, weights, lead) if cfg.interleave else {}
        scored = []
        for cand in candidates:
            votes = {e: weights[e] / (cfg.rrf_constant + r) for e, r in cand.engine_ranks.items()}
            evidence = math.fsum(votes.values())
            authority = cfg.authority_boost * is_official(cand.host)
            fresh = (
                cfg.freshness_boost * freshness(cand.published, ctx.now, cfg.freshness_days)
                if cand.date_status == "known"
                else 0.0
            )
            parts = {"rrf": evidence, "authority": authority, "freshness": fresh}
            if order:
                parts["interleave"] = float(order.get(cand.key, len(order)))
            score = evidence + authority + fresh
            scored.append(
                Scored(
                    cand, score, evidence, metadata_delta=authority + fresh, contributions=votes, parts=parts
                )
            )
        return sorted(scored, key=lambda s: (-s.score, order.get(s.candidate.key, 0), s.candidate.key))


RANKER = RRFRanker()
