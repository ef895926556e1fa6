"""MQ2008-agg: the loader, the classic and metasearch protocols, and the published reference numbers."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from benchmarks import mq2008 as m
from conftest import need
from serpfuse.config import RankingConfig, RRFConfig

LINE = (
    "2 qid:10002 1:3 2:NULL 3:1 4:NULL 5:NULL 6:NULL 7:NULL 8:NULL 9:NULL 10:NULL 11:NULL 12:NULL 13:NULL 14:NULL "
    "15:NULL 16:NULL 17:NULL 18:NULL 19:NULL 20:NULL 21:NULL 22:NULL 23:NULL 24:NULL 25:7 "
    "#docid = GX008-86-4444840 inc = 1 prob = 0.086622"
)
S7 = (2, 7, 9, 12, 16, 21, 25)


def _line(grade: int, qid: str, docid: str, positions: dict[int, int]) -> str:
    features = " ".join(f"{r}:{positions.get(r, 'NULL')}" for r in m.RANKERS)
    return f"{grade} qid:{qid} {features} #docid = {docid} inc = 1 prob = 0.5\n"


@pytest.fixture
def tiny(tmp_path: Path) -> m.Corpus:
    """Two queries in S1 (one with no relevant document), one in each other subset."""
    lines = {
        "S1": [
            _line(2, "1", "dA", {1: 5, 2: 1}),
            _line(0, "1", "dB", {1: 2, 2: 9}),
            _line(1, "1", "dC", {1: 40}),
            _line(0, "1", "dD", {}),
            _line(0, "2", "dE", {1: 1}),
        ],
    }
    for i, subset in enumerate(m.SUBSETS[1:], start=3):
        lines[subset] = [_line(1, str(i), f"d{i}", {1: 1})]
    for subset, rows in lines.items():
        (tmp_path / f"{subset}.txt").write_text("".join(rows))
    return m.load_mq2008(tmp_path)


# --- unit behaviour (no recorded data needed) -------------------------------------------------------------


def test_parse_line() -> None:
    qid, docid, grade, positions = m.parse_line(LINE)
    assert (qid, docid, grade) == ("10002", "GX008-86-4444840", 2)
    assert positions == {1: 3, 3: 1, 25: 7}


def test_parse_line_rejects_garbage() -> None:
    with pytest.raises(ValueError):
        m.parse_line("qid:1 1:2 #no grade")


def test_loader_reports_the_bad_line(tmp_path: Path) -> None:
    for subset in m.SUBSETS:
        (tmp_path / f"{subset}.txt").write_text(LINE + "\n")
    (tmp_path / "S3.txt").write_text(LINE + "\nnot a line\n")
    with pytest.raises(m.MQ2008FormatError, match=r"S3.txt:2"):
        m.load_mq2008(tmp_path)


def test_loader_refuses_a_repeated_document(tmp_path: Path) -> None:
    for subset in m.SUBSETS:
        (tmp_path / f"{subset}.txt").write_text(LINE + "\n")
    (tmp_path / "S2.txt").write_text(LINE + "\n" + LINE + "\n")
    with pytest.raises(m.MQ2008FormatError, match="repeated"):
        m.load_mq2008(tmp_path)


def test_query_data_and_rankings(tiny: m.Corpus) -> None:
    q = tiny["S1"]["1"]
    assert q.subset == "S1" and q.has_relevant
    assert q.grades == {"dA": 2, "dB": 0, "dC": 1, "dD": 0}
    assert q.ranking(1) == ["dB", "dA", "dC"]  # by original position; NULL documents absent
    assert q.ranking(2) == ["dA", "dB"]
    assert q.ranking(3) == []
    assert not tiny["S1"]["2"].has_relevant


def test_shown_lists_cut_to_depth_and_drop_silent_engines(tiny: m.Corpus) -> None:
    q = tiny["S1"]["1"]
    assert m.shown_lists(q, (1, 2, 3), 2) == {"r1": ["dB", "dA"], "r2": ["dA", "dB"]}


def test_metasearch_scores_only_queries_with_a_relevant_document(tiny: m.Corpus) -> None:
    queries = m.queries_of(tiny)
    scores = m.metasearch(queries, m.single_fuser(1), depth=20)
    assert set(scores.ndcg) == {"1", "3", "4", "5", "6"}
    # r1 shows dB (0), dA (2), dC (1): DCG = 3/log2(3) + 1/2; ideal = 3 + 1/log2(3).
    ideal = 3 + 1 / 1.5849625007211562
    assert scores.ndcg["1"] == pytest.approx((3 / 1.5849625007211562 + 0.5) / ideal)
    assert scores.precision["1"] == pytest.approx(2 / 8)
    assert scores.rr["1"] == pytest.approx(0.5)
    # The ideal counts every judged document, not only those an engine showed: at depth 1 r1 shows dB alone.
    assert m.metasearch(queries, m.single_fuser(2), depth=1).ndcg["1"] == pytest.approx(3 / ideal)


def test_classic_counts_every_query_and_orders_like_trec_eval(tiny: m.Corpus) -> None:
    queries = m.queries_of(tiny)
    scores = m.classic(queries, m.classic_single(1))
    assert set(scores.ap) == set(queries)
    assert scores.ap["2"] == 0.0  # no relevant document: AP 0, still in the mean
    # r1: dB(0) at 2, dA(2) at 5, dC(1) at 40 -> ranked dB, dA, dC: AP = (1/2 + 2/3) / 2.
    assert scores.ap["1"] == pytest.approx((1 / 2 + 2 / 3) / 2)
    # Equal scores go by docid descending, as trec_eval orders a run.
    tied = m.classic(queries, lambda q: [(d, 1.0) for d in q.grades])
    assert tied.ap["1"] == pytest.approx((1 / 2 + 2 / 4) / 2)  # dD, dC(1), dB, dA(2)
    # Classic RRF votes with the original positions, gaps included.
    run = dict(m.classic_rrf((1, 2))(queries["1"]))
    assert run == pytest.approx({"dA": 1 / 65 + 1 / 61, "dB": 1 / 62 + 1 / 69, "dC": 1 / 100})


def test_folds_follow_the_letor_rotation() -> None:
    assert [(f.train, f.vali, f.test) for f in m.FOLDS] == [
        (("S1", "S2", "S3"), "S4", "S5"),
        (("S2", "S3", "S4"), "S5", "S1"),
        (("S3", "S4", "S5"), "S1", "S2"),
        (("S4", "S5", "S1"), "S2", "S3"),
        (("S5", "S1", "S2"), "S3", "S4"),
    ]


def test_five_fold_tests_on_a_partition(tiny: m.Corpus) -> None:
    seen: list[tuple[set[str], set[str], set[str]]] = []

    def choose(train: dict, vali: dict) -> int:
        return len(train)

    def evaluate(params: int, test: dict) -> dict[str, float]:
        return {qid: float(params) for qid in test}

    def spy(train: dict, vali: dict) -> int:
        seen.append(({q.subset for q in train.values()}, {q.subset for q in vali.values()}, set()))
        return choose(train, vali)

    outcome = m.five_fold(tiny, spy, evaluate)
    assert set(outcome.test_scores) == set(m.queries_of(tiny))  # every query tested exactly once
    assert all(not (train & vali) for train, vali, _ in seen)
    assert outcome.chosen["Fold1"] == 4  # S1 (2 queries) + S2 + S3
    assert outcome.mean_of_folds == pytest.approx(sum(outcome.per_fold.values()) / 5)


def test_aligned_pairs_common_queries() -> None:
    assert m.aligned({"a": 1.0, "b": 2.0}, {"b": 3.0, "c": 4.0}) == ([2.0], [3.0])
    with pytest.raises(ValueError):
        m.aligned({"a": 1.0}, {"b": 1.0})


# --- the reference numbers (recorded data) ----------------------------------------------------------------


@pytest.fixture(scope="module")
def corpus(data_dir: Path) -> m.Corpus:
    root = data_dir / "mq2008-agg"
    for subset in m.SUBSETS:
        need(root / f"{subset}.txt")
    return m.load_mq2008(root)


@pytest.fixture(scope="module")
def queries(corpus: m.Corpus) -> dict[str, m.QueryData]:
    return m.queries_of(corpus)


def test_corpus_shape(corpus: m.Corpus, queries: dict[str, m.QueryData]) -> None:
    assert {s: len(qs) for s, qs in corpus.items()} == {"S1": 157, "S2": 157, "S3": 157, "S4": 157, "S5": 156}
    assert len(queries) == 784
    assert sum(q.has_relevant for q in queries.values()) == 564
    grades = Counter(g for q in queries.values() for g in q.grades.values())
    assert grades == {0: 12279, 1: 2001, 2: 931}


def test_classic_rrf_and_best_single_reproduce_the_reference(queries: dict[str, m.QueryData]) -> None:
    rrf = m.classic(queries, m.classic_rrf())
    assert (round(rrf.map, 4), round(rrf.p_10, 4)) == (0.4772, 0.2450)
    best = max(m.RANKERS, key=lambda r: m.classic(queries, m.classic_single(r)).map)
    assert best == 9
    assert round(m.classic(queries, m.classic_single(9)).map, 4) == 0.4433


@pytest.mark.parametrize(
    ("rankers", "depth", "best", "expected"),
    [(m.RANKERS, 20, 9, 0.6446), (tuple(range(1, 6)), 10, 3, 0.4675), (S7, 20, 9, 0.6446)],
)
def test_metasearch_best_single(queries, rankers, depth, best, expected) -> None:
    ranker, scores = m.best_single(queries, rankers, depth)
    assert (ranker, round(scores.mean_ndcg, 4)) == (best, expected)


# RRF through the project's ranker: the rrf ranker's interleave tie-break and region policy are web-search rules; the
# reference breaks ties by docid, which is the ranker's order without them.
PLAIN_RRF = RankingConfig(rrf=RRFConfig(interleave=False, region_policy=False, weights={}))


@pytest.mark.parametrize(
    ("rankers", "depth", "expected"),
    [(m.RANKERS, 20, 0.6828), (tuple(range(1, 6)), 10, 0.5491), (S7, 20, 0.6160)],
)
def test_metasearch_rrf_reproduces_the_reference(queries, rankers, depth, expected) -> None:
    scores = m.metasearch(queries, m.strategy_fuser("rrf", PLAIN_RRF), rankers, depth)
    assert round(scores.mean_ndcg, 4) == expected


def _own_length(normalise: bool, hits_power: int):
    """The convention that reproduces the published figures: an engine's list of n rows gives n - rank + 1 points (Borda), or
    (n - rank + 1) / n times the number of lists holding the row (CombMNZ); ties by docid ascending."""

    def fuser(lists: m.Lists) -> list[str]:
        scores: dict[str, float] = {}
        hits: Counter[str] = Counter()
        for docs in lists.values():
            n = len(docs)
            for rank, docid in enumerate(docs, start=1):
                scores[docid] = scores.get(docid, 0.0) + (n - rank + 1) / (n if normalise else 1)
                hits[docid] += 1
        final = {d: s * hits[d] ** hits_power for d, s in scores.items()}
        return sorted(final, key=lambda d: (-final[d], d))

    return fuser


@pytest.mark.parametrize(
    ("method", "rankers", "depth", "expected"),
    [("borda", m.RANKERS, 20, 0.6871), ("borda", S7, 20, 0.6416), ("combmnz", m.RANKERS, 20, 0.6848)],
)
def test_the_reference_borda_and_combmnz_convention(queries, method, rankers, depth, expected) -> None:
    fuser = _own_length(normalise=False, hits_power=0) if method == "borda" else _own_length(True, 1)
    assert round(m.metasearch(queries, fuser, rankers, depth).mean_ndcg, 4) == expected


@pytest.mark.parametrize(
    ("strategy", "rankers", "depth", "expected"),
    [("borda", m.RANKERS, 20, 0.6871), ("borda", S7, 20, 0.6416), ("combmnz", m.RANKERS, 20, 0.6847)],
)
def test_metasearch_borda_and_combmnz_reproduce_the_reference(
    queries, strategy, rankers, depth, expected
) -> None:
    scores = m.metasearch(queries, m.strategy_fuser(strategy), rankers, depth)
    assert round(scores.mean_ndcg, 3) == round(expected, 3)
