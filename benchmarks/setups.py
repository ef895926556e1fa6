"""Each research corpus as a ``Bench``: how to run a configuration on it, what to show beside it, which metric
leads.

``CORPORA`` is the registry ``python -m benchmarks --corpus`` chooses from: a new corpus is one function
``(BenchOptions) -> Bench`` added there (and its loader/protocol module next to ``crw56`` and ``mq2008``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks import crw56
from benchmarks import mq2008 as mq
from serpfuse.bench.modes import Bench, BenchError, Tick
from serpfuse.bench.report import BenchReport, MetricSpec, QueryScore, ShownRow, aggregate, worst_queries
from serpfuse.config import RankingConfig

DATA_ENV = "SERPFUSE_DATA"
DEFAULT_DATA = Path("../shared/data")
DEPTH = 20  # mq2008 metasearch: rows each engine shows in the main setup
SINGLE_SPEC = re.compile(r"^single:(\d+)$")  # MQ2008 metasearch: one ranker's own list, e.g. single:9


@dataclass
class BenchOptions:
    """Everything ``python -m benchmarks`` was asked, as plain values (the CLI fills it; tests may too)."""

    root: Path
    corpus: str = "crw56"
    strategies: list[str | None] = field(default_factory=lambda: [None])
    settings: list[str] = field(default_factory=list)
    compare: tuple[str, str] | None = None
    sweep: bool = False
    grid: list[str] = field(default_factory=list)
    metric: str | None = None
    split: str = "dev"  # crw56
    judged_only: bool = False  # crw56
    protocol: str = "metasearch"  # mq2008
    rankers: str | None = None  # mq2008
    depth: int | None = None  # mq2008 metasearch
    random_subsets: int | None = None  # mq2008 metasearch
    seed: int | None = None  # --random-subsets
    misspelled: bool = False  # crw56
    garbage_engine: str | None = None  # crw56 engine name or mq2008 ranker (rN or N)
    generic_rows: str | None = None  # crw56 engine whose lists get rows matching only generic words
    signal_cost: bool = False  # the content signals' cost in the ranking step, A/B in one process
    perf: bool = False  # the performance table instead of ranking quality
    perf_baseline: Path | None = None  # --perf: another checkout's src directory, measured beside this one
    perf_repeat: int = 3  # --perf: repetitions of every probe
    extractors: list[str] = field(default_factory=list)  # article-extraction


def data_root(data: Path | None) -> Path:
    root = data or Path(os.environ.get(DATA_ENV) or DEFAULT_DATA)
    if not root.is_dir():
        raise BenchError(f"data directory not found: {root} (use --data or set {DATA_ENV})")
    return root


# --- crw56 ---------------------------------------------------------------------------------------------------


def load_crw56(root: Path) -> crw56.Crw56Corpus:
    try:
        return crw56.load_crw56(root)
    except crw56.CorpusError as exc:
        raise BenchError(str(exc)) from None


def crw56_bench(options: BenchOptions, per_engine: bool = True) -> Bench:
    corpus = load_crw56(options.root)
    runner = crw56.PipelineRunner(corpus)
    split = options.split

    def run(label: str, config: RankingConfig | None, progress: Tick) -> BenchReport:
        return crw56.run(
            corpus,
            config,
            split,
            label=label,
            per_engine=per_engine and config is not None,
            unjudged_irrelevant=not options.judged_only,
            runner=runner,
            progress=progress,
        )

    primary = "nDCG@8" if split != "test" else "CleanRel@5"
    return Bench(
        name="crw56",
        primary=primary,
        headline=crw56.HEADLINE,
        metrics=crw56.METRICS,
        queries=len(corpus.split(split)),
        run=run,
        references=lambda progress, skip: [run(crw56.BASELINE, None, progress)],
        reference_runs=1,
    )


# --- trec-dl-passages ----------------------------------------------------------------------------------------


def load_trecdl(root: Path):
    from benchmarks import trecdl

    try:
        return trecdl.load_trecdl(root)
    except trecdl.CorpusError as exc:
        raise BenchError(str(exc)) from None


def trecdl_bench(options: BenchOptions) -> Bench:
    """trec-dl-passages through the pipeline (``benchmarks.trecdl``): six retrieval systems as engines."""
    from benchmarks import trecdl

    if options.split not in ("dev", "all"):
        raise BenchError("trec-dl holds only its dev half here (--split dev)")
    corpus = load_trecdl(options.root)
    runner = trecdl.PipelineRunner(corpus)

    def run(label: str, config: RankingConfig | None, progress: Tick) -> BenchReport:
        return trecdl.run(corpus, config or RankingConfig(), label, runner, progress)

    return Bench(
        name="trec-dl",
        primary="nDCG@8",
        headline=("nDCG@8", "RelShown@8", "P@8", "MRR@8", "Irrelevant@5", "shown"),
        metrics=crw56.METRICS,
        queries=len(corpus.queries),
        run=run,
        notes=["Junk@5 and CleanRel@5 mean nothing here (passages have no title or site)"],
    )


# --- MQ2008-agg ----------------------------------------------------------------------------------------------

MQ_METRICS = [
    MetricSpec("nDCG@8", doc="gain 2^rel-1, ideal from all judged docs; queries with a relevant doc"),
    MetricSpec("P@8"),
    MetricSpec("MRR@8"),
]
MQ_CLASSIC_METRICS = [
    MetricSpec("MAP", doc="trec_eval's map over all 784 queries"),
    MetricSpec("P@10", doc="trec_eval's P_10 over all 784 queries"),
]


def parse_rankers(text: str | None, known: Sequence[int]) -> list[int]:
    """``1-5``, ``2,7,9`` or ``all`` -> ranker numbers."""
    if not text or text == "all":
        return list(known)
    out: list[int] = []
    for part in text.split(","):
        first, sep, last = part.strip().partition("-")
        numbers = range(int(first), int(last) + 1) if sep else [int(first)]
        out.extend(n for n in numbers if n not in out)
    unknown = [n for n in out if n not in known]
    if unknown or not out:
        raise ValueError(f"rankers must be among {known[0]}-{known[-1]}: {text!r}")
    return out


def compact_ranges(numbers: Sequence[int]) -> str:
    """[1, 2, 3, 5] -> "1-3,5" (the form --rankers accepts)."""
    parts: list[str] = []
    ordered = sorted(set(numbers))
    start = prev = ordered[0] if ordered else 0
    for n in [*ordered[1:], None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        if n is not None:
            start = prev = n
    return ",".join(parts)


def load_mq2008_queries(root: Path) -> dict[str, mq.QueryData]:
    """Every MQ2008-agg query under ``root``, or a BenchError saying what is missing or unreadable."""
    folder = root / "mq2008-agg"
    if not folder.is_dir():
        raise BenchError(f"MQ2008-agg not found: {folder}")
    try:
        return mq.queries_of(mq.load_mq2008(folder))
    except (ValueError, OSError) as exc:
        raise BenchError(str(exc).splitlines()[0]) from None


def mq2008_bench(options: BenchOptions) -> Bench:
    try:
        rankers = parse_rankers(options.rankers, mq.RANKERS)
    except ValueError as exc:
        raise BenchError(str(exc)) from None
    queries = load_mq2008_queries(options.root)
    if options.protocol == "classic":
        return _mq2008_classic(queries, rankers)
    return _mq2008_metasearch(queries, rankers, DEPTH if options.depth is None else options.depth)


def _mq_reporter(queries: dict[str, mq.QueryData], split: str):
    def report(
        label: str, fingerprint: str, scores: list[QueryScore], metrics: list[MetricSpec]
    ) -> BenchReport:
        return BenchReport.from_scores(
            "mq2008",
            split,
            label,
            fingerprint,
            metrics,
            scores,
            worst=worst_queries(scores, [(metrics[0].name, True)]),
        )

    return report


def _mq2008_classic(queries: dict[str, mq.QueryData], rankers: list[int]) -> Bench:
    from serpfuse.bench import metrics as m

    report = _mq_reporter(queries, f"classic · rankers {compact_ranges(rankers)}")

    def classic_scores(run_fn, progress: Tick) -> list[QueryScore]:
        scores = []
        for qid, q in queries.items():
            ranked = m.order_by_score(run_fn(q))
            values = {
                "MAP": m.average_precision(ranked, q.grades),
                "P@10": m.precision_at(ranked, q.grades, 10),
            }
            rows = [ShownRow(d, d, grade=q.grades.get(d)) for d in ranked[:10]]
            scores.append(QueryScore(qid, f"MQ2008 {qid}", values, {"subset": q.subset}, rows))
            if progress:
                progress()
        return scores

    def strategy_run(config: RankingConfig):
        from serpfuse.ranking.fusion import fuse_lists

        def run_fn(q):
            lists = {mq.engine_name(r): q.ranking(r) for r in rankers if q.ranking(r)}
            return fuse_lists(lists, config.strategy, config)

        return run_fn

    def run_classic(label: str, config: RankingConfig | None, progress: Tick) -> BenchReport:
        config = config or RankingConfig()
        return report(
            label,
            config.fingerprint(),
            classic_scores(strategy_run(config), progress),
            MQ_CLASSIC_METRICS,
        )

    def classic_references(progress: Tick, skip: set[str]) -> list[BenchReport]:
        rrf = report(
            "rrf k=60 (original positions)",
            "reference",
            classic_scores(mq.classic_rrf(rankers), progress),
            MQ_CLASSIC_METRICS,
        )
        singles = [(r, mq.classic(queries, mq.classic_single(r)).map) for r in rankers]
        best, _ = max(singles, key=lambda t: (t[1], -t[0]))
        single = report(
            f"best single (r{best})",
            "reference",
            classic_scores(mq.classic_single(best), progress),
            MQ_CLASSIC_METRICS,
        )
        return [single, rrf]

    return Bench(
        name="mq2008",
        primary="MAP",
        headline=("MAP", "P@10"),
        metrics=MQ_CLASSIC_METRICS,
        queries=len(queries),
        run=run_classic,
        references=classic_references,
        reference_runs=2,
    )


def _mq2008_metasearch(queries: dict[str, mq.QueryData], rankers: list[int], depth: int) -> Bench:
    engines = compact_ranges(rankers)
    report = _mq_reporter(queries, f"metasearch · rankers {engines} · depth {depth}")
    judged = {qid: q for qid, q in queries.items() if q.has_relevant}

    def meta_scores(fuser, progress: Tick) -> list[QueryScore]:
        scores = []
        for qid, q in judged.items():
            ranked = list(fuser(mq.shown_lists(q, rankers, depth)))[: mq.CUTOFF]
            ndcg, precision, rr = mq.score_ranked(ranked, q.grades)
            rows = [ShownRow(d, d, grade=q.grades.get(d)) for d in ranked]
            values = {"nDCG@8": ndcg, "P@8": precision, "MRR@8": rr}
            scores.append(QueryScore(qid, f"MQ2008 {qid}", values, {"subset": q.subset}, rows))
            if progress:
                progress()
        return scores

    singles: dict[int, list[QueryScore]] = {}  # each ranker alone does not depend on the configuration

    def single(ranker: int, progress: Tick = None) -> list[QueryScore]:
        if ranker not in singles:
            singles[ranker] = meta_scores(mq.single_fuser(ranker), progress)
        return singles[ranker]

    def run_meta(label: str, config: RankingConfig | None, progress: Tick) -> BenchReport:
        config = config or RankingConfig()
        scores = meta_scores(mq.strategy_fuser(config.strategy, config), progress)
        out = report(label, config.fingerprint(), scores, MQ_METRICS)
        for r in rankers:
            out.per_engine[mq.engine_name(r)] = aggregate(single(r), MQ_METRICS)
        return out

    def named_single(label: str, progress: Tick) -> BenchReport:
        match = SINGLE_SPEC.match(label.strip())
        if not match or int(match[1]) not in rankers:
            raise BenchError(
                f"{label!r}: --compare names one ranker of the setup as single:N, N among {engines}"
            )
        return report(label, "reference", single(int(match[1]), progress), MQ_METRICS)

    def meta_references(progress: Tick, skip: set[str]) -> list[BenchReport]:
        # the best single ranker on these queries, as mq2008.best_single picks it (ties: the lower number)
        means = {r: aggregate(single(r), MQ_METRICS)["nDCG@8"] for r in rankers}
        best = max(rankers, key=lambda r: (means[r], -r))
        out = [report(f"best single (r{best})", "reference", single(best), MQ_METRICS)]
        for name in ("rrf", "combmnz", "borda"):
            if name in skip:
                continue
            config = RankingConfig(strategy=name)
            scores = meta_scores(mq.strategy_fuser(name, config), progress)
            out.append(report(name, config.fingerprint(), scores, MQ_METRICS))
        return out

    return Bench(
        name="mq2008",
        primary="nDCG@8",
        headline=("nDCG@8", "P@8", "MRR@8"),
        metrics=MQ_METRICS,
        queries=len(judged),
        run=run_meta,
        references=meta_references,
        reference_runs=4,
        notes=[
            "best single = the ranker with the highest mean nDCG@8 on these queries (chosen with hindsight)"
        ],
        named=named_single,
    )


# --- consensus-v2.1's frozen lists ---------------------------------------------------------------------------


def consensus_bench(options: BenchOptions) -> Bench:
    """consensus-v2.1's frozen fused baselines (``benchmarks.consensus_frozen``): agreement with the reference lists."""
    from benchmarks import consensus_frozen

    folder = options.root / "consensus-v2.1"
    if not folder.is_dir():
        raise BenchError(f"consensus-v2.1 baselines not found: {folder}")
    try:
        cases = consensus_frozen.load_cases(folder)
    except (ValueError, OSError) as exc:
        raise BenchError(str(exc).splitlines()[0]) from None

    def run(label: str, config: RankingConfig | None, progress: Tick) -> BenchReport:
        return consensus_frozen.run(cases, config or RankingConfig(strategy="consensus"), label, progress)

    return Bench(
        name="consensus",
        primary=consensus_frozen.PRIMARY,
        headline=tuple(s.name for s in consensus_frozen.METRICS),
        metrics=consensus_frozen.METRICS,
        queries=len(cases),
        run=run,
    )


# The corpora ``python -m benchmarks --corpus`` knows, in the order its help lists them.
CORPORA: dict[str, Callable[[BenchOptions], Bench]] = {
    "crw56": crw56_bench,
    "trec-dl": trecdl_bench,
    "mq2008": mq2008_bench,
    "consensus": consensus_bench,
    "article-extraction": lambda options: _extraction_has_own_runner(),
}


def _extraction_has_own_runner() -> Bench:
    raise BenchError(
        "article-extraction scores extractors, not rankings (benchmarks.runner.OWN_RUNNERS runs it)"
    )
