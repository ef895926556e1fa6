"""benchmarks/reader_suite.py: its BoW scorer is WCEB's reference, its shingle scorer the benchmark's own, its
bootstrap tells a real gain from none, and it runs end to end on a few pages of each corpus."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from benchmarks import reader_suite as suite
from conftest import REPO, need

CASES = [
    ("The cat sat on the mat.", "the cat sat on the mat"),
    ("The cat sat on the mat.", "A dog sat on the mat, the cat ran."),
    ("one two three", ""),
    ("", "some words here"),
    ("", ""),
    ("Ünïcode wörds and 数字 123", "ünïcode WÖRDS 数字"),
    ("a a a b", "a b b b"),
]


@pytest.mark.parametrize(("truth", "pred"), CASES)
def test_bow_is_wcebs_reference(data_dir, truth, pred):
    reference = suite._import(need(data_dir / suite.WCEB_DIR / "bow_f1.py"), "wceb_bow_f1_test")
    assert suite.bow(truth, pred) == reference.bow(truth, pred)
    assert suite.check_bow_against_reference(data_dir, [(truth, pred)]) == 1


def test_a_scorer_that_drifts_from_the_reference_stops_the_run(data_dir, monkeypatch):
    monkeypatch.setattr(suite, "bow", lambda truth, pred: (1.0, 1.0, 1.0))
    with pytest.raises(suite.SuiteError, match="disagrees with bow_f1.py"):
        suite.check_bow_against_reference(data_dir, [("one two", "three")])


def test_the_bootstrap_sees_a_real_gain_and_no_gain_in_a_tie(data_dir, monkeypatch):
    monkeypatch.setitem(suite.EXTRACTORS, "nothing", (lambda html, url: "", "json", "extracts nothing"))
    monkeypatch.setitem(suite.EXTRACTORS, "also-reader", (suite._reader, "json", "the reader again"))
    corpus = suite.load("dragnet", data_dir, limit=8)
    result = suite.run_corpus(corpus, [suite.READER, "nothing", "also-reader"], data_dir, 300, 1)
    for metric in ("BoW", "shingle"):  # every corpus is scored both ways
        against_nothing, against_itself = result.gains["nothing"][metric], result.gains["also-reader"][metric]
        assert result.runs["nothing"].scores[metric][0] == 0.0
        assert against_nothing.low > 0 and against_nothing.wins == 8 and against_nothing.losses == 0
        assert against_itself.delta == against_itself.low == against_itself.high == 0.0
    assert result.bow_checked == 3 * 8


def test_scrapinghub_is_scored_by_its_own_evaluate_py(data_dir):
    corpus = suite.load("scrapinghub", data_dir, limit=4)
    evaluate = suite._import(data_dir / suite.SHINGLE_DIR / "evaluate.py", "evaluate_test")
    truths = [p.truth for p in corpus.pages]
    shingle = corpus.metrics[0]
    assert shingle.name == "shingle" and [m.name for m in corpus.metrics] == ["shingle", "BoW"]
    per_page = [shingle.score_page(t, t) for t in truths]
    assert shingle.pooled(per_page)[0] == pytest.approx(1.0)
    assert per_page == [evaluate.string_shingle_matching(true=t, pred=t) for t in truths]


@pytest.mark.slow
def test_the_suite_runs_end_to_end_on_a_few_pages(data_dir, tmp_path):
    env_python = [sys.executable, "-m", "benchmarks.reader_suite"]
    saved = tmp_path / "suite.json"
    proc = subprocess.run(
        [*env_python, "--limit", "3", "--resamples", "50", "--save", str(saved)],
        capture_output=True, text=True, cwd=REPO, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    table = proc.stdout
    for corpus in suite.CORPORA:
        assert f"\n{corpus} (3 pages)\n" in table
    assert "Held out, pooled over corpora and metrics" in table
    # 3 corpora (each scored by BoW too) x 3 pages x 3 extractors
    assert "BoW scorer checked against bow_f1.py on 27 page scores: identical." in table
    results = json.loads(saved.read_text())
    assert [r["corpus"] for r in results] == list(suite.CORPORA)
    for r in results:
        assert set(r["extractors"]) == {"serpfuse", "trafilatura", "readability"}
        assert set(r["readerGain"]) == {"trafilatura", "readability"}
        assert set(r["readerGain"]["trafilatura"]) == {"BoW", "shingle"}
        assert r["extractors"]["serpfuse"]["speedVsReader"] == 1.0
        held = r["heldOut"]
        assert len(held["foldThresholds"]) == 5 and set(held["foldThresholds"]) <= set(suite.GRID)
        assert set(held["gain"]) == {"trafilatura", "readability", suite.WITHOUT_RULE}


def test_folds_are_by_page_id_and_the_threshold_is_chosen_without_the_fold(data_dir, monkeypatch):
    ids = [f"page-{i}" for i in range(500)]
    folds = [suite.fold_of(i, 5) for i in ids]
    assert folds == [suite.fold_of(i, 5) for i in ids] and set(folds) == set(range(5))
    assert min(folds.count(k) for k in range(5)) > 60  # about a fifth each
    # a page whose texts differ by threshold: the held-out text of each page comes from the other folds' choice
    corpus = suite.load("dragnet", data_dir, limit=10)
    reader = suite.scored(corpus, suite.READER, [p.truth for p in corpus.pages], labels=["readability"] * 10)
    texts = {n: [p.truth if n == 25 else "" for p in corpus.pages] for n in suite.GRID}
    monkeypatch.setattr(suite, "short_article_texts", lambda corpus, run: texts)
    result = suite.CorpusResult(corpus, {suite.READER: reader}, {})
    held, chosen, without = suite.held_out([result], 5, 50, 1)
    assert chosen == [25] * 5 and held["dragnet"].scores["BoW"][0] == pytest.approx(1.0)
    assert without["dragnet"].scores["BoW"][0] == pytest.approx(0.0)  # threshold 0: the rule never applies


def test_offset_and_limit_take_a_slice_by_id(data_dir):
    first = suite.load("dragnet", data_dir, limit=4)
    later = suite.load("dragnet", data_dir, limit=2, offset=2)
    assert [p.id for p in later.pages] == [p.id for p in first.pages][2:4]
    with pytest.raises(suite.SuiteError, match="no scrapinghub pages to score"):
        suite.load("scrapinghub", data_dir, offset=1000)


def test_missing_data_is_one_line_and_exit_2(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.reader_suite", "--corpus", "dragnet"],
        capture_output=True, text=True, cwd=REPO, timeout=120,
        env={**os.environ, "SERPFUSE_DATA": str(tmp_path)},
    )  # fmt: skip
    assert proc.returncode == 2
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("reader_suite: error: ") and "ground-truth.jsonl is missing" in line
    bad = subprocess.run(
        [sys.executable, "-m", "benchmarks.reader_suite", "--limit", "0"],
        capture_output=True, text=True, cwd=REPO, timeout=120,
    )  # fmt: skip
    assert bad.returncode == 2 and "--limit must be at least 1" in bad.stderr


def test_the_pooled_gain_is_zero_against_itself_and_positive_against_nothing(data_dir):
    corpus = suite.load("dragnet", data_dir, limit=6)
    truth = suite.scored(corpus, suite.READER, [p.truth for p in corpus.pages])
    nothing = suite.scored(corpus, "nothing", [""] * 6)
    same = suite.CorpusResult(corpus, {suite.READER: truth, "copy": truth}, {})
    tie = suite.pooled_gain([same], {"dragnet": truth}, 100, 1)
    assert tie.delta == tie.low == tie.high == 0.0 and tie.wins == 0
    against = suite.CorpusResult(corpus, {suite.READER: truth, "nothing": nothing}, {})
    gain = suite.pooled_gain([against], {"dragnet": truth}, 100, 1)
    assert gain.delta == pytest.approx(1.0) and gain.low > 0.9 and gain.wins == 2  # both metrics
