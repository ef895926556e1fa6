"""The ablation's arithmetic and its bar: each rule switched off is a real change of the default, a Δ is the
default minus the row paired by query, and the verdict follows the bar the docstring states."""

from __future__ import annotations

import pytest

from benchmarks.ablation import ALTERNATIVES, RULES, Delta, Row, delta, fusion, judge, knob, rules_for
from serpfuse.config import RankingConfig


@pytest.mark.parametrize("strategy", ["adaptive", "combmnz", "rrf"])
def test_every_rule_of_the_default_flips_something(strategy: str) -> None:
    base = RankingConfig(strategy=strategy)
    rules = rules_for(base)
    assert rules  # the filters at least
    for rule in rules:
        flipped, was_on = rule.change(base)
        assert flipped.fingerprint() != base.fingerprint(), rule.name
        if not was_on:  # an opt-in rule is measured switched on, and switching it off again is the base
            assert rule.off(flipped).fingerprint() == base.fingerprint(), rule.name
    assert base.fingerprint() == RankingConfig(strategy=strategy).fingerprint()  # the base is left alone


def test_rules_follow_the_strategy_that_uses_them() -> None:
    names = {r.name for r in rules_for(RankingConfig(strategy="adaptive"))}
    assert {"agreement weight", "content reliability", "MMR diversity", "echo pages"} <= names
    plain = {r.name for r in rules_for(RankingConfig(strategy="combmnz"))}
    assert "agreement weight" not in plain and "MMR diversity" not in plain and "echo pages" in plain
    assert len({r.name for r in RULES}) == len(RULES)


def test_another_fusion_keeps_the_defaults_filters() -> None:
    base = knob("filters", echo=False)(RankingConfig())
    for name in ALTERNATIVES:
        other = fusion(name)(base)
        assert other.filters == base.filters and other.selection == base.selection
    assert fusion("rrf (plain)")(base).rrf.interleave is False


def test_a_delta_is_the_default_minus_the_row() -> None:
    d = delta([0.6, 0.7, 0.8, 0.9] * 10, [0.5, 0.6, 0.7, 0.8] * 10)
    assert d.delta == pytest.approx(0.1) and d.above and not d.below
    assert delta([0.5, 0.5], [0.5, 0.5]) == Delta(0.0, 0.0, 0.0, 2)


NONE = [(0.0, 0.0, 0)] * 4


def row(kind: str, dev_folds, mq: float = 0.0, robust: float = 0.0, variant_folds=NONE) -> Row:
    same = Delta(0.0, 0.0, 0.0, 10)
    moved = Delta(mq, mq - 0.001, mq + 0.001, 10) if mq else same
    rob = Delta(robust, robust - 0.001, robust + 0.001, 10) if robust else same
    return Row(
        "r", kind, "d", {"all": moved}, {1: moved}, {1: (0.0, 0.0)}, {f"S{i}": moved for i in range(1, 6)},
        same, same, 0, {"dev": dev_folds, "misspelled": variant_folds}, {"misspelled": rob}, {"misspelled": 0},
    )  # fmt: skip


def test_a_text_rule_is_kept_only_when_it_helps_on_two_folds_and_hurts_nowhere() -> None:
    helps_two = [(-0.01, 0.0, 0), (0.0, 0.0, 1), (0.0, 0.0, 0), (0.0, 0.0, 0)]
    assert judge(row("text", helps_two)).verdict == "kept"
    helps_one = [(-0.01, 0.0, 0), (0.0, 0.0, 0), (0.0, 0.0, 0), (0.0, 0.0, 0)]
    assert judge(row("text", helps_one)).verdict == "opt-in"
    hurts_one = [*helps_two[:3], (0.01, 0.0, 0)]  # the row without the rule scores higher on a fold
    assert judge(row("text", hurts_one)).verdict == "opt-in"
    assert judge(row("text", helps_two, mq=0.01)).verdict == "opt-in"  # a text rule must leave MQ2008 alone
    assert judge(row("text", helps_two, robust=-0.02)).verdict == "opt-in"  # loses beyond its interval
    adds_one = [(0.0, 0.0, -1), *NONE[1:]]  # an irrelevant row more, nothing relevant gained
    assert judge(row("text", helps_two, variant_folds=adds_one)).verdict == "opt-in"
    brings_relevant = [(-0.05, -0.1, -1), *NONE[1:]]  # the row comes with relevant ones: not a loss
    assert judge(row("text", helps_two, variant_folds=brings_relevant)).verdict == "kept"


def test_a_rule_for_a_case_dev_lacks_is_judged_on_the_variant_that_has_it() -> None:
    on_misspelled = [(-0.2, -0.1, 0), (-0.1, 0.0, 0), (0.0, 0.0, 0), (0.0, 0.0, 0)]
    assert judge(row("text", NONE, variant_folds=on_misspelled)).verdict == "kept"
    assert "2 of 4 misspelled folds" in judge(row("text", NONE, variant_folds=on_misspelled)).why


def test_a_fusion_rule_needs_mq2008_too() -> None:
    helps_two = [(-0.01, 0.0, 0), (-0.01, 0.0, 0), (0.0, 0.0, 0), (0.0, 0.0, 0)]
    assert judge(row("fusion", helps_two, mq=0.01)).verdict == "kept"
    assert judge(row("fusion", helps_two)).verdict == "opt-in"  # MQ2008 did not move: one corpus only
    assert judge(row("fusion", helps_two, mq=-0.01)).verdict == "opt-in"


def with_trec(r, folds, overall: float = 0.0, fold_deltas=None):
    """The row with trec-dl measured: ``folds`` as setup_folds gives them, each fold's ΔnDCG@8 (default 0)."""
    r.trec_folds = folds
    r.trec = Delta(overall, overall, overall, 76)
    r.trec_fold_deltas = fold_deltas or [Delta(0.0, 0.0, 0.0, 19)] * 4
    return r


def test_a_text_rule_may_be_earned_on_trecdl_where_crw56_lacks_its_case() -> None:
    helps_two = [(-0.01, 0.0, 0), (-0.02, 0.0, 0), (0.0, 0.0, 0), (0.0, 0.0, 0)]
    kept = judge(with_trec(row("text", NONE), helps_two, overall=0.02))
    assert kept.verdict == "kept" and "helps on 2 of 4 folds" in kept.why and "one text corpus" in kept.why
    assert judge(with_trec(row("text", NONE), [helps_two[0], *NONE[1:]])).verdict == "opt-in"  # one fold


def test_a_text_rule_losing_on_trecdl_beyond_its_interval_is_not_kept() -> None:
    helps_two = [(-0.01, 0.0, 0), (0.0, 0.0, 1), (0.0, 0.0, 0), (0.0, 0.0, 0)]
    assert "both text corpora" in judge(with_trec(row("text", helps_two), helps_two, overall=0.01)).why
    below = Delta(-0.02, -0.03, -0.01, 19)
    lost_fold = with_trec(row("text", helps_two), NONE, fold_deltas=[below, *[Delta(0.0, 0.0, 0.0, 19)] * 3])
    assert judge(lost_fold).verdict == "opt-in"
    lost = with_trec(row("text", helps_two), NONE, overall=-0.02)
    lost.trec = Delta(-0.02, -0.03, -0.01, 76)
    assert judge(lost).verdict == "opt-in"
