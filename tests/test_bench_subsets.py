"""`python -m benchmarks --corpus mq2008 --random-subsets N`: every strategy against the best baseline per subset.

Most tests run on a small synthetic MQ2008-agg folder (ranker 3 is perfect, the others shuffle), so they are
fast and their answers are known; one test checks the reference setups against the published figures on the real
corpus and skips without it.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from benchmarks import mq2008 as m
from conftest import need
from test_bench_crw56 import _json, bench_runner

PERFECT = 3  # the synthetic ranker that orders every query by grade


def _line(grade: int, qid: str, docid: str, positions: dict[int, int]) -> str:
    features = " ".join(f"{r}:{positions.get(r, 'NULL')}" for r in m.RANKERS)
    return f"{grade} qid:{qid} {features} #docid = {docid}\n"


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory) -> Path:
    """Two queries per subset, 12 documents each (3 relevant); ranker 3 perfect, the others random."""
    root = tmp_path_factory.mktemp("mq2008-synthetic")
    rng = random.Random(0)
    for s, subset in enumerate(m.SUBSETS):
        lines = []
        for q in range(2):
            qid = f"{s}{q}"
            docs = [f"{qid}-d{i:02d}" for i in range(12)]
            grades = {d: (2 if i == 0 else 1 if i < 3 else 0) for i, d in enumerate(docs)}
            positions: dict[str, dict[int, int]] = {d: {} for d in docs}
            for ranker in m.RANKERS:
                shown = docs if ranker == PERFECT else rng.sample(docs, rng.randint(4, 12))
                if ranker != PERFECT:
                    rng.shuffle(shown)
                for position, d in enumerate(shown, start=1):
                    positions[d][ranker] = position
            lines.extend(_line(grades[d], qid, d, positions[d]) for d in docs)
        (root / f"{subset}.txt").write_text("".join(lines))
    data = root / "data"
    data.mkdir()
    (data / "mq2008-agg").symlink_to(root, target_is_directory=True)
    return data


@pytest.fixture
def cli():
    return bench_runner()


# --- pure parts ------------------------------------------------------------------------------------------------


def test_random_setups_are_reproducible_and_within_the_ranges() -> None:
    setups = m.random_setups(30, seed=7)
    assert setups == m.random_setups(30, seed=7)
    assert setups != m.random_setups(30, seed=8)
    assert [s.name for s in setups[:2]] == ["random 1", "random 2"]
    for s in setups:
        assert 3 <= len(s.rankers) <= 10 and s.depth in (10, 20)
        assert list(s.rankers) == sorted(set(s.rankers)) and set(s.rankers) <= set(m.RANKERS)
    assert len({len(s.rankers) for s in setups}) > 3  # the size is drawn, not fixed
    assert {s.depth for s in setups} == {10, 20}


def test_reference_setups_are_issue_4s() -> None:
    assert [(s.rankers, s.depth) for s in m.REFERENCE_SETUPS] == [
        (m.RANKERS, 20),
        ((1, 2, 3, 4, 5), 10),
        ((2, 7, 9, 12, 16, 21, 25), 20),
    ]


def test_gap_summary_counts_a_tie_as_reaching_the_best() -> None:
    summary = m.gap_summary([0.5, 0.45, 0.66], [0.5, 0.5, 0.6])
    assert summary.mean == pytest.approx((0.0 - 10.0 + 10.0) / 3)
    assert summary.worst == pytest.approx(-10.0) and summary.best == pytest.approx(10.0)
    assert (summary.at_or_above, summary.setups) == (2, 3)
    with pytest.raises(ValueError):
        m.gap_summary([0.5], [0.5, 0.6])


def test_the_best_baseline_ties_go_to_the_first_named() -> None:
    result = m.SubsetResult("x", (1, 2, 3), 10, dict.fromkeys(m.BASELINES, 0.5), 1, {})
    assert result.best_baseline == (m.BASELINES[0], 0.5)


# --- the command on synthetic data ---------------------------------------------------------------------------


def test_random_subsets_json_scores_every_subset_against_its_best_baseline(cli, synthetic) -> None:
    out = _json(
        cli(
            "--data",
            str(synthetic),
            "--corpus",
            "mq2008",
            "--random-subsets",
            "2",
            "--strategy",
            "borda,agree",
            "--json",
        )
    )
    subsets = out["subsets"]
    assert [s["name"] for s in subsets] == ["all 25", "rankers 1-5", "one strong", "random 1", "random 2"]
    drawn = m.random_setups(2, seed=7)
    assert [(tuple(s["rankers"]), s["depth"]) for s in subsets[3:]] == [(d.rankers, d.depth) for d in drawn]
    for s in subsets:
        assert s["best"] == max(s["baselines"].values())
        assert s["baselines"][s["bestBaseline"]] == s["best"]
        # the borda strategy is the borda baseline: same numbers, so its gap is the baseline's
        assert s["strategies"]["borda"]["nDCG@8"] == pytest.approx(s["baselines"]["borda"])
        for values in s["strategies"].values():
            assert values["gap"] == pytest.approx(100 * (values["nDCG@8"] / s["best"] - 1))
    # a perfect ranker in the setup cannot be beaten: it is the best baseline, at nDCG@8 1
    with_perfect = [s for s in subsets if PERFECT in s["rankers"]]
    assert with_perfect and all(
        (s["bestBaseline"], s["bestSingle"], s["best"]) == ("best single", PERFECT, pytest.approx(1.0))
        for s in with_perfect
    )
    summary = out["summary"]
    assert list(summary) == ["borda", "agree", "rrf (plain)", "combmnz", "best single"]
    for label in ("borda", "agree"):
        reached = sum(s["strategies"][label]["atOrAbove"] for s in subsets)
        assert summary[label]["atOrAbove"] == reached and summary[label]["subsets"] == 5
        gaps = [s["strategies"][label]["gap"] for s in subsets]
        assert summary[label]["meanGap"] == pytest.approx(sum(gaps) / 5)
        assert summary[label]["worstGap"] == pytest.approx(min(gaps))
    assert summary["best single"]["baseline"] and not summary["agree"]["baseline"]


def test_the_seed_changes_the_draw(cli, synthetic) -> None:
    args = ["--data", str(synthetic), "--corpus", "mq2008", "--random-subsets", "1", "--json"]
    out = _json(cli(*args, "--seed", "8", "--strategy", "rrf"))
    (drawn,) = m.random_setups(1, seed=8)
    assert (tuple(out["subsets"][3]["rankers"]), out["subsets"][3]["depth"]) == (drawn.rankers, drawn.depth)
    assert out["seed"] == 8


def test_random_subsets_markdown_prints_both_tables(cli, synthetic) -> None:
    result = cli("--data", str(synthetic), "--corpus", "mq2008", "--random-subsets", "0", "--markdown")
    assert result.exit_code == 0, result.stderr
    text = result.stdout
    assert text.startswith(
        "| subset | engines@depth | rrf (plain) | combmnz | borda | best single | combmnz |"  # the default last
    )
    assert "| rankers 1-5 | 1-5@10 |" in text and f"**1.0000 (r{PERFECT})**" in text
    assert "| method | mean gap | worst gap | best gap | at or above best |" in text
    assert "| borda (baseline) |" in text and "3 subsets: the 3 reference setups and 0 random ones" in text


def test_compare_names_a_single_ranker(cli, synthetic) -> None:
    base = ["--data", str(synthetic), "--corpus", "mq2008", "--rankers", "1-5", "--depth", "10"]
    out = _json(cli(*base, "--compare", "single:3", "borda", "--json"))
    assert out["a"]["config"] == "single:3"
    ndcg = out["intervals"]["nDCG@8"]
    assert ndcg["meanA"] == pytest.approx(1.0) and ndcg["delta"] < 0 and ndcg["high"] <= 0
    subsets = _json(cli(*base[:4], "--random-subsets", "0", "--strategy", "borda", "--json"))["subsets"]
    assert ndcg["meanB"] == pytest.approx(subsets[1]["strategies"]["borda"]["nDCG@8"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--random-subsets", "1"], "runs on --corpus mq2008"),
        (["--corpus", "mq2008", "--random-subsets", "1", "--rankers", "1-5"], "drop --rankers and --depth"),
        (["--corpus", "mq2008", "--random-subsets", "1", "--depth", "10"], "drop --rankers and --depth"),
        (["--corpus", "mq2008", "--protocol", "classic", "--random-subsets", "1"], "metasearch protocol"),
        (["--corpus", "mq2008", "--random-subsets", "1", "--compare", "rrf", "borda"], "separate runs"),
        (["--corpus", "mq2008", "--seed", "3"], "--seed goes with --random-subsets"),
        (["--corpus", "mq2008", "--rankers", "1-5", "--compare", "single:9", "borda"], "N among 1-5"),
        (["--compare", "single:3", "rrf"], "exists only for --corpus mq2008"),
        (["--corpus", "mq2008", "--compare", "single:3,rrf.k=1", "rrf"], "takes no settings"),
    ],
)
def test_bad_robustness_input_is_a_one_line_error(cli, synthetic, args, message) -> None:
    result = cli("--data", str(synthetic), *args)
    assert result.exit_code == 2, result.stdout
    assert message in result.stderr and result.stderr.count("\n") == 1


# --- the real corpus ----------------------------------------------------------------------------------------------


def test_reference_setups_reproduce_issue_4s_baselines(cli, data_dir) -> None:
    need(data_dir / "mq2008-agg" / "S1.txt")
    out = _json(
        cli(
            "--data",
            str(data_dir),
            "--corpus",
            "mq2008",
            "--random-subsets",
            "0",
            "--strategy",
            "borda",
            "--json",
        )
    )
    all25, first5, strong = out["subsets"]
    expected = [
        (all25, {"rrf (plain)": 0.6828, "borda": 0.6871, "best single": 0.6446}, "borda", 9),
        (first5, {"rrf (plain)": 0.5491, "best single": 0.4675}, "rrf (plain)", 3),
        (strong, {"rrf (plain)": 0.6160, "borda": 0.6416, "best single": 0.6446}, "best single", 9),
    ]
    for subset, figures, best, single in expected:
        for name, value in figures.items():
            assert subset["baselines"][name] == pytest.approx(value, abs=5e-5), (subset["name"], name)
        assert (subset["bestBaseline"], subset["bestSingle"]) == (best, single)
    assert (
        all25["strategies"]["borda"]["gap"] == pytest.approx(0.0)
        and all25["strategies"]["borda"]["atOrAbove"]
    )
