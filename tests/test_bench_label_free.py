"""The label-free robustness checks: injected rows counted without judgments, on either crw56 half.

The overlap measures run on small inputs; the benches run in process on a few queries of the recording and are
checked against the pipeline's own output for the same altered recording.
"""

from __future__ import annotations

import pytest

from benchmarks import crw56, label_free, robustness
from conftest import need
from serpfuse.bench.modes import quiet
from serpfuse.config import RankingConfig
from serpfuse.sources.replay import load_recording
from test_bench_crw56 import _json, bench_runner

PLAIN = RankingConfig(strategy="rrf")


def _rows(*names: str) -> list[frozenset[str]]:
    return [frozenset({n}) for n in names]


@pytest.fixture(scope="module")
def corpus(data_dir):
    need(data_dir / crw56.RECORDING)
    return crw56.load_crw56(data_dir)


# --- overlap -------------------------------------------------------------------------------------------------


def test_rank_biased_overlap_is_one_for_the_same_list_and_zero_for_disjoint_ones():
    a = _rows("a", "b", "c")
    assert label_free.rank_biased_overlap(a, a) == pytest.approx(1.0)
    assert label_free.rank_biased_overlap(a, _rows("x", "y", "z")) == 0.0
    assert label_free.rank_biased_overlap([], []) == 1.0
    assert label_free.rank_biased_overlap(a, []) == 0.0


def test_rank_biased_overlap_weighs_the_top_more():
    a = _rows("a", "b", "c", "d")
    swapped_top = label_free.rank_biased_overlap(a, _rows("b", "a", "c", "d"))
    swapped_bottom = label_free.rank_biased_overlap(a, _rows("a", "b", "d", "c"))
    assert 0 < swapped_top < swapped_bottom < 1


def test_a_row_is_the_same_when_any_of_its_urls_is():
    reference = [frozenset({"a", "a2"}), frozenset({"b"})]
    assert label_free.kept_share(reference, [frozenset({"a2"}), frozenset({"c"})]) == 0.5
    assert label_free.kept_share([], reference) is None


def test_tally_counts_injected_rows_by_rank():
    tally = label_free.Tally()
    shown = _rows("a", "x", "b", "c", "d", "y", "e")
    tally.add(7, _rows("a", "b", "c", "d", "e"), shown, {"x", "y", "z"}, 3)
    tally.add(9, _rows("a"), _rows("a"), {"z"}, 1)
    s = tally.summary()
    assert (s["queries"], s["injected"], s["top8"], s["top5"], s["queriesTop5"]) == (2, 4, 2, 1, 1)
    assert s["reached"] == [{"qid": 7, "ranks": [2, 6]}]
    assert s["kept@8"] == pytest.approx(1.0) and s["rbo"] < 1.0


# --- the benches on the recording ----------------------------------------------------------------------------


def _reached(corpus, altered, qid: int, injected: set[str]) -> list[int]:
    """The ranks at which the pipeline itself shows an injected row for ``qid`` on ``altered``."""
    query = next(q for q in corpus.queries if q.qid == qid)
    shown = crw56.PipelineRunner(corpus, recording=altered)(query, PLAIN)
    return [i for i, row in enumerate(shown[:8], start=1) if label_free.keys_of(row) & injected]


def test_generic_rows_on_the_test_half_are_counted_where_the_pipeline_shows_them(data_dir, corpus):
    """Plain RRF on three test queries: every injected row the bench says reached the top 8 is one the pipeline
    shows there, and the counts are the judged bench's own plans."""
    qids = (9, 37, 43)
    out = label_free.run_generic(data_dir, "bing", "test", [("rrf", PLAIN)], "rrf", quiet, qids)
    payload = out.to_json()
    assert payload["halves"] == ["test"] and payload["labelFree"]
    recording = load_recording(corpus.recording)
    queries = [q for q in corpus.split("test") if q.qid in qids]
    reached_any = 0
    for name, whole, nth in robustness.GENERIC_VARIANTS:
        altered, plans = robustness.generic_recording(recording, queries, "bing", whole, nth)
        summary = payload["variants"][name]["rrf"]["test"]
        assert summary["queries"] == len(plans) and summary["injected"] == sum(len(p.rows) for p in plans)
        for plan in plans:
            ranks = _reached(corpus, altered, plan.qid, {crw56.dedup_key(r.url) for r in plan.rows})
            listed = next((r["ranks"] for r in summary["reached"] if r["qid"] == plan.qid), [])
            assert listed == ranks
            reached_any += bool(ranks)
        assert summary["top8"] == sum(len(r["ranks"]) for r in summary["reached"])
        assert summary["top5"] == sum(1 for r in summary["reached"] for k in r["ranks"] if k <= 5)
    assert reached_any  # plain RRF lets some generic rows in: the count is not vacuous


def test_misspelled_on_both_halves_counts_the_echo_rows(data_dir):
    qids = (0, 1, 4, 5)
    out = label_free.run_misspelled(data_dir, "all", [("rrf", PLAIN)], "rrf", quiet, qids)
    payload = out.to_json()
    assert payload["queries"] == {"dev": [0, 4], "test": [1, 5]}
    for half in ("dev", "test"):
        s = payload["rankers"]["rrf"][half]
        assert s["queries"] == 2 and s["injected"] >= 2  # one or two echo rows per query
        assert 0.0 <= s["kept@8"] <= 1.0 and 0.0 <= s["rbo"] <= 1.0
    assert "| **rrf** | test |" in out.markdown()


def test_garbage_on_the_test_half_splits_shared_and_alone(data_dir, corpus):
    qids = (1, 3, 5, 7, 9)
    out = label_free.run_garbage(data_dir, "bing", "test", [("rrf", PLAIN)], "rrf", quiet, qids)
    payload = out.to_json()
    recording = load_recording(corpus.recording)
    _, shared = robustness.removed_recording(
        recording, [q for q in corpus.split("test") if q.qid in qids], "bing"
    )
    where = payload["queries"]["test"]
    assert set(where["shared"]) == shared & set(qids) and not set(where["shared"]) & set(where["alone"])
    assert set(where["shared"]) | set(where["alone"]) <= set(qids)
    for group in ("shared", "alone"):
        assert payload["rankers"][group]["rrf"]["test"]["queries"] == len(where[group])


def test_cli_label_free_split(data_dir):
    need(data_dir / crw56.RECORDING)
    cli = bench_runner()
    out = _json(
        cli("--data", str(data_dir), "--misspelled", "--split", "test", "--strategy", "rrf", "--json")
    )
    assert out["labelFree"] and out["halves"] == ["test"]
    assert all(qid % 2 == 1 for qid in out["queries"]["test"])
