"""What ``python -m benchmarks`` runs: one mode chosen from ``MODES`` over a corpus from ``setups.CORPORA``.

A mode turns ``BenchOptions`` into a ``BenchOutcome`` that can be shown three ways (JSON, Markdown, rich tables);
the CLI only parses options, asks ``run`` and prints. The last four modes (compare, sweep, several
configurations, one) are the package's own (``serpfuse.bench.modes``); the research ones come first: a new one
(e.g. ``--perf``) is one ``Mode`` in ``MODES``: when it is wanted, what it refuses, and how it runs. Modes are
tried in order; the first wanted one runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property

from benchmarks import mq2008 as mq
from benchmarks.setups import (
    CORPORA,
    DEPTH,
    SINGLE_SPEC,
    BenchOptions,
    compact_ranges,
    load_mq2008_queries,
    parse_rankers,
)
from benchmarks.tables import STRONG, Tables
from serpfuse.bench import modes
from serpfuse.bench.config_specs import BASELINE
from serpfuse.bench.modes import (
    Bench,
    BenchError,
    BenchOutcome,
    ParsedConfigs,
    ProgressFactory,
    quiet,
    run_compare,
    run_many,
    run_one,
    run_sweep,
)
from serpfuse.bench.report import MetricSpec
from serpfuse.config import RankingConfig
from serpfuse.ranking.rankers import available


def is_reference(name: str) -> bool:
    """``baseline`` (crw56: SearXNG's order) and ``single:N`` (MQ2008: ranker N's own list) name reference
    lists, not configurations."""
    return name == BASELINE or SINGLE_SPEC.match(name) is not None


def parse_configs(options: BenchOptions) -> ParsedConfigs:
    return modes.parse_configs(options.strategies, options.settings, options.compare, is_reference)


def _is_meta(options: BenchOptions) -> bool:
    return options.corpus == "mq2008" and options.protocol == "metasearch"


@dataclass
class Job:
    """One ``python -m benchmarks`` call: the options, their parsed configurations, the progress bar, and the corpus's
    Bench with its lead metric (built and checked together on first use of either, so a mode that needs neither
    never loads the corpus)."""

    options: BenchOptions
    parsed: ParsedConfigs
    progress: ProgressFactory = quiet

    @cached_property
    def _bench_and_metric(self) -> tuple[Bench, MetricSpec]:
        bench = CORPORA[self.options.corpus](self.options)
        return bench, bench.lead_metric(self.options.metric)

    @property
    def bench(self) -> Bench:
        return self._bench_and_metric[0]

    @property
    def metric(self) -> MetricSpec:
        return self._bench_and_metric[1]


@dataclass(frozen=True)
class Mode:
    """One way to run the bench: ``wanted`` says when it runs, ``check`` refuses what it cannot do (raising
    BenchError) before any corpus is loaded, ``run`` does it."""

    name: str
    wanted: Callable[[BenchOptions], bool]
    run: Callable[[Job], BenchOutcome]
    check: Callable[[BenchOptions, ParsedConfigs], None] = lambda options, parsed: None


def run_subsets(
    options: BenchOptions, runs: list[tuple[str, RankingConfig]], progress: ProgressFactory
) -> Tables:
    """MQ2008 metasearch: the three reference setups plus N random ranker subsets; each run's gap to the best
    baseline per subset."""
    queries = load_mq2008_queries(options.root)
    count = options.random_subsets or 0
    seed = mq.SUBSET_SEED if options.seed is None else options.seed
    setups = [*mq.REFERENCE_SETUPS, *mq.random_setups(count, seed)]
    labels = [label for label, _ in runs]
    total = sum(3 + len(s.rankers) + len(runs) for s in setups)
    with progress(total) as tracker:
        tracker.describe(f"{len(setups)} setups")
        results = mq.evaluate_subsets(queries, setups, runs, tracker.step)
    note = (
        f"Gap: nDCG@8 relative to the best of {', '.join(mq.BASELINES)} on each subset, chosen in hindsight "
        f"(bold). {len(setups)} subsets: the 3 reference setups and {count} random ones "
        f"(sizes 3-10, depth 10 or 20, seed {seed})."
    )
    summaries = mq.subset_summaries(results, labels)
    payload = {
        "metric": "nDCG@8",
        "seed": seed,
        "baselines": list(mq.BASELINES),
        "subsets": [
            {
                "name": r.name,
                "rankers": list(r.rankers),
                "depth": r.depth,
                "baselines": r.baselines,
                "bestSingle": r.best_single,
                "bestBaseline": r.best_baseline[0],
                "best": r.best_baseline[1],
                "strategies": {
                    label: {
                        "nDCG@8": value,
                        "gap": mq.gap_percent(value, r.best_baseline[1]),
                        "atOrAbove": mq.at_or_above(value, r.best_baseline[1]),
                    }
                    for label, value in r.strategies.items()
                },
            }
            for r in results
        ],
        "summary": {
            label: {
                "meanGap": g.mean,
                "worstGap": g.worst,
                "bestGap": g.best,
                "atOrAbove": g.at_or_above,
                "subsets": g.setups,
                "baseline": label not in labels,
            }
            for label, g in summaries.items()
        },
    }
    rows = []
    for r in results:
        best_name, best = r.best_baseline
        cells = []
        for name in mq.BASELINES:
            text = f"{r.baselines[name]:.4f}" + (f" (r{r.best_single})" if name == mq.BEST_SINGLE else "")
            cells.append(STRONG + text if name == best_name else text)
        for label in labels:
            value = r.strategies[label]
            cells.append(f"{value:.4f} ({mq.gap_percent(value, best):+.2f} %)")
        rows.append([r.name, f"{compact_ranges(r.rankers)}@{r.depth}", *cells])
    summary_rows = [
        [
            label if label in labels else f"{label} (baseline)",
            f"{g.mean:+.2f} %",
            f"{g.worst:+.2f} %",
            f"{g.best:+.2f} %",
            f"{g.at_or_above} / {g.setups}",
        ]
        for label, g in summaries.items()
    ]
    tables = [
        (
            "nDCG@8 per subset (gap to the best baseline)",
            ["subset", "engines@depth", *mq.BASELINES, *labels],
            rows,
            2,
        ),
        (
            "summary over the subsets",
            ["method", "mean gap", "worst gap", "best gap", "at or above best"],
            summary_rows,
            1,
        ),
    ]
    return Tables(payload, tables, note)


def _check_subsets(options: BenchOptions, parsed: ParsedConfigs) -> None:
    if not _is_meta(options):
        raise BenchError("--random-subsets runs on --corpus mq2008 (metasearch protocol)")
    if options.compare or options.sweep:
        raise BenchError("--random-subsets, --compare and --sweep are separate runs: choose one")
    if options.rankers or options.depth is not None:
        raise BenchError("--random-subsets draws its own rankers and depths: drop --rankers and --depth")


def _every_ranker(job: Job) -> tuple[list[tuple[str, RankingConfig]], str]:
    """The robustness benches' runs: the --strategy ones, or every ranker when none is named, then plain RRF
    (the reference every table compares with); and the default ranker's label."""
    options = job.options
    if options.strategies == [None]:
        runs = parse_configs(replace(options, strategies=list(available()))).runs
    else:
        runs = list(job.parsed.runs)
    runs.append((mq.PLAIN_RRF, mq.plain_rrf(RankingConfig())))
    return runs, RankingConfig().strategy


def _alone(flag: str, options: BenchOptions) -> None:
    """A robustness bench is a run of its own: no --compare, --sweep, --random-subsets or the other one."""
    others = {
        "--compare": options.compare is not None,
        "--sweep": options.sweep,
        "--random-subsets": options.random_subsets is not None,
        "--misspelled": options.misspelled,
        "--garbage-engine": options.garbage_engine is not None,
        "--generic-rows": options.generic_rows is not None,
    }
    clash = [name for name, on in others.items() if on and name != flag]
    if clash:
        raise BenchError(f"{flag} and {clash[0]} are separate runs: choose one")


def _check_misspelled(options: BenchOptions, parsed: ParsedConfigs) -> None:
    _alone("--misspelled", options)
    if options.corpus != "crw56":
        raise BenchError("--misspelled runs on --corpus crw56 (--split dev judged; test or all label-free)")


def _check_garbage(options: BenchOptions, parsed: ParsedConfigs) -> None:
    _alone("--garbage-engine", options)
    if options.corpus not in ("crw56", "mq2008") or (options.corpus == "mq2008" and not _is_meta(options)):
        raise BenchError("--garbage-engine runs on --corpus crw56 or --corpus mq2008 (metasearch protocol)")


def _run_garbage(job: Job) -> BenchOutcome:
    from benchmarks import label_free, robustness

    options = job.options
    runs, default = _every_ranker(job)
    if options.corpus == "crw56" and options.split != "dev":
        return label_free.run_garbage(
            options.root, options.garbage_engine, options.split, runs, default, job.progress
        )
    if options.corpus == "crw56":
        return robustness.run_garbage_crw56(options.root, options.garbage_engine, runs, default, job.progress)
    try:
        rankers = parse_rankers(options.rankers, mq.RANKERS)
        ranker = robustness.parse_ranker(options.garbage_engine, rankers)
    except ValueError as exc:
        raise BenchError(str(exc)) from None
    queries = load_mq2008_queries(options.root)
    depth = DEPTH if options.depth is None else options.depth
    return robustness.run_garbage_mq2008(queries, ranker, rankers, depth, runs, default, job.progress)


def _check_generic(options: BenchOptions, parsed: ParsedConfigs) -> None:
    _alone("--generic-rows", options)
    if options.corpus != "crw56":
        raise BenchError("--generic-rows runs on --corpus crw56 (--split dev judged; test or all label-free)")


def _run_generic(job: Job) -> BenchOutcome:
    from benchmarks import label_free, robustness

    runs, default = _every_ranker(job)
    if job.options.split != "dev":  # the unseen half has no judgments here: count the injected rows
        return label_free.run_generic(
            job.options.root, job.options.generic_rows, job.options.split, runs, default, job.progress
        )
    return robustness.run_generic_crw56(
        job.options.root, job.options.generic_rows, runs, default, job.progress
    )


def _check_signal_cost(options: BenchOptions, parsed: ParsedConfigs) -> None:
    others = options.compare or options.sweep or options.random_subsets is not None or options.garbage_engine
    others = others or options.misspelled or options.generic_rows is not None or options.perf
    if others or options.strategies != [None] or options.settings:
        raise BenchError(
            "--signal-cost measures the default configuration's ranking step: drop the other options"
        )
    if options.corpus != "crw56":
        raise BenchError("--signal-cost runs on the crw56 replay (--corpus crw56)")


def _run_signal_cost(job: Job) -> BenchOutcome:
    from benchmarks import signal_cost

    path = job.options.root / signal_cost.RECORDING
    if not path.is_file():
        raise BenchError(f"crw56 file missing: {path}")
    queries = len(signal_cost.recorded_queries(job.options.root))
    with job.progress(queries) as tracker:
        tracker.describe(f"{queries} queries, default and signals off, {job.options.perf_repeat} rounds")
        result = signal_cost.measure(job.options.root, job.options.perf_repeat, tracker.step)
    return signal_cost.table(result)


def _run_misspelled(job: Job) -> BenchOutcome:
    from benchmarks import label_free, robustness

    runs, default = _every_ranker(job)
    if job.options.split != "dev":  # the unseen half has no judgments here: count the echo rows
        return label_free.run_misspelled(job.options.root, job.options.split, runs, default, job.progress)
    return robustness.run_misspelled(job.options.root, runs, default, job.progress)


# Tried in order: the first wanted mode runs; the default (one or several configurations) comes last.
MODES: list[Mode] = [
    Mode("misspelled", wanted=lambda o: o.misspelled, check=_check_misspelled, run=_run_misspelled),
    Mode("garbage", wanted=lambda o: o.garbage_engine is not None, check=_check_garbage, run=_run_garbage),
    Mode("generic", wanted=lambda o: o.generic_rows is not None, check=_check_generic, run=_run_generic),
    Mode("signal-cost", wanted=lambda o: o.signal_cost, check=_check_signal_cost, run=_run_signal_cost),
    Mode(
        "perf",
        wanted=lambda o: o.perf,
        check=lambda options, parsed: _check_perf(options),
        run=lambda job: run_perf(job.options, job.progress),
    ),
    Mode(
        "subsets",
        wanted=lambda o: o.random_subsets is not None,
        check=_check_subsets,
        run=lambda job: run_subsets(job.options, job.parsed.runs, job.progress),
    ),
    Mode(
        "compare",
        wanted=lambda o: o.compare is not None,
        run=lambda job: run_compare(job.bench, job.parsed.pairs, job.metric.name, job.progress),
    ),
    Mode(
        "sweep",
        wanted=lambda o: o.sweep,
        run=lambda job: run_sweep(
            job.bench, job.parsed.runs[0][1], job.metric, job.options.grid, job.options.settings, job.progress
        ),
    ),
    Mode(
        "many",
        wanted=lambda o: len(o.strategies) > 1,
        run=lambda job: run_many(job.bench, job.parsed.runs, job.progress),
    ),
    Mode(
        "one",
        wanted=lambda o: True,
        run=lambda job: run_one(job.bench, *job.parsed.runs[0], job.progress),
    ),
]


def _check_perf(options: BenchOptions) -> None:
    others = options.compare or options.sweep or options.random_subsets is not None or options.garbage_engine
    others = others or options.generic_rows is not None
    if others or options.misspelled or options.strategies != [None] or options.settings:
        raise BenchError("--perf measures speed with the default configuration: drop the other bench options")
    if options.perf_baseline is not None and not (options.perf_baseline / "serpfuse").is_dir():
        raise BenchError(
            f"--baseline must be a checkout's src directory (with serpfuse/): {options.perf_baseline}"
        )


def run_perf(options: BenchOptions, progress: ProgressFactory) -> BenchOutcome:
    from benchmarks.perf import PerfOutcome, measure

    trees = 2 if options.perf_baseline else 1
    with progress(options.perf_repeat * trees) as tracker:

        def step(text: str) -> None:
            tracker.describe(text)
            tracker.step()

        rows, peak = measure(
            options.root, repeat=options.perf_repeat, baseline=options.perf_baseline, progress=step
        )
    return PerfOutcome(rows, peak)


def _check_common(options: BenchOptions, parsed: ParsedConfigs) -> None:
    """What no mode accepts, in the order the caller is told."""
    meta = _is_meta(options)
    for label, config in parsed.pairs:
        if config is None and label.strip() == BASELINE and options.corpus != "crw56":
            raise BenchError("'baseline' (SearXNG's own order) exists only for --corpus crw56")
        if config is None and label.strip() != BASELINE and not meta:
            raise BenchError(
                f"{label.strip()!r} (one ranker's own list) exists only for --corpus mq2008 (metasearch)"
            )
    modes.check_runs(parsed, options.compare is not None, options.sweep)
    if options.random_subsets is None and options.seed is not None:
        raise BenchError("--seed goes with --random-subsets")


def _extraction(options: BenchOptions) -> BenchOutcome:
    from benchmarks.extraction import run_bench

    return run_bench(options)


# Corpora that score something other than a ranking configuration run on their own, before configs are parsed.
OWN_RUNNERS: dict[str, Callable[[BenchOptions], BenchOutcome]] = {"article-extraction": _extraction}


def run(options: BenchOptions, progress: ProgressFactory = quiet) -> BenchOutcome:
    """Validate the options, pick the mode, run it. Bad input or missing data raises ``BenchError``."""
    if options.corpus not in CORPORA:
        raise BenchError(f"unknown corpus {options.corpus!r}; choose one of: {', '.join(CORPORA)}")
    if options.corpus in OWN_RUNNERS:
        return OWN_RUNNERS[options.corpus](options)
    parsed = parse_configs(options)
    _check_common(options, parsed)
    mode = next(m for m in MODES if m.wanted(options))
    mode.check(options, parsed)
    return mode.run(Job(options, parsed, progress))
