"""Our metrics against NIST trec_eval's own expected outputs (../shared/data/trec_eval, see its SOURCE.txt).

trec_eval prints 4 decimals, so every value must agree within 1e-4 (plus rounding half a unit).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import need
from serpfuse.bench import metrics as m
from serpfuse.bench import trec

TOLERANCE = 0.5e-4 + 1e-9  # half of trec_eval's last printed digit

# The measures we implement, as trec_eval names them; cut-off variants are taken from the expected file.
EXACT = ("map", "recip_rank", "ndcg", "num_ret", "num_rel", "num_rel_ret")
PREFIXES = ("P_", "recall_", "ndcg_cut_", "map_cut_", "success_")


def _expected(path: Path) -> dict[str, dict[str, float]]:
    """measure -> qid ('all' included) -> value, from trec_eval -q output."""
    table: dict[str, dict[str, float]] = {}
    for line in path.read_text().splitlines():
        name, qid, value = line.split()
        if name in EXACT or any(re.fullmatch(re.escape(p) + r"\d+", name) for p in PREFIXES):
            table.setdefault(name, {})[qid] = float(value)
    return table


@pytest.fixture(scope="module")
def trec_dir(data_dir: Path) -> Path:
    return need(data_dir / "trec_eval")


def _compare(expected: dict[str, dict[str, float]], got: dict[str, dict[str, float]]) -> list[str]:
    wrong = []
    for name, by_qid in expected.items():
        for qid, value in by_qid.items():
            ours = got[qid][name]
            if abs(ours - value) > TOLERANCE:
                wrong.append(f"{name} {qid}: trec_eval {value:.4f}, ours {ours:.6f}")
    return wrong


@pytest.mark.parametrize(
    ("expected_file", "qrels_file", "run_file", "level", "complete"),
    [
        ("out.test.aq", "qrels.test", "results.test", 1, False),
        # -c over a truncated run: query 302 is judged but absent, so it scores 0 and still counts
        ("out.test.aqc", "qrels.test", "results.trunc", 1, True),
        # graded qrels with -l2: binary measures need grade >= 2, nDCG uses the grades as gains
        ("out.test.aql", "qrels.rel_level", "results.test", 2, False),
    ],
)
def test_measures_equal_trec_eval(trec_dir, expected_file, qrels_file, run_file, level, complete):
    expected = _expected(need(trec_dir / expected_file))
    for required in ("map", "P_10", "recip_rank", "ndcg_cut_10"):
        assert required in expected, f"{expected_file} lacks {required}"
    ranked = trec.ranked_lists(trec.read_run(trec_dir / run_file))
    qrels = trec.read_qrels(trec_dir / qrels_file)
    got = trec.evaluate(ranked, qrels, sorted(expected), level=level, complete=complete)
    assert _compare(expected, got) == []
    assert len(expected["map"]) == 4  # three queries and "all": nothing silently skipped


def test_summary_file_agrees(trec_dir):
    """out.test (no -q) holds only the averages; check the headline ones there too."""
    expected = {name: by_qid["all"] for name, by_qid in _expected(need(trec_dir / "out.test")).items()}
    ranked = trec.ranked_lists(trec.read_run(trec_dir / "results.test"))
    got = trec.evaluate(ranked, trec.read_qrels(trec_dir / "qrels.test"), sorted(expected))["all"]
    assert expected["map"] == pytest.approx(0.1785, abs=1e-9)
    for name, value in expected.items():
        assert abs(got[name] - value) <= TOLERANCE, name


def test_order_comes_from_scores_not_file_order(trec_dir):
    """results.test's lines are shuffled (SOURCE.txt calls it a scrambled rank column; in this copy the rank
    column agrees with the scores and only the line order is shuffled): reading lines in file order is wrong."""
    path = need(trec_dir / "results.test")
    file_order: dict[str, list[str]] = {}
    for line in path.read_text().splitlines():
        qid, _, docid, *_ = line.split()
        file_order.setdefault(qid, []).append(docid)
    by_score = trec.ranked_lists(trec.read_run(path))
    assert all(file_order[qid] != by_score[qid] for qid in file_order)
    assert sorted(file_order["301"]) == sorted(by_score["301"])


def test_extra_fields_after_the_tag_are_ignored(tmp_path):
    run = tmp_path / "r.txt"
    run.write_text("1 Q0 d1 1 2.5 tag trailing words\n1 Q0 d2 2 3.5 tag\n1 Q0 d1 3 1.0 tag\n")
    assert trec.read_run(run) == {"1": {"d1": 2.5, "d2": 3.5}}  # repeated docid keeps its best score
    bad = tmp_path / "bad.txt"
    bad.write_text("1 Q0 d1 1\n")
    with pytest.raises(trec.TrecFormatError, match="bad.txt:1"):
        trec.read_run(bad)


def test_run_and_qrels_round_trip(tmp_path):
    ranked = {"10": [("b", 2.0), ("a", 1.0)], "2": [("c", 0.5)]}
    trec.write_run(tmp_path / "run", ranked, "mine")
    assert (tmp_path / "run").read_text().splitlines()[0] == "2 Q0 c 1 0.5 mine"  # numeric qid order
    assert trec.ranked_lists(trec.read_run(tmp_path / "run")) == {"10": ["b", "a"], "2": ["c"]}
    qrels = {"1": {"a": 2, "b": 0}}
    trec.write_qrels(tmp_path / "qrels", qrels)
    assert trec.read_qrels(tmp_path / "qrels") == qrels


def test_ties_break_by_docid_descending():
    assert m.order_by_score([("a", 1.0), ("c", 1.0), ("b", 2.0), ("d", 0.5)]) == ["b", "c", "a", "d"]


def test_no_relevant_document_scores_zero_like_trec_eval():
    qrels = {"x": 0, "y": 0}
    assert m.average_precision(["x", "y"], qrels) == 0.0
    assert m.ndcg_at(["x"], qrels, 10) == 0.0
    assert m.reciprocal_rank(["x"], qrels) == 0.0
    assert m.recall_at(["x"], qrels, 5) == 0.0


def test_unknown_measure_is_refused():
    with pytest.raises(ValueError, match="unknown measure"):
        trec.measure("bpref", ["a"], {"a": 1})
