"""The generalization suite's arithmetic: gaps to the best plain method, and the cross-validated choice that
never reports a figure on the queries that chose it."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from benchmarks.suite import FOLDS, PLAIN, SetupScores, cross_validated


def setup(values: dict[str, dict[str, float]]) -> SetupScores:
    scores = SetupScores("s", "fixed")
    scores.per_query = values
    return scores


def test_the_gap_is_against_the_best_plain_method() -> None:
    s = setup({"rrf (plain)": {"a": 0.5}, "combmnz": {"a": 0.6}, "borda": {"a": 0.4}, "x": {"a": 0.66}})
    assert s.best_plain() == ("combmnz", 0.6)
    assert abs(s.gap("x") - 10.0) < 1e-9


def test_the_choice_is_made_without_the_held_out_subset() -> None:
    # "x" wins on every subset but S1, where it loses badly; "y" ties the best plain method everywhere
    queries = {f"q{i}": SimpleNamespace(subset=FOLDS[i % 5]) for i in range(10)}
    plain = {q: 0.5 for q in queries}
    x = {q: (0.1 if d.subset == "S1" else 0.6) for q, d in queries.items()}
    s = setup({**{p: plain for p in PLAIN}, "x": x, "y": dict(plain)})
    rows = {r["held out"]: r for r in cross_validated([s], queries, ["x", "y"])}
    assert rows["S1"]["chosen on the other four"] == "x"  # chosen on S2-S5 where it wins ...
    assert rows["S1"]["mean gap held out"] < -50  # ... and reported on S1, where it loses
    assert (
        rows["S2"]["chosen on the other four"] == "y"
    )  # with S1 among the training subsets, x loses overall


def test_a_text_corpus_is_compared_fold_by_fold_on_its_own_folds() -> None:
    """trec-dl's folds come from its queries' positions (``fold_of``), not from crw56's even qids."""
    from benchmarks.suite import crw56_rows

    qids = ["dl19-1", "dl19-2", "dl20-3", "dl21-4"]
    per_query = {m: dict.fromkeys(qids, 0.5) for m in PLAIN}
    per_query["rrf (plain)"]["dl20-3"] = 0.9  # best overall, and on fold 2 only
    rows = crw56_rows(per_query, PLAIN, dict(zip(qids, range(4), strict=True)))
    combmnz = next(r for r in rows if r["method"] == "combmnz")
    assert combmnz["best plain"] == "rrf (plain)"
    assert combmnz["fold Δ"] == pytest.approx([0.0, 0.0, -0.4, 0.0])
