"""What ``serpfuse bench`` runs: one mode chosen from ``MODES`` over a corpus from ``setups.CORPORA``.

A mode turns ``BenchOptions`` into an ``Outcome`` that can be shown three ways (JSON, Markdown, rich tables);
the CLI only parses options, asks ``run`` and prints. A new mode (e.g. ``--perf``) is one ``Mode`` in ``MODES``:
when it is wanted, what it refuses, and how it runs. Modes are tried in order; the first wanted one runs.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, Protocol

from pydantic import ValidationError

from serpfuse.bench import mq2008 as mq
from serpfuse.bench.configs import apply_settings, config_from, current_value, grid_of, parse_spec
from serpfuse.bench.crw56 import BASELINE
from serpfuse.bench.report import (
    STRONG,
    BenchReport,
    Comparison,
    MetricSpec,
    Tables,
    compare,
    comparison_json,
    markdown_comparison,
    markdown_report,
    markdown_rows,
    markdown_summary,
    markdown_sweep,
    render_comparison,
    render_report,
    render_sweep,
    rows_table,
    summary_table,
    sweep_json,
)
from serpfuse.bench.setups import (
    CORPORA,
    DEPTH,
    Bench,
    BenchError,
    BenchOptions,
    compact_ranges,
    load_mq2008_queries,
    parse_rankers,
)
from serpfuse.bench.stats import Sweep, sweep
from serpfuse.config import RankingConfig
from serpfuse.ranking.rankers import UnknownStrategy, available
from serpfuse.settings import validation_message


class Tracker(Protocol):
    def step(self) -> None: ...
    def describe(self, text: str) -> None: ...


class _Quiet:
    def step(self) -> None:
        pass

    def describe(self, text: str) -> None:
        pass


ProgressFactory = Callable[[int], AbstractContextManager[Tracker]]


def quiet(total: int) -> AbstractContextManager[Tracker]:
    """No progress shown (tests, and any output that is not a terminal table)."""
    return nullcontext(_Quiet())


class Outcome(Protocol):
    """A finished bench run, shown as JSON (``to_json``), Markdown (``markdown``) or rich tables (``render``)."""

    def to_json(self) -> Any: ...
    def markdown(self) -> str: ...
    def render(self, console) -> None: ...


# --- outcomes ------------------------------------------------------------------------------------------------


@dataclass
class Single:
    """One configuration with the corpus's references beside it: overall, per group, per engine, worst."""

    bench: Bench
    report: BenchReport
    references: list[BenchReport]

    def to_json(self) -> Any:
        return {
            "report": self.report.to_json(with_rows=True),
            "references": [r.to_json() for r in self.references],
        }

    def markdown(self) -> str:
        return markdown_report(self.report, extra=self.references, names=self.bench.headline)

    def render(self, console) -> None:
        render_report(console, self.report, extra=self.references, names=self.bench.headline)


@dataclass
class Many:
    """Several configurations in one summary table (per-group and worst-query tables need a single run)."""

    bench: Bench
    reports: list[BenchReport]
    references: list[BenchReport]

    def to_json(self) -> Any:
        return {
            "reports": [r.to_json() for r in self.reports],
            "references": [r.to_json() for r in self.references],
        }

    def _engine_specs(self) -> list[MetricSpec]:
        first = self.reports[0]
        return [s for s in first.metrics if s.name in self.bench.headline and s.name in first.summary]

    def markdown(self) -> str:
        first = self.reports[0]
        parts = [markdown_summary([*self.references, *self.reports], self.bench.headline)]
        if first.per_engine:
            parts.append(
                "Per engine (each engine's own list alone):\n\n"
                + markdown_rows("engine", first.per_engine, self._engine_specs())
            )
        return "\n\n".join(parts)

    def render(self, console) -> None:
        first = self.reports[0]
        title = f"{first.corpus} · {first.split}"
        console.print(summary_table([*self.references, *self.reports], title, self.bench.headline))
        if first.per_engine:
            console.print(
                rows_table(
                    "per engine (each engine's own list alone)",
                    "engine",
                    first.per_engine,
                    self._engine_specs(),
                )
            )
        for note in self.bench.notes:
            console.print(f"[dim]note: {note}[/dim]")


@dataclass
class Compared:
    """B − A per query with paired bootstrap intervals."""

    bench: Bench
    result: Comparison

    def to_json(self) -> Any:
        return comparison_json(self.result)

    def markdown(self) -> str:
        return markdown_comparison(self.result)

    def render(self, console) -> None:
        render_comparison(console, self.result, names=self.bench.headline)


@dataclass
class Swept:
    """Marginal means over a grid and the best point against the default."""

    result: Sweep

    def to_json(self) -> Any:
        return sweep_json(self.result)

    def markdown(self) -> str:
        return markdown_sweep(self.result)

    def render(self, console) -> None:
        render_sweep(console, self.result)


# --- modes ---------------------------------------------------------------------------------------------------


@dataclass
class Parsed:
    """The options' configurations, validated once: (label, config) per strategy and the --compare pair."""

    runs: list[tuple[str, RankingConfig]]
    pairs: list[tuple[str, RankingConfig | None]]


def parse_configs(options: BenchOptions) -> Parsed:
    try:
        configs = [config_from(name, options.settings) for name in options.strategies]
        pairs = [parse_spec(s) for s in options.compare] if options.compare else []
    except UnknownStrategy as exc:
        raise BenchError(str(exc)) from None
    except ValidationError as exc:
        raise BenchError(validation_message(exc)) from None
    except ValueError as exc:
        raise BenchError(str(exc)) from None
    labels = [",".join([c.strategy, *options.settings]) for c in configs]
    return Parsed(list(zip(labels, configs, strict=True)), pairs)


def _is_meta(options: BenchOptions) -> bool:
    return options.corpus == "mq2008" and options.protocol == "metasearch"


@dataclass
class Job:
    """One ``serpfuse bench`` call: the options, their parsed configurations, the progress bar, and the corpus's
    Bench with its lead metric (built and checked together on first use of either, so a mode that needs neither
    never loads the corpus)."""

    options: BenchOptions
    parsed: Parsed
    progress: ProgressFactory = quiet

    @cached_property
    def _bench_and_metric(self) -> tuple[Bench, MetricSpec]:
        bench = CORPORA[self.options.corpus](self.options)
        lead = self.options.metric or bench.primary
        spec = next((s for s in bench.metrics if s.name == lead and s.agg != "ratio"), None)
        if spec is None:
            names = ", ".join(s.name for s in bench.metrics if s.agg != "ratio")
            raise BenchError(f"unknown metric {lead!r} for {bench.name}; choose one of: {names}")
        return bench, spec

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
    run: Callable[[Job], Outcome]
    check: Callable[[BenchOptions, Parsed], None] = lambda options, parsed: None


def run_one(bench: Bench, label: str, config: RankingConfig, progress: ProgressFactory) -> Single:
    with progress(bench.queries * (1 + bench.reference_runs)) as tracker:
        references = bench.references(tracker.step, set())
        report = bench.run(label, config, tracker.step)
    report.notes.extend(bench.notes)
    return Single(bench, report, references)


def run_many(bench: Bench, runs: list[tuple[str, RankingConfig]], progress: ProgressFactory) -> Many:
    with progress(bench.queries * (len(runs) + bench.reference_runs)) as tracker:
        references = bench.references(tracker.step, {label for label, _ in runs})
        reports = [bench.run(label, config, tracker.step) for label, config in runs]
    return Many(bench, reports, references)


def run_compare(
    bench: Bench, pairs: list[tuple[str, RankingConfig | None]], metric: str, progress: ProgressFactory
) -> Compared:
    def run(label: str, config: RankingConfig | None, tick) -> BenchReport:
        if config is None and bench.named is not None:
            return bench.named(label, tick)
        return bench.run(label, config, tick)

    with progress(bench.queries * 2) as tracker:
        a, b = (run(label, config, tracker.step) for label, config in pairs)
    return Compared(bench, compare(a, b, metric))


def run_sweep(
    bench: Bench,
    config: RankingConfig,
    metric: MetricSpec,
    grid_items: Sequence[str],
    settings: Sequence[str],
    progress: ProgressFactory,
) -> Swept:
    try:
        grid = grid_of(config.strategy, grid_items)
        default = {knob: current_value(config, knob) for knob in grid}
        for knob, values in grid.items():  # every value must validate before hours of work
            for value in values:
                apply_settings(config, [f"{knob}={json.dumps(value)}"])
    except (KeyError, ValueError, ValidationError) as exc:
        raise BenchError(f"bad grid: {exc}".splitlines()[0]) from None
    points = 1
    for values in grid.values():
        points *= len(values)

    with progress(bench.queries * (points + 1)) as tracker:

        def evaluate(point: dict[str, Any]) -> list[float]:
            point_config = apply_settings(
                config, [*settings, *(f"{k}={json.dumps(v)}" for k, v in point.items())]
            )
            report = bench.run(config.strategy, point_config, tracker.step)
            return [q.values[metric.name] for q in report.per_query if metric.name in q.values]

        tracker.describe(f"sweep {points} points")
        result = sweep(grid, default, evaluate, metric=metric.name, higher_is_better=metric.higher_is_better)
    return Swept(result)


def run_subsets(
    options: BenchOptions, runs: list[tuple[str, RankingConfig]], progress: ProgressFactory
) -> Tables:
    """MQ2008 metasearch: issue 4's three setups plus N random ranker subsets; each run's gap to the best
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


def _check_subsets(options: BenchOptions, parsed: Parsed) -> None:
    if not _is_meta(options):
        raise BenchError("--random-subsets runs on --corpus mq2008 (metasearch protocol)")
    if options.compare or options.sweep:
        raise BenchError("--random-subsets, --compare and --sweep are separate runs: choose one")
    if options.rankers or options.depth is not None:
        raise BenchError("--random-subsets draws its own rankers and depths: drop --rankers and --depth")


def _every_ranker(job: Job) -> tuple[list[tuple[str, RankingConfig]], str]:
    """The robustness benches' runs: the --strategy ones, or every ranker when none is named, then plain RRF
    (issue 8's reference); and the default ranker's label."""
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


def _check_misspelled(options: BenchOptions, parsed: Parsed) -> None:
    _alone("--misspelled", options)
    if options.corpus != "crw56":
        raise BenchError("--misspelled runs on --corpus crw56 (--split dev judged; test or all label-free)")


def _check_garbage(options: BenchOptions, parsed: Parsed) -> None:
    _alone("--garbage-engine", options)
    if options.corpus not in ("crw56", "mq2008") or (options.corpus == "mq2008" and not _is_meta(options)):
        raise BenchError("--garbage-engine runs on --corpus crw56 or --corpus mq2008 (metasearch protocol)")


def _run_garbage(job: Job) -> Outcome:
    from serpfuse.bench import label_free, robustness

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


def _check_generic(options: BenchOptions, parsed: Parsed) -> None:
    _alone("--generic-rows", options)
    if options.corpus != "crw56":
        raise BenchError("--generic-rows runs on --corpus crw56 (--split dev judged; test or all label-free)")


def _run_generic(job: Job) -> Outcome:
    from serpfuse.bench import label_free, robustness

    runs, default = _every_ranker(job)
    if job.options.split != "dev":  # the unseen half has no judgments here: count the injected rows
        return label_free.run_generic(
            job.options.root, job.options.generic_rows, job.options.split, runs, default, job.progress
        )
    return robustness.run_generic_crw56(
        job.options.root, job.options.generic_rows, runs, default, job.progress
    )


def _check_signal_cost(options: BenchOptions, parsed: Parsed) -> None:
    others = options.compare or options.sweep or options.random_subsets is not None or options.garbage_engine
    others = others or options.misspelled or options.generic_rows is not None or options.perf
    if others or options.strategies != [None] or options.settings:
        raise BenchError(
            "--signal-cost measures the default configuration's ranking step: drop the other options"
        )
    if options.corpus != "crw56":
        raise BenchError("--signal-cost runs on the crw56 replay (--corpus crw56)")


def _run_signal_cost(job: Job) -> Outcome:
    from serpfuse.bench import signal_cost

    path = job.options.root / signal_cost.RECORDING
    if not path.is_file():
        raise BenchError(f"crw56 file missing: {path}")
    queries = len(signal_cost.recorded_queries(job.options.root))
    with job.progress(queries) as tracker:
        tracker.describe(f"{queries} queries, default and signals off, {job.options.perf_repeat} rounds")
        result = signal_cost.measure(job.options.root, job.options.perf_repeat, tracker.step)
    return signal_cost.table(result)


def _run_misspelled(job: Job) -> Outcome:
    from serpfuse.bench import label_free, robustness

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


def run_perf(options: BenchOptions, progress: ProgressFactory) -> Outcome:
    from serpfuse.bench.perf import PerfOutcome, measure

    trees = 2 if options.perf_baseline else 1
    with progress(options.perf_repeat * trees) as tracker:

        def step(text: str) -> None:
            tracker.describe(text)
            tracker.step()

        rows, peak = measure(
            options.root, repeat=options.perf_repeat, baseline=options.perf_baseline, progress=step
        )
    return PerfOutcome(rows, peak)


def _check_common(options: BenchOptions, parsed: Parsed) -> None:
    """What no mode accepts, in the order the caller is told."""
    meta = _is_meta(options)
    for label, config in parsed.pairs:
        if config is None and label.strip() == BASELINE and options.corpus != "crw56":
            raise BenchError("'baseline' (SearXNG's own order) exists only for --corpus crw56")
        if config is None and label.strip() != BASELINE and not meta:
            raise BenchError(
                f"{label.strip()!r} (one ranker's own list) exists only for --corpus mq2008 (metasearch)"
            )
    if options.compare and options.sweep:
        raise BenchError("--compare and --sweep are separate runs: choose one")
    if len(parsed.runs) > 1 and (options.compare or options.sweep):
        raise BenchError("--compare and --sweep take one strategy")
    if options.random_subsets is None and options.seed is not None:
        raise BenchError("--seed goes with --random-subsets")


def _extraction(options: BenchOptions) -> Outcome:
    from serpfuse.bench.extraction import run_bench

    return run_bench(options)


# Corpora that score something other than a ranking configuration run on their own, before configs are parsed.
OWN_RUNNERS: dict[str, Callable[[BenchOptions], Outcome]] = {"article-extraction": _extraction}


def run(options: BenchOptions, progress: ProgressFactory = quiet) -> Outcome:
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
