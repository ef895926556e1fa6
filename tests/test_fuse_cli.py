"""`serpfuse fuse`: TREC runs in, one fused TREC run out, with every ranker and unknown engines."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from conftest import REPO, need
from serpfuse.bench import trec
from serpfuse.cli import fuse
from serpfuse.ranking.rankers import available

# Two engines nobody has heard of. "shared" is in both lists near the top; "deep" only at rank 3 of one.
RUN_A = "q1 Q0 shared 1 9.0 a\nq1 Q0 onlya 2 8.0 a\nq1 Q0 deep 3 7.0 a\nq2 Q0 x 1 1.0 a\n"
RUN_B = "q1 Q0 onlyb 1 5.0 b\nq1 Q0 shared 2 4.0 b\n"


@pytest.fixture
def app() -> typer.Typer:
    app = typer.Typer(add_completion=False)

    @app.callback()
    def _root() -> None:
        """test root"""

    fuse.register(app)
    return app


@pytest.fixture
def runs(tmp_path: Path) -> list[Path]:
    a, b = tmp_path / "engine_a.run", tmp_path / "engine_b.txt"
    a.write_text(RUN_A)
    b.write_text(RUN_B)
    return [a, b]


def _parse(output: str) -> dict[str, list[tuple[str, int, float, str]]]:
    out: dict[str, list[tuple[str, int, float, str]]] = {}
    for line in output.splitlines():
        qid, q0, docid, rank, score, tag = line.split()
        assert q0 == "Q0"
        out.setdefault(qid, []).append((docid, int(rank), float(score), tag))
    return out


@pytest.mark.parametrize("strategy", available())
def test_every_ranker_fuses_unknown_engines(app, runs, strategy):
    result = CliRunner().invoke(app, ["fuse", *map(str, runs), "--strategy", strategy])
    assert result.exit_code == 0, result.output
    fused = _parse(result.stdout)
    assert set(fused) == {"q1", "q2"}
    q1 = fused["q1"]
    assert {d for d, *_ in q1} == {"shared", "onlya", "onlyb", "deep"}
    assert [r for _, r, _, _ in q1] == [1, 2, 3, 4]
    assert all(tag == f"serpfuse-{strategy}" for *_, tag in q1)
    scores = [s for _, _, s, _ in q1]
    assert scores == sorted(scores, reverse=True)
    # trec_eval re-reads the file in the same order we wrote it (score desc, ties docid desc)
    assert [d for d, *_ in q1] == trec.order_by_score([(d, s) for d, _, s, _ in q1])
    assert [d for d, *_ in fused["q2"]] == ["x"]


def test_agreement_wins_under_rrf(app, runs):
    result = CliRunner().invoke(app, ["fuse", *map(str, runs), "--strategy", "rrf"])
    q1 = _parse(result.stdout)["q1"]
    assert q1[0][0] == "shared"  # in both lists (ranks 1 and 2) beats each list's lone top row
    assert q1[-1][0] == "deep"


def test_depth_cuts_each_run_and_limit_cuts_the_output(app, runs):
    deep = CliRunner().invoke(app, ["fuse", *map(str, runs), "--strategy", "borda", "--depth", "1"])
    assert {d for d, *_ in _parse(deep.stdout)["q1"]} == {"shared", "onlyb"}
    short = CliRunner().invoke(app, ["fuse", *map(str, runs), "--strategy", "borda", "--limit", "2"])
    assert len(_parse(short.stdout)["q1"]) == 2


def test_rank_column_is_ignored_like_trec_eval(app, tmp_path):
    run = tmp_path / "solo.run"
    run.write_text("q Q0 low 1 0.1 t\nq Q0 high 2 0.9 t\n")  # ranks contradict the scores
    result = CliRunner().invoke(app, ["fuse", str(run), "--strategy", "rrf"])
    assert [d for d, *_ in _parse(result.stdout)["q"]] == ["high", "low"]


def test_unknown_strategy_is_a_one_line_error(app, runs):
    result = CliRunner().invoke(app, ["fuse", *map(str, runs), "--strategy", "nope"])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and "unknown strategy 'nope'" in result.stderr


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda d: [d / "missing.run"], "run file not found"),
        (lambda d: [d / "x" / "same.run", d / "y" / "same.run"], "two runs are named 'same'"),
        (lambda d: [d / "bad.run"], "bad.run:1"),
    ],
)
def test_bad_input_exits_2(app, tmp_path, setup, message):
    for sub in ("x", "y"):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "same.run").write_text(RUN_B)
    (tmp_path / "bad.run").write_text("q1 Q0 d1\n")
    result = CliRunner().invoke(app, ["fuse", *map(str, setup(tmp_path))])
    assert result.exit_code == 2
    assert message in result.stderr


def test_a_single_run_fused_alone_keeps_trec_eval_order(app, data_dir):
    """Fusing one real run (trec_eval's results.test, scrambled line order) with RRF gives back its own order."""
    path = need(data_dir / "trec_eval" / "results.test")
    result = CliRunner().invoke(app, ["fuse", str(path), "--strategy", "rrf", "--depth", "50"])
    assert result.exit_code == 0, result.stderr
    fused = _parse(result.stdout)
    expected = trec.ranked_lists(trec.read_run(path))
    assert {qid: [d for d, *_ in rows] for qid, rows in fused.items()} == {
        q: d[:50] for q, d in expected.items()
    }


def test_real_command_line(runs):
    """One real process: the installed `serpfuse` entry point, as a user would run it."""
    exe = REPO / ".venv" / "bin" / "serpfuse"
    if not exe.exists():
        pytest.skip(f"no installed entry point at {exe}")
    proc = subprocess.run(
        [str(exe), "fuse", *map(str, runs), "--strategy", "combmnz", "--limit", "3"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    fused = _parse(proc.stdout)
    assert [r for _, r, _, _ in fused["q1"]] == [1, 2, 3]
    assert fused["q1"][0][0] == "shared"
    bad = subprocess.run(
        [str(exe), "fuse", str(runs[0]), "--strategy", "nope"], capture_output=True, text=True
    )
    assert bad.returncode == 2 and "unknown strategy" in bad.stderr


def test_set_changes_a_ranker_knob(app, runs):
    default = _parse(CliRunner().invoke(app, ["fuse", *map(str, runs), "-s", "rrf"]).stdout)["q1"]
    tuned = CliRunner().invoke(app, ["fuse", *map(str, runs), "-s", "rrf", "--set", "rrf.rrf_constant=1"])
    assert tuned.exit_code == 0, tuned.stderr
    assert [s for *_, s, _ in _parse(tuned.stdout)["q1"]] != [s for *_, s, _ in default]
    bad = CliRunner().invoke(app, ["fuse", *map(str, runs), "--set", "rrf.rrf_constant=-1"])
    assert bad.exit_code == 2 and "rrf.rrf_constant" in bad.stderr
