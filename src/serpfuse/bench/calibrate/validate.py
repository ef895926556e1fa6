"""How good and how sure: the lambda (or one engine alone) chosen by cross-validation, each weight's interval
from refits on resampled queries, the cross-validated gain by ``bench.bootstrap``'s paired bootstrap; and
``calibrate``, which runs it all."""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from serpfuse.bench.bootstrap import DEFAULT_SEED, Bootstrap, paired_bootstrap, percentile
from serpfuse.bench.calibrate.fit import alone_weights, fit
from serpfuse.bench.calibrate.problem import (
    ALONE,
    FOLDS,
    LAMBDAS,
    RESAMPLES,
    CalibrationError,
    Choice,
    Problem,
)
from serpfuse.config import DEFAULT_STRATEGY


def fold_of(queries: int, folds: int, seed: int = DEFAULT_SEED) -> list[int]:
    """Each query's fold: a fixed shuffle, dealt round-robin (so folds differ in size by one at most)."""
    order = list(range(queries))
    random.Random(seed).shuffle(order)
    out = [0] * queries
    for position, query in enumerate(order):
        out[query] = position % folds
    return out


@dataclass
class CrossValidation:
    """Out-of-fold nDCG@8 of each query under each ``lam`` (``inf``: equal weights)."""

    folds: list[int]
    out_of_fold: dict[Choice, np.ndarray]

    def mean(self, lam: Choice, mask: np.ndarray | None = None) -> float:
        values = self.out_of_fold[lam]
        return float(values[mask].mean() if mask is not None else values.mean())

    def best(self, mask: np.ndarray | None = None) -> Choice:
        """The choice with the best mean out-of-fold nDCG@8 (over ``mask``); ties to the stronger pull, and
        ``ALONE`` (when offered) last."""
        choices = list(self.out_of_fold)
        means = {c: round(self.mean(c, mask), 12) for c in choices}
        top = max(means.values())
        return next(c for c in choices if means[c] == top)

    def honest(self) -> np.ndarray:
        """Each query's nDCG@8 under the weights fitted without its fold, at the ``lam`` chosen without it."""
        folds = np.array(self.folds)
        out = np.zeros(len(folds))
        for k in sorted(set(self.folds)):
            lam = self.best(folds != k)
            out[folds == k] = self.out_of_fold[lam][folds == k]
        return out


def cross_validate(
    problem: Problem, folds: int = FOLDS, seed: int = DEFAULT_SEED, alone: bool = True
) -> CrossValidation:
    """Out-of-fold nDCG@8 of every choice: each lambda, and (``alone``, additive fusion) ``ALONE``."""
    if problem.queries < 2 * folds:
        raise CalibrationError(
            f"{folds}-fold cross-validation needs at least {2 * folds} judged queries with a relevant "
            f"document; there are {problem.queries}"
        )
    fold = fold_of(problem.queries, folds, seed)
    choices: list[Choice] = [*LAMBDAS, *([ALONE] if alone and problem.additive else [])]
    out = {c: np.zeros(problem.queries) for c in choices}
    for k in range(folds):
        train = [i for i, f in enumerate(fold) if f != k]
        test = [i for i, f in enumerate(fold) if f == k]
        train_problem, test_problem = problem.take(train), problem.take(test)
        theta = None
        for lam in LAMBDAS:  # strongest pull first; each fit starts where the one before ended
            theta = fit(train_problem, lam, start=theta)
            weights = dict(zip(train_problem.voters, 2.0**theta, strict=True))
            out[lam][test] = test_problem.ndcg_of(weights)
        if ALONE in out:
            out[ALONE][test] = test_problem.ndcg_of(alone_weights(train_problem))
    return CrossValidation(fold, out)


@dataclass
class Calibration:
    """The fitted weights, how sure each one is, and what they gain."""

    strategy: str
    weights: dict[str, float]  # voter -> weight, by name
    intervals: dict[str, tuple[float, float]]
    lam: Choice  # a lambda, or ALONE: one engine, the others 0
    cv_means: dict[Choice, float]  # choice -> mean out-of-fold nDCG@8
    equal: float  # mean nDCG@8 with equal weights
    fitted: float  # with the fitted weights, on the queries they were fitted on
    gain: Bootstrap  # cross-validated: equal weights (a) against calibrated (b), per query
    queries: int
    folds: int
    resamples: int
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {
            "strategy": self.strategy,
            "weights": self.weights,
            "intervals": {e: list(i) for e, i in self.intervals.items()},
            "lambda": _lam_text(self.lam),
            "crossValidation": {_lam_text(k): v for k, v in self.cv_means.items()},
            "equal": self.equal,
            "fitted": self.fitted,
            "gain": self.gain.as_dict(),
            "queries": self.queries,
            "folds": self.folds,
            "resamples": self.resamples,
            "notes": self.notes,
        }

    def fusion(self) -> str:
        if self.strategy == DEFAULT_STRATEGY:
            return f"the default fusion ({self.strategy})"
        return f"--strategy {self.strategy} (not the default, {DEFAULT_STRATEGY})"

    def summary_lines(self) -> list[str]:
        g = self.gain
        lams = ", ".join(_lam_text(lam) for lam in self.cv_means)
        return [
            f"engine weights for {self.fusion()}, learned from {self.queries} judged queries with a relevant "
            "document",
            f"nDCG@8: equal weights {self.equal:.4f}, calibrated {self.fitted:.4f} (on the same queries)",
            f"cross-validated gain against equal weights: {g.delta:+.4f} [{g.low:+.4f}, {g.high:+.4f}] "
            f"({g.mean_a:.4f} -> {g.mean_b:.4f}; {self.folds} folds, paired bootstrap 95 %; "
            f"{g.wins} queries up, {g.losses} down)",
            f"regularisation lambda = {_lam_text(self.lam)}, chosen by {self.folds}-fold cross-validation "
            f"among {lams} (inf: equal weights; alone: the engine best alone, the others 0)",
            *self.notes,
        ]

    def toml(self) -> str:
        """The weights as a settings file's ``[ranking.weights]``, each with its interval as a comment."""
        lines = [f"# {line}" for line in self.summary_lines()]
        lines.append(
            f"# each weight's 95 % interval: {self.resamples} bootstrap resamples of the queries, refit"
        )
        lines.append("[ranking.weights]")
        for engine, weight in self.weights.items():
            low, high = self.intervals.get(engine, (weight, weight))
            lines.append(f"{toml_key(engine)} = {weight:.6g}  # 95 % interval {low:.4g} .. {high:.4g}")
        return "\n".join(lines) + "\n"


def _lam_text(lam: Choice) -> str:
    if isinstance(lam, str):
        return lam
    return "inf" if math.isinf(lam) else f"{lam:g}"


def toml_key(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else json.dumps(name)


def calibrate(
    problem: Problem,
    folds: int = FOLDS,
    resamples: int = RESAMPLES,
    seed: int = DEFAULT_SEED,
    progress: Callable[[str], None] | None = None,
    alone: bool = True,
) -> Calibration:
    """Choose ``lam`` (or one engine alone) by cross-validation, fit on every query, then the bootstrap
    intervals."""
    say = progress or (lambda text: None)
    say("cross-validating")
    cv = cross_validate(problem, folds, seed, alone)
    lam = cv.best()
    say("fitting")
    pull = None if lam == ALONE or isinstance(lam, str) else lam  # None: one engine alone, nothing to fit
    theta = np.zeros(len(problem.voters)) if pull is None else fit(problem, pull)
    weights = alone_weights(problem) if pull is None else dict(zip(problem.voters, 2.0**theta, strict=True))
    rng = random.Random(seed)
    draws: dict[str, list[float]] = {v: [] for v in problem.voters}
    for number in range(resamples):
        say(f"resample {number + 1} of {resamples}")
        picks = rng.choices(range(problem.queries), k=problem.queries)
        counted: dict[int, int] = {}
        for i in picks:
            counted[i] = counted.get(i, 0) + 1
        positions = sorted(counted)
        sample = problem.take(positions)
        counts = np.array([counted[i] for i in positions], dtype=float)
        if pull is None:
            drawn_weights = alone_weights(sample, counts)
        else:
            drawn = fit(sample, pull, counts, start=theta)
            drawn_weights = dict(zip(sample.voters, 2.0**drawn, strict=True))
        for voter in problem.voters:
            draws[voter].append(drawn_weights.get(voter, 1.0))
    intervals = {
        v: (float(percentile(draws[v], 0.025)), float(percentile(draws[v], 0.975)))
        if resamples
        else (float(weights[v]),) * 2
        for v in problem.voters
    }
    equal = cv.out_of_fold[math.inf]
    honest = cv.honest()
    ordered = sorted(problem.voters)
    return Calibration(
        strategy=problem.config.strategy,
        weights={v: float(weights[v]) for v in ordered},
        intervals={v: intervals[v] for v in ordered},
        lam=lam,
        cv_means={choice: cv.mean(choice) for choice in cv.out_of_fold},
        equal=float(equal.mean()),
        fitted=float(problem.ndcg_of(weights).mean()),
        gain=paired_bootstrap(equal.tolist(), honest.tolist(), seed=seed),
        queries=problem.queries,
        folds=folds,
        resamples=resamples,
    )
