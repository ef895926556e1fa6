"""A grid sweep over ranking knobs: the marginal mean of every knob value, and the best point against the default
with a paired bootstrap (a tie with the default is no reason to move)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from serpfuse.bench.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, Bootstrap, paired_bootstrap
from serpfuse.bench.metrics import mean

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

    Reports the marginal means per knob value and the best grid point against the default with a paired
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
