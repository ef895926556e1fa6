"""Metric definitions on hand-made lists; expected values are written as the formulas."""

from __future__ import annotations

import math

import pytest

from serpfuse.bench import metrics as m
from serpfuse.bench.bootstrap import paired_bootstrap
from serpfuse.bench.sweep import sweep

RANKED = ["a", "b", "c", "d", "e"]
QRELS = {"a": 0, "b": 2, "d": 1, "z": 1}  # c and e unjudged; z relevant but never retrieved


def test_precision_recall_rr():
    assert m.precision_at(RANKED, QRELS, 4) == 2 / 4
    assert m.precision_at(RANKED, QRELS, 10) == 2 / 10  # divides by k, not by the rows shown
    assert m.recall_at(RANKED, QRELS, 4) == 2 / 3
    assert m.recall_at(RANKED, QRELS, 1) == 0.0
    assert m.reciprocal_rank(RANKED, QRELS) == 1 / 2
    assert m.reciprocal_rank(RANKED, QRELS, k=1) == 0.0
    assert m.reciprocal_rank(RANKED, QRELS, level=2) == 1 / 2


def test_average_precision():
    assert m.average_precision(RANKED, QRELS) == pytest.approx((1 / 2 + 2 / 4) / 3)
    assert m.average_precision(RANKED, QRELS, level=2) == pytest.approx(1 / 2)
    assert m.average_precision(RANKED, QRELS, k=3) == pytest.approx((1 / 2) / 3)


def test_ndcg_linear_and_exponential_gains():
    # shown grades: 0, 2, 0, 1 ; ideal grades: 2, 1, 1
    dcg_lin = 2 / math.log2(3) + 1 / math.log2(5)
    ideal_lin = 2 + 1 / math.log2(3) + 1 / math.log2(4)
    assert m.ndcg_at(RANKED, QRELS, 4) == pytest.approx(dcg_lin / ideal_lin)
    dcg_exp = 3 / math.log2(3) + 1 / math.log2(5)
    ideal_exp = 3 + 1 / math.log2(3) + 1 / math.log2(4)
    assert m.ndcg_at(RANKED, QRELS, 4, gain="exp") == pytest.approx(dcg_exp / ideal_exp)
    # the ideal list is cut at k too
    assert m.ndcg_at(["b"], QRELS, 1) == 1.0
    assert m.ndcg_at(["b", "d", "z"], QRELS, 3, gain="exp") == pytest.approx(1.0)


def test_exponential_gain_differs_from_linear_only_above_grade_one():
    assert m.gain_of(1, "exp") == m.gain_of(1, "linear") == 1
    assert m.gain_of(2, "exp") == 3 and m.gain_of(2, "linear") == 2
    assert m.gain_of(-1) == 0


def test_irrelevant_at_counts_unjudged_by_choice():
    # top 5: a (0), b (2), c (unjudged), d (1), e (unjudged)
    assert m.irrelevant_at(RANKED, QRELS, 5) == 3
    assert m.irrelevant_at(RANKED, QRELS, 5, unjudged_irrelevant=False) == 1
    assert m.irrelevant_at(RANKED, QRELS, 5, level=2) == 4


def test_junk_and_clean_rel():
    junk = [True, False, False, True, False, True]
    covered = [True, True, False, True, True, True]
    assert m.junk_at(junk, 5) == 2
    assert m.clean_rel_at(junk, covered, 5) == 2 / 5  # rows 2 and 5
    assert m.clean_rel_at([False], [True], 5) == 1 / 5  # always divided by k
    with pytest.raises(ValueError):
        m.clean_rel_at([False], [True, True], 5)


def test_kept_counts_baseline_relevant_rows_that_stay():
    baseline = ["b", "a", "d", "c"]
    assert m.kept(baseline, ["d", "x", "b"], QRELS, 3) == (2, 2)
    assert m.kept(baseline, ["d", "x", "y"], QRELS, 2) == (0, 1)  # only b is in the baseline's top 2
    assert m.kept(["a"], ["b"], QRELS, 8) == (0, 0)


# --- stats ---------------------------------------------------------------------------------------------------


def test_bootstrap_is_reproducible_and_brackets_the_mean():
    a = [0.1 * (i % 7) for i in range(40)]
    b = [x + 0.05 + 0.02 * ((i % 3) - 1) for i, x in enumerate(a)]
    first = paired_bootstrap(a, b)
    assert first == paired_bootstrap(a, b)  # fixed seed
    assert first.resamples == 10_000 and first.n == 40
    assert first.low <= first.delta <= first.high
    assert first.delta == pytest.approx(0.05 + 0.02 * (13 - 14) / 40)  # i % 3 is 0 fourteen times, 2 thirteen
    assert first.excludes_zero and first.wins > first.losses


def test_bootstrap_of_a_noisy_zero_delta_touches_zero():
    a = [0.0, 1.0] * 10
    b = [1.0, 0.0] * 10
    iv = paired_bootstrap(a, b)
    assert iv.delta == 0.0 and iv.low < 0 < iv.high and not iv.excludes_zero


def test_bootstrap_of_identical_runs_is_a_point():
    iv = paired_bootstrap([0.3, 0.7], [0.3, 0.7])
    assert (iv.low, iv.delta, iv.high) == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError):
        paired_bootstrap([1.0], [1.0, 2.0])


def test_sweep_marginals_and_best_point():
    # metric = x + 10*y per query, two queries; y has the larger effect
    def evaluate(point):
        return [point["x"] + 10 * point["y"], point["x"] + 10 * point["y"] + 1]

    calls = []
    result = sweep({"x": [1, 2], "y": [0, 1]}, {"x": 1, "y": 0}, evaluate, on_point=calls.append)
    assert len(result.points) == 4 and len(calls) == 4  # the default (also a grid point) runs once
    marginal = {(mg.knob, mg.value): mg.mean for mg in result.marginals}
    assert marginal[("x", 1)] == pytest.approx(((1 + 0.5) + (11 + 0.5)) / 2)
    assert marginal[("y", 1)] - marginal[("y", 0)] == pytest.approx(10)
    assert result.best == {"x": 2, "y": 1}
    assert result.default_mean == pytest.approx(1.5)
    assert result.best_vs_default.delta == pytest.approx(11)
    assert [mg.is_default for mg in result.marginals] == [True, False, True, False]


def test_sweep_needs_a_default_for_every_knob():
    with pytest.raises(ValueError, match="z"):
        sweep({"z": [1]}, {}, lambda p: [0.0])


def test_sweep_keeps_the_default_on_a_tie():
    result = sweep({"x": [1, 2, 3]}, {"x": 2}, lambda p: [0.5, 0.5])
    assert result.best == {"x": 2} and result.best_vs_default.delta == 0


def test_sweep_lower_is_better():
    result = sweep({"x": [1, 2, 3]}, {"x": 2}, lambda p: [float(p["x"])], higher_is_better=False)
    assert result.best == {"x": 1} and result.best_vs_default.delta == -1
