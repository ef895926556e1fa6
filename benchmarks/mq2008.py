"""MQ2008-agg (LETOR 4.0 rank aggregation): the loader and its two evaluation protocols.

The corpus: 784 TREC 2008 Million Query queries, 15,211 judged GOV2 documents (grades 0/1/2, about 19 per query)
and, for each document, its position in each of 25 input rankings (NULL when that ranker did not retrieve it).
The positions are those of the rankers' full lists, so they have gaps: only the judged documents are present.

Two protocols, each reproducing the published reference numbers (see bench-notes/mq2008-fusion.md):

``classic`` (full depth, trec_eval's convention, every one of the 784 queries): each ranker's list holds every
document it retrieved, ordered by position; RRF votes ``1 / (k + position)`` with the *original* position; the
fused run is ordered like trec_eval orders a run (score descending, docid descending); a document is relevant at
grade >= 1; a query without a relevant document scores AP 0 and still counts in the mean. That gives RRF k=60
MAP 0.4772 and P@10 0.2450, and the best single ranker (9) MAP 0.4433.

``metasearch`` (each ranker is an engine showing only its top ``depth`` rows): an engine's list is its first
``depth`` judged documents by position, shown at ranks 1..n (n <= depth; the gaps are invisible to the fuser,
as a search engine's rank is); the fused list is cut to 8 and scored with nDCG@8 (gain 2^rel - 1, log2
discount, the ideal built from *all* judged documents of the query, not only those some engine showed), P@8 and
MRR@8, over the 564 queries with a relevant document. Reproduced: all 25 rankers at depth 20, best single (9)
0.6446, RRF 0.6828, CombMNZ 0.6847, Borda 0.6871; rankers 1-5 at depth 10, best single (3) 0.4675, RRF 0.5491.

Anything learned is chosen by the standard LETOR 5-fold rotation (``FOLDS``): train on three subsets, select on
the fourth, report on the fifth; the test queries of the five folds partition the corpus.

Every protocol function returns per-query scores, so the paired bootstrap (``serpfuse.bench.bootstrap``) can run on them.

Robustness (``REFERENCE_SETUPS``, ``random_setups``, ``gap_summary``): a fusion method is judged on many engine
subsets, each against the best of the fixed baselines chosen per subset in hindsight, so that no single tuned
subset can carry it.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar

from serpfuse.bench import metrics

if TYPE_CHECKING:
    from serpfuse.config import RankingConfig

SUBSETS: tuple[str, ...] = ("S1", "S2", "S3", "S4", "S5")
RANKERS: tuple[int, ...] = tuple(range(1, 26))
CUTOFF = 8  # the metasearch protocol scores the fused top 8, what an agent is shown
RRF_K = 60.0

_LINE = re.compile(r"^(?P<grade>\d+)\s+qid:(?P<qid>\S+)\s+(?P<features>.*?)\s*#\s*docid\s*=\s*(?P<docid>\S+)")


class MQ2008FormatError(ValueError):
    """A line of an MQ2008-agg file that does not parse, with the file and line number."""


@dataclass(frozen=True)
class QueryData:
    """One query: its judgments and, per ranker, where each judged document sat in that ranker's full list."""

    qid: str
    subset: str
    grades: dict[str, int]  # docid -> 0/1/2
    positions: dict[int, dict[str, int]]  # ranker (1..25) -> docid -> 1-based position; absent = NULL

    def ranking(self, ranker: int) -> list[str]:
        """The ranker's list, best first (positions are unique per ranker and query in this corpus)."""
        placed = self.positions.get(ranker, {})
        return sorted(placed, key=lambda docid: (placed[docid], docid))

    @property
    def has_relevant(self) -> bool:
        return any(grade > 0 for grade in self.grades.values())


Corpus = dict[str, dict[str, QueryData]]  # subset -> qid -> query
Queries = Mapping[str, QueryData]
Lists = dict[str, list[str]]  # engine name -> docids best first
Fuser = Callable[[Lists], Sequence[str]]  # the fused order, best first


def parse_line(line: str) -> tuple[str, str, int, dict[int, int]]:
    """(qid, docid, grade, ranker -> position) of one data line; raises ValueError when it is not one."""
    match = _LINE.match(line.strip())
    if not match:
        raise ValueError("not an MQ2008-agg line")
    positions: dict[int, int] = {}
    for feature in match["features"].split():
        index, _, value = feature.partition(":")
        if value != "NULL":
            positions[int(index)] = int(value)
    return match["qid"], match["docid"], int(match["grade"]), positions


def load_subset(path: Path, subset: str) -> dict[str, QueryData]:
    grades: dict[str, dict[str, int]] = {}
    positions: dict[str, dict[int, dict[str, int]]] = {}
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                qid, docid, grade, placed = parse_line(line)
            except ValueError as err:
                raise MQ2008FormatError(f"{path}:{number}: {err}") from err
            if docid in grades.setdefault(qid, {}):
                raise MQ2008FormatError(f"{path}:{number}: document {docid} repeated for query {qid}")
            grades[qid][docid] = grade
            per_ranker = positions.setdefault(qid, {})
            for ranker, position in placed.items():
                per_ranker.setdefault(ranker, {})[docid] = position
    return {qid: QueryData(qid, subset, grades[qid], positions[qid]) for qid in grades}


def load_mq2008(data_dir: Path | str) -> Corpus:
    """Read S1.txt..S5.txt from ``data_dir`` (the MQ2008-agg folder): subset -> qid -> ``QueryData``."""
    root = Path(data_dir)
    return {subset: load_subset(root / f"{subset}.txt", subset) for subset in SUBSETS}


def queries_of(corpus: Corpus, subsets: Iterable[str] = SUBSETS) -> dict[str, QueryData]:
    """The queries of the given subsets, merged (qids are unique across subsets)."""
    return {qid: q for subset in subsets for qid, q in corpus[subset].items()}


def engine_name(ranker: int) -> str:
    return f"r{ranker}"


# --- classic protocol -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClassicScores:
    """Per-query AP and P@10 in trec_eval's convention, over every query."""

    ap: dict[str, float]
    p10: dict[str, float]

    @property
    def map(self) -> float:
        return metrics.mean(self.ap.values())

    @property
    def p_10(self) -> float:
        return metrics.mean(self.p10.values())


Run = Callable[[QueryData], Iterable[tuple[str, float]]]  # one query's run: (docid, score) pairs


def classic_rrf(rankers: Sequence[int] = RANKERS, k: float = RRF_K) -> Run:
    """RRF at full depth with each ranker's original positions (the classic reference run)."""

    def run(q: QueryData) -> list[tuple[str, float]]:
        scores: dict[str, float] = {}
        for ranker in rankers:
            for docid, position in q.positions.get(ranker, {}).items():
                scores[docid] = scores.get(docid, 0.0) + 1.0 / (k + position)
        return list(scores.items())

    return run


def classic_single(ranker: int) -> Run:
    """One ranker's own list as a run (score = minus its position)."""
    return lambda q: [(docid, -float(pos)) for docid, pos in q.positions.get(ranker, {}).items()]


def classic(queries: Queries, run: Run) -> ClassicScores:
    ap: dict[str, float] = {}
    p10: dict[str, float] = {}
    for qid, q in queries.items():
        ranked = metrics.order_by_score(run(q))
        ap[qid] = metrics.average_precision(ranked, q.grades)
        p10[qid] = metrics.precision_at(ranked, q.grades, 10)
    return ClassicScores(ap, p10)


# --- metasearch protocol ----------------------------------------------------------------------------------


def shown_lists(q: QueryData, rankers: Sequence[int], depth: int) -> Lists:
    """What each ranker, as an engine, shows: its first ``depth`` judged documents (engines with none omitted)."""
    lists: Lists = {}
    for ranker in rankers:
        docs = q.ranking(ranker)[:depth]
        if docs:
            lists[engine_name(ranker)] = docs
    return lists


@dataclass(frozen=True)
class MetaScores:
    """Per-query nDCG@8 (gain 2^rel-1), P@8 and MRR@8 of the fused top 8, on the queries with a relevant doc."""

    ndcg: dict[str, float]
    precision: dict[str, float]
    rr: dict[str, float]

    @property
    def mean_ndcg(self) -> float:
        return metrics.mean(self.ndcg.values())

    @property
    def mean_precision(self) -> float:
        return metrics.mean(self.precision.values())

    @property
    def mean_rr(self) -> float:
        return metrics.mean(self.rr.values())

    def summary(self) -> dict[str, float]:
        return {"ndcg@8": self.mean_ndcg, "p@8": self.mean_precision, "mrr@8": self.mean_rr}


def score_ranked(
    ranked: Sequence[str], grades: Mapping[str, int], k: int = CUTOFF
) -> tuple[float, float, float]:
    """(nDCG@k with exponential gain, P@k, MRR@k) of one shown list."""
    return (
        metrics.ndcg_at(ranked, grades, k, gain="exp"),
        metrics.precision_at(ranked, grades, k),
        metrics.reciprocal_rank(ranked, grades, k),
    )


def metasearch(
    queries: Queries, fuser: Fuser, rankers: Sequence[int] = RANKERS, depth: int = 20, k: int = CUTOFF
) -> MetaScores:
    """Fuse what the ``rankers`` show at ``depth`` and score the fused top ``k`` of every query with a relevant doc."""
    ndcg: dict[str, float] = {}
    precision: dict[str, float] = {}
    rr: dict[str, float] = {}
    for qid, q in queries.items():
        if not q.has_relevant:
            continue
        ranked = list(fuser(shown_lists(q, rankers, depth)))[:k]
        ndcg[qid], precision[qid], rr[qid] = score_ranked(ranked, q.grades, k)
    return MetaScores(ndcg, precision, rr)


def single_fuser(ranker: int) -> Fuser:
    """An engine on its own: its shown list, unchanged."""
    name = engine_name(ranker)
    return lambda lists: lists.get(name, [])


def strategy_fuser(strategy: str, config: RankingConfig | None = None) -> Fuser:
    """A serpfuse ranker (by strategy name) as a fuser, through ``serpfuse.ranking.fusion.fuse_lists``."""
    from serpfuse.ranking.fusion import (
        fuse_lists,  # late: the rankers are not needed to load or score the corpus
    )

    return lambda lists: [docid for docid, _ in fuse_lists(lists, strategy, config)]


def best_single(
    queries: Queries, rankers: Sequence[int] = RANKERS, depth: int = 20, k: int = CUTOFF
) -> tuple[int, MetaScores]:
    """The ranker with the highest mean nDCG@k on ``queries`` (ties: the lower ranker number)."""
    best: tuple[int, MetaScores] | None = None
    for ranker in rankers:
        scores = metasearch(queries, single_fuser(ranker), rankers, depth, k)
        if best is None or scores.mean_ndcg > best[1].mean_ndcg:
            best = (ranker, scores)
    if best is None:
        raise ValueError("no rankers given")
    return best


# --- 5-fold protocol --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fold:
    name: str
    train: tuple[str, str, str]
    vali: str
    test: str


# The standard LETOR rotation (SOURCE.txt): Fold1 trains on S1-S3, validates on S4, tests on S5, and so on.
FOLDS: tuple[Fold, ...] = tuple(
    Fold(
        f"Fold{i + 1}",
        (SUBSETS[i % 5], SUBSETS[(i + 1) % 5], SUBSETS[(i + 2) % 5]),
        SUBSETS[(i + 3) % 5],
        SUBSETS[(i + 4) % 5],
    )
    for i in range(5)
)

P = TypeVar("P")


@dataclass
class FoldOutcome(Generic[P]):
    """What each fold chose and the per-query test scores, merged over the five folds (a partition)."""

    chosen: dict[str, P] = field(default_factory=dict)  # fold name -> chosen parameters
    per_fold: dict[str, float] = field(default_factory=dict)  # fold name -> mean test score
    test_scores: dict[str, float] = field(default_factory=dict)  # qid -> test score

    @property
    def mean_of_folds(self) -> float:
        """The LETOR figure: the mean of the five folds' test means."""
        return metrics.mean(self.per_fold.values())


def five_fold(
    corpus: Corpus,
    choose: Callable[[dict[str, QueryData], dict[str, QueryData]], P],
    evaluate: Callable[[P, dict[str, QueryData]], Mapping[str, float]],
    folds: Sequence[Fold] = FOLDS,
) -> FoldOutcome[P]:
    """``choose(train, vali)`` picks parameters; ``evaluate(params, test)`` gives per-query test scores."""
    outcome: FoldOutcome[P] = FoldOutcome()
    for fold in folds:
        params = choose(queries_of(corpus, fold.train), queries_of(corpus, [fold.vali]))
        scores = dict(evaluate(params, queries_of(corpus, [fold.test])))
        outcome.chosen[fold.name] = params
        outcome.per_fold[fold.name] = metrics.mean(scores.values())
        outcome.test_scores.update(scores)
    return outcome


def aligned(a: Mapping[str, float], b: Mapping[str, float]) -> tuple[list[float], list[float]]:
    """Two per-query score maps as paired lists over their common queries (sorted qids), for the bootstrap."""
    common = sorted(set(a) & set(b))
    if not common:
        raise ValueError("no query in common")
    return [a[q] for q in common], [b[q] for q in common]


def relative_gain(ours: float, baseline: float) -> float:
    """(ours - baseline) / baseline; the "+3 %" target is this, on nDCG@8."""
    return (ours - baseline) / baseline if baseline else math.inf


# --- robustness over engine subsets -----------------------------------------------------------------------


@dataclass(frozen=True)
class Setup:
    """One metasearch setup: which rankers act as engines and how many rows each shows."""

    name: str
    rankers: tuple[int, ...]
    depth: int


# The three reference setups: everything, few weak engines at depth 10, one strong engine among noisy ones.
REFERENCE_SETUPS: tuple[Setup, ...] = (
    Setup("all 25", RANKERS, 20),
    Setup("rankers 1-5", (1, 2, 3, 4, 5), 10),
    Setup("one strong", (2, 7, 9, 12, 16, 21, 25), 20),
)


SUBSET_SEED = 7  # the default draw of ``random_setups`` (``python -m benchmarks --random-subsets N``)


def random_setups(
    count: int,
    seed: int = SUBSET_SEED,
    sizes: tuple[int, int] = (3, 10),
    depths: tuple[int, ...] = (10, 20),
) -> list[Setup]:
    """``count`` random ranker subsets (size drawn in ``sizes`` inclusive, then the rankers, then the depth).

    The draw order is part of the contract: the same seed gives the same subsets on every machine and commit.
    """
    rng = random.Random(seed)
    setups = []
    for number in range(1, count + 1):
        size = rng.randint(*sizes)
        rankers = tuple(sorted(rng.sample(RANKERS, size)))
        setups.append(Setup(f"random {number}", rankers, rng.choice(depths)))
    return setups


def gap_percent(value: float, best: float) -> float:
    """How far ``value`` is from ``best``, in percent of ``best`` (negative: below it)."""
    return 100.0 * relative_gain(value, best)


def at_or_above(value: float, best: float, tolerance: float = 1e-12) -> bool:
    """Equal means count as reaching the best (a method that *is* the best baseline is not below it)."""
    return value >= best - tolerance


@dataclass(frozen=True)
class GapSummary:
    """One method over many setups: its gaps (%) to each setup's best baseline."""

    mean: float
    worst: float
    best: float
    at_or_above: int
    setups: int


def gap_summary(values: Sequence[float], bests: Sequence[float]) -> GapSummary:
    """Mean, worst and best gap (%) of ``values`` to the per-setup ``bests``, and how often it reaches them."""
    if len(values) != len(bests) or not values:
        raise ValueError("one value per setup, at least one setup")
    gaps = [gap_percent(v, b) for v, b in zip(values, bests, strict=True)]
    reached = sum(at_or_above(v, b) for v, b in zip(values, bests, strict=True))
    return GapSummary(metrics.mean(gaps), min(gaps), max(gaps), reached, len(gaps))


# The fixed baselines every setup is judged against; the best of them is chosen per setup in hindsight.
PLAIN_RRF = "rrf (plain)"
BEST_SINGLE = "best single"
BASELINES = (PLAIN_RRF, "combmnz", "borda", BEST_SINGLE)


def plain_rrf(config: RankingConfig) -> RankingConfig:
    """Plain RRF k=60: the rrf ranker without its interleave tie-break and region policy."""
    rrf = config.rrf.model_copy(update={"interleave": False, "region_policy": False})
    return config.model_copy(update={"strategy": "rrf", "rrf": rrf})


@dataclass
class SubsetResult:
    """One setup: each baseline's and each strategy's mean nDCG@8 (``best_single``: which ranker won alone)."""

    name: str
    rankers: tuple[int, ...]
    depth: int
    baselines: dict[str, float]
    best_single: int
    strategies: dict[str, float]

    @property
    def best_baseline(self) -> tuple[str, float]:
        """The best baseline in hindsight (ties: the first in ``BASELINES``'s order)."""
        return max(self.baselines.items(), key=lambda kv: kv[1])


def evaluate_subsets(
    queries: Queries,
    setups: Iterable[Setup],
    runs: Sequence[tuple[str, RankingConfig]],
    progress: Callable[[], None] | None = None,
) -> list[SubsetResult]:
    """Every baseline and every configuration in ``runs`` on every setup (metasearch protocol, nDCG@8).

    ``progress`` ticks once per fused run and once per ranker tried alone: ``3 + len(rankers) + len(runs)``
    ticks a setup.
    """
    from serpfuse.config import RankingConfig

    tick = progress or (lambda: None)
    results = []
    for setup in setups:

        def mean_ndcg(config: RankingConfig, setup: Setup = setup) -> float:
            value = metasearch(queries, strategy_fuser(config.strategy, config), setup.rankers, setup.depth)
            tick()
            return value.mean_ndcg

        baselines = {
            PLAIN_RRF: mean_ndcg(plain_rrf(RankingConfig())),
            "combmnz": mean_ndcg(RankingConfig(strategy="combmnz")),
            "borda": mean_ndcg(RankingConfig(strategy="borda")),
        }
        single, scores = best_single(queries, setup.rankers, setup.depth)
        for _ in setup.rankers:
            tick()
        baselines[BEST_SINGLE] = scores.mean_ndcg
        strategies = {label: mean_ndcg(config) for label, config in runs}
        results.append(SubsetResult(setup.name, setup.rankers, setup.depth, baselines, single, strategies))
    return results


def subset_summaries(results: Sequence[SubsetResult], labels: Sequence[str]) -> dict[str, GapSummary]:
    """Label -> GapSummary, for each strategy and then each baseline, against the per-subset best baseline."""
    bests = [r.best_baseline[1] for r in results]
    out = {label: gap_summary([r.strategies[label] for r in results], bests) for label in labels}
    for name in BASELINES:
        out.setdefault(name, gap_summary([r.baselines[name] for r in results], bests))
    return out
