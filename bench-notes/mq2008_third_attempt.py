"""Issue 8, third attempt (helper mq8, 2026-12-01): weighting variants of `adaptive` on MQ2008's subset draws.

Research scratch, kept in git history only (see bench-notes/mq2008-fusion.md, "Third attempt"). Run from a
worktree with the project's venv:

    .venv/bin/python bench-notes/mq2008_third_attempt.py            # every row, about 6 minutes on 1 core

It re-implements `adaptive` on bare lists (MQ2008's engines have no prior, no group and no text, so adaptive is
consensus-v2.1's E = M + log1p(C) with agreement weights) and checks, before anything else, that it reproduces
the shipped ranker on the one-strong setup. Each variant is then run on seed 1 (tuned on: 3 reference setups +
30 random), seed 7 (14 random) and seed 2026 (20 random), against the same hindsight-best baselines as
`serpfuse bench --random-subsets`, and the fixed-point rows also with each strong ranker shuffled (the
`--garbage-engine` protocol on all 25 @20).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from serpfuse.bench import metrics
from serpfuse.bench import mq2008 as mq
from serpfuse.bench.robustness import garbage_queries
from serpfuse.bench.setups import load_mq2008_queries
from serpfuse.config import AgreementConfig
from serpfuse.rankers.agreement import _votes, estimate_engines, relative_weights, support

Lists = Mapping[str, Sequence[str]]
Weigher = Callable[[Lists], dict[str, float]]

ROOT = Path("../shared/data")
DRAWS = {1: 30, 7: 14, 2026: 20}  # seed -> random subsets (plus the 3 reference setups each)
QUERIES = load_mq2008_queries(ROOT)
JUDGED = {qid: q for qid, q in QUERIES.items() if q.has_relevant}


def fuse(lists: Lists, weigh: Weigher, kappa: float = 10.0, beta: float = 1.0) -> list[str]:
    """adaptive on bare lists: x_e = w_e * kappa / (kappa + r - 1); E = M + beta * log1p(sum - M)."""
    weights = weigh(lists)
    votes: dict[str, list[float]] = {}
    for engine, keys in lists.items():
        for rank, key in enumerate(keys, start=1):
            votes.setdefault(key, []).append(weights[engine] * kappa / (kappa + rank - 1))
    scored = sorted((-(max(v) + beta * math.log1p(sum(v) - max(v))), key) for key, v in votes.items())
    return [key for _, key in scored]


def shipped(cfg: AgreementConfig | None = None) -> Weigher:
    cfg = cfg or AgreementConfig()
    return lambda lists: {
        e: est.weight
        for e, est in estimate_engines(lists, cfg, {e: len(k) for e, k in lists.items()}).items()
    }


def coverage_of(lists: Lists) -> tuple[dict[str, int], dict[str, float]]:
    sizes = {e: len(k) for e, k in lists.items()}
    longest = max(sizes.values())
    return sizes, {e: sizes[e] / longest for e in lists}


def fixed_point(power: float, k: float, guard: bool, rounds: int = 8) -> Weigher:
    """Support measured against the weighted fusion of *all* engines (itself included), repeated until the
    weights settle. ``guard``: an engine none of the others backs in its top 8 keeps the unbacked budget (its
    self-backing would otherwise count)."""

    def weigh(lists: Lists) -> dict[str, float]:
        if not lists:
            return {}
        sizes, cov = coverage_of(lists)
        if len(lists) < 3:
            return cov
        holders: dict[str, int] = {}
        for keys in lists.values():
            for key in keys:
                holders[key] = holders.get(key, 0) + 1
        backed = {e: not guard or any(holders[d] > 1 for d in keys[:8]) for e, keys in lists.items()}
        weights = dict(cov)
        for _ in range(rounds):
            fused = _votes(lists, weights, k)
            sup = {e: support(keys, fused, 8) if backed[e] else 0.0 for e, keys in lists.items()}
            if max(sup.values()) <= 0:
                return cov
            weights = relative_weights(cov, sup, sizes, power)
        return weights

    return weigh


def copies_grouped(tau: float, retention: float | None) -> Weigher | Callable[[Lists], list[str]]:
    """Engines whose top-8 sets overlap by >= tau (of the larger set) are copies: a copy never backs its twin
    in support; with ``retention``, a copy's vote on a row its twin already voted for keeps that fraction."""

    def peers_of(lists: Lists) -> dict[str, frozenset[str]]:
        peers = {e: {e} for e in lists}
        names = sorted(lists)
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                sa, sb = set(lists[a][:8]), set(lists[b][:8])
                if sa and sb and len(sa & sb) / max(len(sa), len(sb)) >= tau:
                    peers[a].add(b)
                    peers[b].add(a)
        return {e: frozenset(p) for e, p in peers.items()}

    def run(lists: Lists) -> list[str]:
        if not lists:
            return []
        peers = peers_of(lists)
        sizes, cov = coverage_of(lists)
        weights = dict(cov)
        if len(lists) >= 3:
            share = {e: 1.0 / len(peers[e]) for e in lists}
            sup = {
                e: support(keys, _votes(lists, cov, 10.0, peers[e], share), 8) for e, keys in lists.items()
            }
            if max(sup.values()) > 0:
                weights = relative_weights(cov, sup, sizes, 0.25)
        votes: dict[str, list[tuple[str, float]]] = {}
        for engine, keys in lists.items():
            for rank, key in enumerate(keys, start=1):
                votes.setdefault(key, []).append((engine, weights[engine] * 10.0 / (9.0 + rank)))
        scored = []
        for key, cast in votes.items():
            seen: set[str] = set()
            values = []
            for engine, value in sorted(cast, key=lambda t: -t[1]):
                keep = retention if retention is not None and peers[engine] & seen else 1.0
                values.append(value * keep)
                seen.add(engine)
            scored.append((-(max(values) + math.log1p(sum(values) - max(values))), key))
        return [key for _, key in sorted(scored)]

    return run


def support_variant(mode: str) -> Weigher:
    """``own``: support divided by the discounts of the engine's own rows (length left to coverage alone);
    ``chance``: support minus what a list of the same length drawn at random from the pool would get."""

    def weigh(lists: Lists) -> dict[str, float]:
        if not lists:
            return {}
        sizes, cov = coverage_of(lists)
        if len(lists) < 3:
            return cov
        discounts = [1.0 / math.log2(j + 2) for j in range(8)]
        sup = {}
        for engine, keys in lists.items():
            back = _votes(lists, cov, 10.0, frozenset([engine]))
            top = max(back.values(), default=0.0)
            if top <= 0:
                sup[engine] = 0.0
                continue
            own = sum(discounts[: min(8, len(keys))])
            value = sum(back.get(d, 0.0) / top * discounts[j] for j, d in enumerate(keys[:8]))
            if mode == "own":
                sup[engine] = value / own
            else:
                pool = set(back) | set(keys)
                chance = sum(back.get(d, 0.0) for d in pool) / top / len(pool) * own
                sup[engine] = max(0.0, value - chance) / sum(discounts)
        if max(sup.values()) <= 0:
            return cov
        return relative_weights(cov, sup, sizes, 0.25)

    return weigh


def mean_ndcg(run: Callable[[Lists], list[str]], rankers: Sequence[int], depth: int, queries=None) -> float:
    qs = queries or JUDGED
    return metrics.mean(
        metrics.ndcg_at(run(mq.shown_lists(q, rankers, depth))[:8], q.grades, 8, gain="exp")
        for q in qs.values()
    )


BASELINE_CACHE: dict[tuple, float] = {}


def best_baseline(setup: mq.Setup) -> float:
    key = (setup.rankers, setup.depth)
    if key not in BASELINE_CACHE:
        BASELINE_CACHE[key] = max(mq.evaluate_subsets(QUERIES, [setup], [])[0].baselines.values())
    return BASELINE_CACHE[key]


def row(run: Callable[[Lists], list[str]]) -> list[float]:
    """seed 1 mean, worst, the 3 fixed setups; seed 7 mean, worst; seed 2026 mean, worst (gaps in %)."""
    out: list[float] = []
    for seed, count in DRAWS.items():
        setups = [*mq.REFERENCE_SETUPS, *mq.random_setups(count, seed)]
        gaps = [mq.gap_percent(mean_ndcg(run, s.rankers, s.depth), best_baseline(s)) for s in setups]
        out += [metrics.mean(gaps), min(gaps)] + (gaps[:3] if seed == 1 else [])
    return out


def garbage_row(run: Callable[[Lists], list[str]], shuffled=(9, 15, 17, 18, 21)) -> list[float]:
    clean = mean_ndcg(run, mq.RANKERS, 20)
    out = [clean]
    for ranker in shuffled:
        altered, _ = garbage_queries(QUERIES, ranker)
        bad = mean_ndcg(run, mq.RANKERS, 20, {qid: altered[qid] for qid in JUDGED})
        out.append(mq.gap_percent(bad, clean))
    return out


def main() -> None:
    one_strong = mq.REFERENCE_SETUPS[2]
    ours = mean_ndcg(lambda lists: fuse(lists, shipped()), one_strong.rankers, one_strong.depth)
    real = mq.metasearch(
        JUDGED, mq.strategy_fuser("adaptive"), one_strong.rankers, one_strong.depth
    ).mean_ndcg
    assert abs(ours - real) < 1e-12, (ours, real)

    def cfg(**kw) -> Callable[[Lists], list[str]]:
        return lambda lists: fuse(lists, shipped(AgreementConfig(**kw)))

    variants: list[tuple[str, Callable[[Lists], list[str]]]] = [
        ("shipped default (power 0.25)", cfg()),
        ("agree.power=0.1", cfg(power=0.1)),
        ("agree.power=0.5", cfg(power=0.5)),
        ("agree.power=1", cfg(power=1.0)),
        ("agree.iterations=3", cfg(iterations=3)),
        ("agree.support_depth=10", cfg(support_depth=10)),
        ("agree.rrf_constant=30", cfg(rrf_constant=30.0)),
        ("agree.rrf_constant=60", cfg(rrf_constant=60.0)),
        ("agree.coverage=1.5", cfg(coverage=1.5)),
        ("consensus.kappa=20", lambda lists: fuse(lists, shipped(), kappa=20.0)),
        ("consensus.beta=2", lambda lists: fuse(lists, shipped(), beta=2.0)),
        (
            "kappa = the longest list",
            lambda lists: fuse(lists, shipped(), kappa=max(map(len, lists.values()), default=10)),
        ),
        ("support / own discounts", lambda lists: fuse(lists, support_variant("own"))),
        ("support minus chance", lambda lists: fuse(lists, support_variant("chance"))),
        ("copies (τ 0.8) never back their twin", copies_grouped(0.8, None)),
        ("copies: the same + retention 0.5", copies_grouped(0.8, 0.5)),
        (
            "fixed point, fused consensus, p 0.35 k 30",
            lambda lists: fuse(lists, fixed_point(0.35, 30.0, False)),
        ),
        (
            "fixed point + unbacked guard, p 0.35 k 30",
            lambda lists: fuse(lists, fixed_point(0.35, 30.0, True)),
        ),
        (
            "fixed point + unbacked guard, p 0.25 k 10",
            lambda lists: fuse(lists, fixed_point(0.25, 10.0, True)),
        ),
    ]
    print(
        "| variant | seed 1 mean | seed 1 worst | all 25 | 1–5 | one strong | seed 7 mean | seed 7 worst "
        "| seed 2026 mean | seed 2026 worst |"
    )
    print("|---|" + "---:|" * 9)
    for label, run in variants:
        print(f"| {label} | " + " | ".join(f"{v:+.2f} %" for v in row(run)) + " |", flush=True)
    print()
    print("| variant | all 25 clean | r9 | r15 | r17 | r18 | r21 |")
    print("|---|" + "---:|" * 6)
    for label, run in (variants[0], *variants[-3:]):
        clean, *drops = garbage_row(run)
        print(f"| {label} | {clean:.4f} | " + " | ".join(f"{v:+.2f} %" for v in drops) + " |", flush=True)


if __name__ == "__main__":
    main()
