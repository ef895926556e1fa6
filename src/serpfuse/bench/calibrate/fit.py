"""The fit: log2-weights by coordinate ascent on ``GRID``, a pull toward equal weights (``lam``)."""

from __future__ import annotations

import math

import numpy as np

from serpfuse.bench.calibrate.problem import COARSE, EPS, GRID, LOCAL, MAX_SWEEPS, Problem

GRID_VALUES = np.array([2.0**g for g in GRID])
_NEUTRAL = GRID.index(0.0)
# among equal gains, the grid point nearest weight 1 (then the lower one)
_PREFERENCE = sorted(range(len(GRID)), key=lambda i: (abs(GRID[i]), GRID[i]))


def fit(
    problem: Problem,
    lam: float,
    counts: np.ndarray | None = None,
    start: np.ndarray | None = None,
    sweeps: int = MAX_SWEEPS,
) -> np.ndarray:
    """log2-weights (one per ``problem.voters``) by coordinate ascent; ``counts`` weigh the queries.

    A fit from equal weights (no ``start``) first tries every whole power of two (``COARSE``) for each engine;
    then each sweep tries ``LOCAL`` grid points either side of where each engine is, until none moves.
    """
    if math.isinf(lam) or not problem.voters:
        return np.zeros(len(problem.voters))
    theta = np.zeros(len(problem.voters)) if start is None else start.copy()
    counts = np.ones(problem.queries) if counts is None else np.asarray(counts, dtype=float)
    weight = counts / counts.sum()
    line = problem.line(2.0**theta)
    for sweep in range(sweeps):
        moved = False
        for column in range(len(problem.voters)):
            current = GRID.index(float(theta[column]))
            if sweep == 0 and start is None:
                points = sorted({*COARSE, current})
            else:
                points = list(range(max(0, current - LOCAL), min(len(GRID), current + LOCAL + 1)))
            gains = problem.ndcg(line.scores(column, GRID_VALUES[points])) @ weight
            objective = {i: gains[k] - lam * GRID[i] ** 2 for k, i in enumerate(points)}
            best = max(objective.values())
            if best <= objective[current] + EPS:
                continue
            theta[column] = GRID[
                next(i for i in _PREFERENCE if i in objective and objective[i] >= best - EPS)
            ]
            line.set(2.0**theta)
            moved = True
        if not moved:
            break
    return theta


def alone_weights(problem: Problem, counts: np.ndarray | None = None) -> dict[str, float]:
    """1 for the engine best alone on ``problem``'s queries, 0 for every other."""
    best = problem.best_alone(counts)
    return {v: 1.0 if v == best else 0.0 for v in problem.voters}
