"""Engine weights learned from judgments (``serpfuse calibrate``): one weight per engine for the default fusion.

A weight multiplies the engine's part of the ranker's score (``ranking.weights``, config.py): CombMNZ's (the
default) rank scores, or consensus-v2.1's votes (``consensus``, ``adaptive``). The weights are
fitted to the judged queries with a relevant document: they maximise the mean nDCG@8 (gain 2^rel - 1, the ideal
from every judged document; the bench's metric) minus ``lam * sum(log2(w) ** 2)``, a pull toward equal weights
so that an engine the judgments say little about stays near the neutral 1.

- Search: coordinate ascent over log2-weights on ``GRID`` (1/8 .. 8 in half steps), the engines in a fixed order:
  a first sweep over whole powers of two, then sweeps over the nearby grid points until one moves nothing (at
  most ``MAX_SWEEPS``). A move must gain; among equal gains the weight nearest 1 wins. The only randomness is
  the resampling, under a fixed seed: the same judgments give the same weights.
- ``lam`` is chosen among ``LAMBDAS`` by K-fold cross-validation inside the queries given: the best mean
  out-of-fold nDCG@8, ties to the stronger pull. ``inf`` is equal weights, so judgments that teach nothing
  give weights of 1. For CombMNZ one more choice competes, last in the ties: ``ALONE``, the engine whose list
  alone scores best on the training queries, every other weighted 0.
- The cross-validated gain: each fold's queries are scored with the weights fitted on the other folds, under
  the ``lam`` that the other folds' out-of-fold scores pick, against equal weights (paired bootstrap interval).
- Each weight's interval: resample the queries with replacement, refit at the chosen ``lam`` (starting from the
  fitted weights), percentiles.

Speed: each query's fusion is worked out once up to the weights (``QueryCache``: each candidate's vote from
each engine at weight 1, its factor, its grade, what the selection needs); numpy then
fuses every query for a whole line of the grid at once. tests/test_calibrate.py checks that this gives the
lists the rankers themselves give.

The modules: ``problem`` (each query worked out up to the weights, and every query at once: the numpy replica
of the rankers' fusion and selection), ``fit`` (coordinate ascent), ``validate`` (the cross-validation, the
intervals, ``calibrate``) and ``io`` (runs, recordings, TREC qrels and JSON Lines in). The paired bootstrap is
``bench.bootstrap``'s, the one every bench report uses.
"""

from __future__ import annotations

from serpfuse.bench.calibrate.fit import GRID_VALUES, alone_weights, fit
from serpfuse.bench.calibrate.io import (
    default_config,
    is_json_lines,
    problem_from_recording,
    problem_from_runs,
    read_run_qrels,
    recording_judgments,
)
from serpfuse.bench.calibrate.problem import (
    ALONE,
    FOLDS,
    GRID,
    LAMBDAS,
    RESAMPLES,
    STRATEGIES,
    CalibrationError,
    K,
    MMRInputs,
    Problem,
    QueryCache,
    cache_ranking_inputs,
)
from serpfuse.bench.calibrate.validate import (
    Calibration,
    CrossValidation,
    calibrate,
    cross_validate,
    fold_of,
    toml_key,
)

__all__ = [
    "ALONE",
    "FOLDS",
    "GRID",
    "GRID_VALUES",
    "K",
    "LAMBDAS",
    "RESAMPLES",
    "STRATEGIES",
    "Calibration",
    "CalibrationError",
    "CrossValidation",
    "MMRInputs",
    "Problem",
    "QueryCache",
    "alone_weights",
    "cache_ranking_inputs",
    "calibrate",
    "cross_validate",
    "default_config",
    "fit",
    "fold_of",
    "is_json_lines",
    "problem_from_recording",
    "problem_from_runs",
    "read_run_qrels",
    "recording_judgments",
    "toml_key",
]
