"""The crw56 protocol: the baseline numbers issue 4 states, the dev/test split, judging by dedup key."""

from __future__ import annotations

import pytest

from conftest import need
from serpfuse.bench import crw56
from serpfuse.bench.report import QueryScore, aggregate, paired_values
from serpfuse.config import RankingConfig


@pytest.fixture(scope="module")
def corpus(data_dir):
    need(data_dir / crw56.RECORDING)
    need(data_dir / crw56.QRELS_DEV)
    return crw56.load_crw56(data_dir)


@pytest.fixture(scope="module")
def baseline(corpus):
    return crw56.run(corpus, None, split="dev", per_engine=False)


def test_corpus_shape(corpus):
    assert len(corpus.queries) == 56
    dev = corpus.split("dev")
    assert [q.qid for q in dev] == list(range(0, 56, 2))
    assert all(q.judged for q in dev)
    assert all(q.judged is None for q in corpus.split("test"))
    assert sum(q.has_relevant for q in dev) == 14  # "half the queries have no relevant row"
    with pytest.raises(ValueError):
        corpus.split("train")


def test_baseline_reproduces_issue_4(baseline):
    """SearXNG's own order on the dev queries: nDCG@8 0.8926 (gain 2^rel-1), Irrelevant@5 73."""
    assert baseline.summary["nDCG@8"] == pytest.approx(0.8926, abs=5e-5)
    assert baseline.summary["nDCG@8:n"] == 14
    assert baseline.summary["Irrelevant@5"] == 73
    # pooled judging covered every row: no unjudged row, so both Irrelevant@5 variants agree
    assert baseline.summary["IrrelevantJudged@5"] == 73
    assert baseline.summary["kept@8"] == 1.0
    assert baseline.notes == []


def test_linear_gain_would_not_reproduce_the_issue(corpus, baseline):
    """Pins the gain: the stated 0.8926 is the exponential gain; trec_eval's linear gain gives 0.9145."""
    from serpfuse.bench import metrics as m

    by_qid = {str(q.qid): q for q in corpus.split("dev")}
    linear = [
        m.ndcg_at([r.docid for r in s.shown], by_qid[s.qid].judged, 8)
        for s in baseline.per_query
        if "nDCG@8" in s.values
    ]
    assert sum(linear) / len(linear) == pytest.approx(0.9145, abs=5e-5)


def test_seed_001_figures_on_all_queries(corpus):
    """Seed 001's test scorer on the same fixture: baseline CleanRel@5 0.471 over all 56 queries."""
    report = crw56.run(corpus, None, split="all", per_engine=False)
    assert report.summary["CleanRel@5"] == pytest.approx(0.471, abs=5e-4)
    assert (
        45 <= report.summary["Junk@5"] <= 60
    )  # seed 001 counted 54 with its own junk rules; ours are the project's


def test_test_split_has_only_unjudged_metrics(corpus):
    report = crw56.run(corpus, None, split="test", per_engine=False)
    assert "nDCG@8" not in report.summary
    assert "Irrelevant@5" not in report.summary
    assert report.summary["queries"] == 28
    assert 0 <= report.summary["CleanRel@5"] <= 1


def test_unjudged_rows_count_as_irrelevant_only_when_asked(corpus):
    query = corpus.split("dev")[1]
    unseen = crw56.Shown("https://nowhere.example/x", ("https://nowhere.example/x",), "t", "s", ("bing",))
    base = crw56.judge(query, crw56.baseline_order(query), None)
    rows = crw56.judge(query, [unseen], None)
    assert rows[0].grade is None
    assert crw56.score_query(query, rows, base)["Irrelevant@5"] == 1
    assert crw56.score_query(query, rows, base, unjudged_irrelevant=False)["Irrelevant@5"] == 0


def test_judging_matches_by_dedup_key(corpus):
    """A row shown as http:// without www still finds the judgment recorded for https://www."""
    query = corpus.queries[0]
    judged_url = next(r.url for r in query.rows if "www." in r.url and r.url.startswith("https://"))
    variant = judged_url.replace("https://www.", "http://", 1)
    shown = crw56.Shown(variant, (variant,), "", "", ("google",))
    (row,) = crw56.judge(query, [shown], None)
    assert row.grade is not None


def test_kept_share_counts_only_baseline_relevant_rows(corpus):
    query = next(q for q in corpus.split("dev") if q.has_relevant)
    base_shown = crw56.baseline_order(query)
    base = crw56.judge(query, base_shown, None)
    relevant = [r for r in base if (r.grade or 0) >= 1]
    dropped_one = crw56.judge(query, [s for s in base_shown if s.url != relevant[0].url], None)
    values = crw56.score_query(query, dropped_one, base)
    assert (values["kept"], values["keptOf"]) == (len(relevant) - 1, len(relevant))


def test_pipeline_run_scores_every_dev_query(corpus):
    report = crw56.run(corpus, RankingConfig(strategy="searxng"), split="dev", per_engine=True)
    assert report.summary["queries"] == 28
    assert 0 < report.summary["nDCG@8"] <= 1
    assert 0 <= report.summary["kept@8"] <= 1
    assert report.fingerprint == RankingConfig(strategy="searxng").fingerprint()
    assert set(report.per_engine) == {"bing", "duckduckgo", "google"}
    assert set(report.by_group) == {"category"}  # every query is ASCII: no per-script table
    assert report.worst and all(len(q.shown) <= 8 for q in report.per_query)


def test_paired_values_align_by_qid():
    a = [QueryScore("1", "x", {"m": 0.5}), QueryScore("2", "y", {"m": 1.0}), QueryScore("3", "z", {})]
    b = [QueryScore("2", "y", {"m": 0.0}), QueryScore("1", "x", {"m": 1.0}), QueryScore("3", "z", {"m": 1.0})]
    assert paired_values(a, b, "m") == (["1", "2"], [0.5, 1.0], [1.0, 0.0])
    assert aggregate(a, crw56.METRICS)["queries"] == 3
