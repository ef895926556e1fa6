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
    against_nothing, against_itself = result.gains["nothing"], result.gains["also-reader"]
    assert result.runs["nothing"].f1 == 0.0
    assert against_nothing.low > 0 and against_nothing.wins == 8 and against_nothing.losses == 0
    assert against_itself.delta == against_itself.low == against_itself.high == 0.0
    assert result.bow_checked == 3 * 8


def test_scrapinghub_is_scored_by_its_own_evaluate_py(data_dir):
    corpus = suite.load("scrapinghub", data_dir, limit=4)
    evaluate = suite._import(data_dir / suite.SHINGLE_DIR / "evaluate.py", "evaluate_test")
    truths = [p.truth for p in corpus.pages]
    per_page = [corpus.score_page(t, t) for t in truths]
    assert corpus.pooled(per_page)[0] == pytest.approx(1.0)
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
        assert f"| {corpus} (" in table
    # 2 BoW corpora x 3 pages x 4 texts (three extractors and the choice between two of them)
    assert "BoW scorer checked against bow_f1.py on 24 page scores: identical." in table
    results = json.loads(saved.read_text())
    assert [r["corpus"] for r in results] == list(suite.CORPORA)
    for r in results:
        assert set(r["extractors"]) == {"serpfuse", "trafilatura", "readability", "reader-or-readability"}
        assert set(r["readerGain"]) == {"trafilatura", "readability", "reader-or-readability"}
        assert r["extractors"]["serpfuse"]["speedVsReader"] == 1.0


def test_the_choice_takes_readabilitys_tighter_cut_of_the_same_article_only():
    article = "Tide tables give the times of high and low water at a port for every day of the year. "
    furniture = "Subscribe to our newsletter. Related stories. Share this page. "
    reader = furniture + article * 3 + furniture
    assert suite.readability_when_inside(reader, article * 3) == article * 3  # the same article, cut tighter
    assert suite.readability_when_inside(reader, "an unrelated text about mountains") == reader
    assert suite.readability_when_inside(reader, article[:40]) == reader  # readability lost most of it
    assert suite.readability_when_inside(reader, "") == reader


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
