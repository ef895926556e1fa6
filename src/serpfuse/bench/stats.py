"""Is a difference real? Paired bootstrap of per-query deltas, and seed 000's grid sweep with marginal means.

Plain Python on purpose: a few hundred queries times 10,000 resamples takes well under a second, and the
benchmark should not pull numpy into the install.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from serpfuse.bench.metrics import mean

DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 20260531  # fixed, so an interval printed today is the interval printed tomorrow


@dataclass(frozen=True)
class Bootstrap:
    """Mean of ``b - a`` over queries with its percentile interval (``low``..``high`` at ``confidence``)."""

    n: int
    mean_a: float
    mean_b: float
    delta: float
    low: float
    high: float
    confidence: float = 0.95
    resamples: int = DEFAULT_RESAMPLES
    wins: int = 0  # queries where b > a
    losses: int = 0  # queries where b < a

    @property
    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0

    def as_dict(self) -> dict[str, float | int | bool]:
        return {
            "n": self.n,
            "meanA": self.mean_a,
            "meanB": self.mean_b,
            "delta": self.delta,
            "low": self.low,
            "high": self.high,
            "confidence": self.confidence,
            "resamples": self.resamples,
            "wins": self.wins,
            "losses": self.losses,
            "excludesZero": self.excludes_zero,
        }


def _percentile(sorted_values: Sequence[float], q: float) -> float:
    """Linear interpolation between order statistics (numpy's default "linear" method)."""
    if not sorted_values:
        return 0.0
    pos = q * (len(sorted_values) - 1)
    lower = int(pos)
    upper = min(lower + 1, len(sorted_values) - 1)
    return sorted_values[lower] + (sorted_values[upper] - sorted_values[lower]) * (pos - lower)


def paired_bootstrap(
    a: Sequence[float],
    b: Sequence[float],
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = 0.95,
) -> Bootstrap:
    """Resample queries with replacement; the interval is the percentile interval of the mean delta b - a."""
    if len(a) != len(b):
        raise ValueError(f"paired samples differ in length: {len(a)} vs {len(b)}")
    n = len(a)
    if n == 0:
        return Bootstrap(0, 0.0, 0.0, 0.0, 0.0, 0.0, confidence, resamples)
    deltas = [y - x for x, y in zip(a, b, strict=True)]
    rng = random.Random(seed)
    means = sorted(sum(rng.choices(deltas, k=n)) / n for _ in range(resamples))
    tail = (1 - confidence) / 2
    return Bootstrap(
        n=n,
        mean_a=sum(a) / n,
        mean_b=sum(b) / n,
        delta=sum(deltas) / n,
        low=_percentile(means, tail),
        high=_percentile(means, 1 - tail),
        confidence=confidence,
        resamples=resamples,
        wins=sum(1 for d in deltas if d > 0),
        losses=sum(1 for d in deltas if d < 0),
    )


# --- grid sweep ----------------------------------------------------------------------------------------------

Point = dict[str, Any]  # knob -> value


def grid_points(grid: Mapping[str, Sequence[Any]]) -> list[Point]:
    """Every combination of the knob values, in a stable order (first knob varies slowest)."""
    knobs = list(grid)
    return [dict(zip(knobs, values, strict=True)) for values in itertools.product(*(grid[k] for k in knobs))]


@dataclass(frozen=True)
class Marginal:
    knob: str
    value: Any
    mean: float  # mean over the grid points with knob == value (every other knob varies with it)
    configs: int
    is_default: bool


@dataclass
class Sweep:
    metric: str
    default: Point
    default_mean: float
    points: list[tuple[Point, float]]  # every grid point with its mean metric
    marginals: list[Marginal]
    best: Point
    best_mean: float
    best_vs_default: Bootstrap
    higher_is_better: bool = True
    extra: dict[str, Any] = field(default_factory=dict)


def sweep(
    grid: Mapping[str, Sequence[Any]],
    default: Point,
    evaluate: Callable[[Point], Sequence[float]],
    metric: str = "metric",
    higher_is_better: bool = True,
    on_point: Callable[[Point], None] | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> Sweep:
    """Run ``evaluate`` (point -> per-query values, same query order every time) over the grid and the default.

    Reports seed 000's marginal means per knob value and the best grid point against the default with a paired
    bootstrap. The default is evaluated once even when it is also a grid point.
    """
    missing = [k for k in grid if k not in default]
    if missing:
        raise ValueError(f"default lacks a value for: {', '.join(missing)}")
    cache: dict[tuple, list[float]] = {}

    def run(point: Point) -> list[float]:
        key = tuple(sorted((k, repr(v)) for k, v in point.items()))
        if key not in cache:
            cache[key] = list(evaluate(point))
            if on_point:
                on_point(point)
        return cache[key]

    default_point = {k: default[k] for k in grid}
    default_values = run(default_point)
    points = [(p, mean(run(p))) for p in grid_points(grid)]
    marginals = []
    for knob, values in grid.items():
        for value in values:
            means = [m for p, m in points if p[knob] == value]
            marginals.append(Marginal(knob, value, mean(means), len(means), value == default[knob]))
    pick = max if higher_is_better else min
    best, best_mean = pick(points, key=lambda pm: pm[1])
    default_mean = mean(default_values)
    if best_mean == default_mean:  # a tie with the default is no reason to move
        best = default_point
    return Sweep(
        metric=metric,
        default=default_point,
        default_mean=default_mean,
        points=points,
        marginals=marginals,
        best=best,
        best_mean=best_mean,
        best_vs_default=paired_bootstrap(default_values, run(best), resamples=resamples, seed=seed),
        higher_is_better=higher_is_better,
    )
