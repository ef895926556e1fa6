"""`python -m benchmarks --corpus consensus`: agreement with consensus-v2.1's frozen fused lists.

The agreement metrics on hand-made lists, the module's run, then the command in process (typer's CliRunner)
and as a real subprocess of the installed entry point. Each command-line test prints every case's agreement
(see it with ``pytest -s``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchmarks import consensus_frozen as frozen
from benchmarks.cli import app
from conftest import REPO, need
from serpfuse.config import RankingConfig

DIR = "consensus-v2.1"
REPRODUCED = 10  # of the 12 frozen lists; the other two mix in X posts


def rows(*items: tuple[str, float]) -> list[frozen.ListedRow]:
    return [frozen.ListedRow(url, score, score) for url, score in items]


# --- the agreement metrics -----------------------------------------------------------------------------------


def test_kendall_tau_counts_pairs_of_shared_items() -> None:
    assert frozen.kendall_tau(["a", "b", "c"], ["a", "b", "c"]) == 1.0
    assert frozen.kendall_tau(["a", "b", "c"], ["c", "b", "a"]) == -1.0
    # one swapped pair of three: (2 concordant - 1 discordant) / 3
    assert frozen.kendall_tau(["a", "b", "c"], ["b", "a", "c"]) == pytest.approx(1 / 3)
    # only the shared items count; "x" and "y" are ignored
    assert frozen.kendall_tau(["a", "x", "b"], ["b", "y", "a"]) == -1.0
    assert frozen.kendall_tau(["a", "b"], ["a", "z"]) is None


def test_identical_lists_agree_exactly() -> None:
    expected = rows(("u1", 2.0), ("u2", 1.5), ("u3", 1.0))
    values = frozen.agreement(expected, list(expected))
    assert values == {
        "exact": 1.0,
        "positions": 1.0,
        "overlap": 1.0,
        "tau": 1.0,
        "maxScoreDiff": 0.0,
        "maxSelDiff": 0.0,
    }


def test_a_score_beyond_the_tolerance_is_not_exact() -> None:
    expected = rows(("u1", 2.0), ("u2", 1.5))
    got = [expected[0], frozen.ListedRow("u2", 1.5 + 1e-6, 1.5 - 3e-6)]
    values = frozen.agreement(expected, got)
    assert values["exact"] == 0.0
    assert values["positions"] == 1.0
    assert values["maxScoreDiff"] == pytest.approx(1e-6)
    assert values["maxSelDiff"] == pytest.approx(3e-6)
    within = frozen.agreement(expected, [expected[0], frozen.ListedRow("u2", 1.5 + 1e-12, 1.5)])
    assert within["exact"] == 1.0


def test_a_swap_and_a_missing_url_move_order_and_overlap() -> None:
    expected = rows(("u1", 3.0), ("u2", 2.0), ("u3", 1.0), ("u4", 0.5))
    got = rows(("u2", 2.0), ("u1", 3.0), ("u3", 1.0), ("other", 0.9))
    values = frozen.agreement(expected, got)
    assert values["exact"] == 0.0
    assert values["positions"] == 0.25  # only u3 holds its place
    assert values["overlap"] == 0.75
    assert values["tau"] == pytest.approx(1 / 3)  # u1/u2 swapped, both before u3
    assert values["maxScoreDiff"] == 0.0  # shared urls keep their scores
    shorter = frozen.agreement(expected, expected[:2])
    assert shorter["positions"] == 0.5 and shorter["exact"] == 0.0


# --- the module's run ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def folder(data_dir: Path) -> Path:
    folder = need(data_dir / DIR)
    for name in frozen.BASELINE_FILES:
        need(folder / name)
    return folder


@pytest.fixture(scope="module")
def cases(folder: Path) -> list[frozen.FrozenCase]:
    return frozen.load_cases(folder)


def test_run_reproduces_every_rebuildable_list(cases: list[frozen.FrozenCase]) -> None:
    steps: list[None] = []
    report = frozen.run(cases, RankingConfig(strategy="consensus"), "consensus", lambda: steps.append(None))
    assert len(steps) == len(cases) == 12  # the progress bar also counts the skipped cases
    assert report.summary["queries"] == REPRODUCED
    assert report.summary[frozen.PRIMARY] == 1.0
    assert report.summary["maxScoreDiff"] <= frozen.TOLERANCE
    assert report.summary["maxSelDiff"] <= frozen.TOLERANCE
    assert report.worst == []
    assert sum("not scored: community=true" in note for note in report.notes) == 2
    assert set(report.by_group["baseline"]) == {"v1", "community-v1"}


def test_a_changed_knob_shows_up_as_disagreement(cases: list[frozen.FrozenCase]) -> None:
    """The corpus can tell configurations apart: kappa 20 is not the reference's consensus-v2.1."""
    config = RankingConfig(strategy="consensus")
    config = config.model_copy(update={"consensus": config.consensus.model_copy(update={"kappa": 20.0})})
    report = frozen.run(cases, config, "kappa 20")
    assert report.summary["exact"] < 1.0
    assert report.summary["maxScoreDiff"] > 1e-3
    # the overall difference is the largest over the cases, not their mean
    assert report.summary["maxScoreDiff"] == max(q.values["maxScoreDiff"] for q in report.per_query)
    assert report.worst and all(q.values["exact"] == 0.0 for q in report.worst)


def test_other_rankers_run_on_the_same_inputs(cases: list[frozen.FrozenCase]) -> None:
    report = frozen.run(cases, RankingConfig(strategy="rrf"))
    assert report.label == "rrf"
    assert report.summary["exact"] == 0.0  # rrf scores on another scale
    assert 0.0 < report.summary["overlap"] <= 1.0


def test_missing_files_are_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="score-config-consensus-v2.1.json"):
        frozen.load_cases(tmp_path)


# --- the command ---------------------------------------------------------------------------------------------


def print_agreement(title: str, report: dict) -> None:
    print(f"\n{title}: {report['summary']['exact']:.0%} of {int(report['summary']['queries'])} cases exact")
    for q in report["perQuery"]:
        v = q["values"]
        print(
            f"  {q['qid']:<15} url order match: {'yes' if v['positions'] == 1.0 else 'no ':<3}"
            f"  max |score diff| {v['maxScoreDiff']:.2e}  max |selectionScore diff| {v['maxSelDiff']:.2e}"
        )


def check_reproduced(report: dict) -> None:
    assert report["corpus"] == "consensus-v2.1"
    assert len(report["perQuery"]) == REPRODUCED
    for q in report["perQuery"]:
        v = q["values"]
        assert v["exact"] == 1.0 and v["positions"] == 1.0, q["qid"]
        assert v["maxScoreDiff"] <= frozen.TOLERANCE and v["maxSelDiff"] <= frozen.TOLERANCE, q["qid"]
    assert report["summary"]["exact"] == 1.0


@pytest.fixture
def cli():
    """The research bench's app in process, as ``python -m benchmarks`` builds it."""
    runner = CliRunner()
    return lambda *args: runner.invoke(app, list(args))


def test_cli_bench_consensus(cli, data_dir: Path, folder: Path) -> None:
    result = cli("--corpus", "consensus", "--strategy", "consensus", "--data", str(data_dir), "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)["report"]
    print_agreement("CliRunner", report)
    check_reproduced(report)
    table = cli("--corpus", "consensus", "--strategy", "consensus", "--data", str(data_dir))
    assert table.exit_code == 0 and "10 of 12 cases" in table.stdout


def test_cli_without_the_baselines_exits_2(cli, tmp_path: Path) -> None:
    missing = cli("--corpus", "consensus", "--data", str(tmp_path))
    assert missing.exit_code == 2 and "consensus-v2.1 baselines not found" in missing.output
    (tmp_path / DIR).mkdir()
    empty = cli("--corpus", "consensus", "--data", str(tmp_path))
    assert empty.exit_code == 2 and "consensus-v2.1 file not found" in empty.output


def test_real_command_line(data_dir: Path, folder: Path) -> None:
    """One real process, as BENCHMARKS.md's command runs it: ``python -m benchmarks`` from the repository root."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks",
            "--corpus",
            "consensus",
            "--strategy",
            "consensus",
            "--data",
            str(data_dir),
            "--json",
        ],  # fmt: skip
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)])},
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)["report"]
    print_agreement("python -m benchmarks subprocess", report)
    check_reproduced(report)
