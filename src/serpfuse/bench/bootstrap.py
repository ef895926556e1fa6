"""Is a difference real? The paired bootstrap of per-query deltas.

Plain Python on purpose: a few hundred queries times 10,000 resamples takes well under a second, and the
benchmark should not pull numpy into the install.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

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


def percentile(values: Sequence[float], q: float) -> float:
    """Linear interpolation between order statistics (numpy's default "linear" method); 0 for no values."""
    sorted_values = sorted(values)
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
        low=percentile(means, tail),
        high=percentile(means, 1 - tail),
        confidence=confidence,
        resamples=resamples,
        wins=sum(1 for d in deltas if d > 0),
        losses=sum(1 for d in deltas if d < 0),
    )
