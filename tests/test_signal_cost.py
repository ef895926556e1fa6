"""``python -m benchmarks --signal-cost`` (the 0.2 ms cost target): the A/B's arms, their turns, and the command."""

from __future__ import annotations

import json

import pytest

from benchmarks import signal_cost
from conftest import need
from serpfuse.config import RankingConfig
from test_bench_crw56 import bench_runner


def test_signals_off_switches_off_only_the_anchor_demotion_and_content_reliability():
    on = RankingConfig()
    off = signal_cost.signals_off(on)
    assert off.filters.anchor_demotion == 1 and off.agree.content_power == 0
    assert on.filters.anchor_demotion < 1 and on.agree.content_power > 0  # the default has both on
    assert off.model_dump(exclude={"filters", "agree"}) == on.model_dump(exclude={"filters", "agree"})
    assert off.filters.model_dump(exclude={"anchor_demotion"}) == on.filters.model_dump(
        exclude={"anchor_demotion"}
    )


def test_the_calls_take_turns_and_no_call_is_always_first():
    seen: list[str] = []
    times = signal_cost.fastest({"a": lambda: seen.append("a"), "b": lambda: seen.append("b")}, 4)
    assert seen == ["a", "b", "a", "b", "b", "a", "a", "b", "b", "a"]  # warm calls, then rounds in turn
    assert set(times) == {"a", "b"} and all(t >= 0 for t in times.values())


def test_medians_are_taken_per_query_first():
    per_query = [
        {"default": 2.0, "off": 1.0, "analysis": 0.5, "plain": 0.25},
        {"default": 4.0, "off": 3.5, "analysis": 0.75, "plain": 0.5},
        {"default": 9.0, "off": 8.75, "analysis": 1.0, "plain": 0.5},
    ]
    m = signal_cost.medians(per_query)
    assert m["default_ms"] == 4.0 and m["off_ms"] == 3.5
    assert m["difference_ms"] == 0.5  # of 1.0, 0.5, 0.25: not 4.0 - 3.5 by chance alone
    assert m["analysis_beyond_plain_ms"] == 0.25
    assert m["added_ms"] == 0.75  # of 1.25, 0.75, 0.75


def test_cli_signal_cost_measures_every_recorded_query(data_dir):
    need(data_dir / signal_cost.RECORDING)
    result = bench_runner()("--data", str(data_dir), "--signal-cost", "--repeat", "1", "--json")
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["repeat"] == 1 and len(out["queries"]) == 56
    assert all(q["default"] > 0 and q["off"] > 0 and q["analysis"] > 0 for q in out["queries"])
    assert set(out["medians"]) >= {"default_ms", "off_ms", "difference_ms", "ratio", "added_ms"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--signal-cost", "--strategy", "rrf"], "--signal-cost measures the default configuration"),
        (["--signal-cost", "--perf"], "--signal-cost measures the default configuration"),
        (["--signal-cost", "--corpus", "mq2008"], "--signal-cost runs on the crw56 replay"),
    ],
)
def test_cli_signal_cost_bad_input_is_a_one_line_error(data_dir, args, message):
    result = bench_runner()("--data", str(data_dir), *args)
    assert result.exit_code == 2, result.stdout
    assert message in result.stderr and result.stderr.count("\n") == 1
