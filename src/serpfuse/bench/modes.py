"""How a bench runs: a ``Bench`` (how to run a ranking configuration on judged queries, what to show beside it,
which metric leads) and the four ways to run one: one configuration beside the references, several in one
table, two compared per query with a paired bootstrap, or a grid sweep.

A run gives a ``BenchOutcome`` that can be shown three ways (JSON, Markdown, rich tables); ``serpfuse bench`` only
parses options, asks ``run`` and prints.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import ValidationError

from serpfuse.bench.config_specs import apply_settings, config_from, current_value, grid_of, parse_spec
from serpfuse.bench.report import (
    BenchReport,
    Comparison,
    MetricSpec,
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
from serpfuse.bench.sweep import Sweep, sweep
from serpfuse.config import RankingConfig
from serpfuse.errors import InputError
from serpfuse.ranking.rankers import UnknownStrategy
from serpfuse.settings import validation_message


class BenchError(InputError):
    """The caller's mistake or missing data, said in one line (the CLI exits 2 with it)."""


class Tracker(Protocol):
    def step(self) -> None: ...
    def describe(self, text: str) -> None: ...


class _Quiet:
    def step(self) -> None:
        pass

    def describe(self, text: str) -> None:
        pass


ProgressFactory = Callable[[int], AbstractContextManager[Tracker]]
Tick = Callable[[], None] | None  # a progress tick per query run


def quiet(total: int) -> AbstractContextManager[Tracker]:
    """No progress shown (tests, and any output that is not a terminal table)."""
    return nullcontext(_Quiet())


class BenchOutcome(Protocol):
    """A finished bench run, shown as JSON (``to_json``), Markdown (``markdown``) or rich tables (``render``)."""

    def to_json(self) -> Any: ...
    def markdown(self) -> str: ...
    def render(self, console) -> None: ...


@dataclass
class Bench:
    """Judged queries with one protocol: how to run a configuration, what to show beside it, which metric
    leads."""

    name: str
    primary: str
    headline: tuple[str, ...]
    metrics: list[MetricSpec]
    queries: int  # per run, for the progress bar
    run: Callable[[str, RankingConfig | None, Tick], BenchReport]
    # what to show beside the runs (a label in ``skip`` is one of the runs already)
    references: Callable[[Tick, set[str]], list[BenchReport]] = lambda progress, skip: []
    reference_runs: int = 0
    notes: list[str] = field(default_factory=list)
    # a reference --compare can name beyond ``baseline`` (``run(label, None)``), e.g. one input list alone
    named: Callable[[str, Tick], BenchReport] | None = None

    def lead_metric(self, name: str | None) -> MetricSpec:
        """The metric --compare and --sweep use: ``name``, or the bench's primary one."""
        lead = name or self.primary
        spec = next((s for s in self.metrics if s.name == lead and s.agg != "ratio"), None)
        if spec is None:
            names = ", ".join(s.name for s in self.metrics if s.agg != "ratio")
            raise BenchError(f"unknown metric {lead!r} for {self.name}; choose one of: {names}")
        return spec


# --- outcomes ------------------------------------------------------------------------------------------------


@dataclass
class RunWithReferences:
    """One configuration's report with the references beside it: overall, per group, per engine, worst."""

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
class RunsSideBySide:
    """Several configurations' reports in one summary table (per-group and worst-query tables need one run)."""

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
class PairedComparison:
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
class SweepResult:
    """Marginal means over a grid and the best point against the default."""

    result: Sweep

    def to_json(self) -> Any:
        return sweep_json(self.result)

    def markdown(self) -> str:
        return markdown_sweep(self.result)

    def render(self, console) -> None:
        render_sweep(console, self.result)


# --- the configurations asked for ----------------------------------------------------------------------------


@dataclass
class ParsedConfigs:
    """The configurations asked for, validated once: (label, config) per strategy and the --compare pair
    (config None: a reference list such as ``baseline``)."""

    runs: list[tuple[str, RankingConfig]]
    pairs: list[tuple[str, RankingConfig | None]]


def parse_configs(
    strategies: Sequence[str | None],
    settings: Sequence[str],
    compare_specs: Sequence[str] | None,
    is_reference: Callable[[str], bool] | None = None,
) -> ParsedConfigs:
    """Every configuration validated before any work; a bad name, knob or value is a BenchError."""
    spec_args = {} if is_reference is None else {"is_reference": is_reference}
    try:
        configs = [config_from(name, settings) for name in strategies]
        pairs = [parse_spec(s, **spec_args) for s in compare_specs] if compare_specs else []
    except UnknownStrategy as exc:
        raise BenchError(str(exc)) from None
    except ValidationError as exc:
        raise BenchError(validation_message(exc)) from None
    except ValueError as exc:
        raise BenchError(str(exc)) from None
    labels = [",".join([c.strategy, *settings]) for c in configs]
    return ParsedConfigs(list(zip(labels, configs, strict=True)), pairs)


def check_runs(parsed: ParsedConfigs, compare: bool, do_sweep: bool) -> None:
    """What no run accepts: --compare with --sweep, or several strategies with either."""
    if compare and do_sweep:
        raise BenchError("--compare and --sweep are separate runs: choose one")
    if len(parsed.runs) > 1 and (compare or do_sweep):
        raise BenchError("--compare and --sweep take one strategy")


# --- the four runs -------------------------------------------------------------------------------------------


def run_one(bench: Bench, label: str, config: RankingConfig, progress: ProgressFactory) -> RunWithReferences:
    with progress(bench.queries * (1 + bench.reference_runs)) as tracker:
        references = bench.references(tracker.step, set())
        report = bench.run(label, config, tracker.step)
    report.notes.extend(bench.notes)
    return RunWithReferences(bench, report, references)


def run_many(
    bench: Bench, runs: list[tuple[str, RankingConfig]], progress: ProgressFactory
) -> RunsSideBySide:
    with progress(bench.queries * (len(runs) + bench.reference_runs)) as tracker:
        references = bench.references(tracker.step, {label for label, _ in runs})
        reports = [bench.run(label, config, tracker.step) for label, config in runs]
    return RunsSideBySide(bench, reports, references)


def run_compare(
    bench: Bench, pairs: list[tuple[str, RankingConfig | None]], metric: str, progress: ProgressFactory
) -> PairedComparison:
    def run(label: str, config: RankingConfig | None, tick) -> BenchReport:
        if config is None and bench.named is not None:
            return bench.named(label, tick)
        return bench.run(label, config, tick)

    with progress(bench.queries * 2) as tracker:
        a, b = (run(label, config, tracker.step) for label, config in pairs)
    return PairedComparison(bench, compare(a, b, metric))


def run_sweep(
    bench: Bench,
    config: RankingConfig,
    metric: MetricSpec,
    grid_items: Sequence[str],
    settings: Sequence[str],
    progress: ProgressFactory,
) -> SweepResult:
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
    return SweepResult(result)


def run_bench(
    bench: Bench,
    parsed: ParsedConfigs,
    *,
    do_sweep: bool = False,
    grid: Sequence[str] = (),
    settings: Sequence[str] = (),
    metric: str | None = None,
    progress: ProgressFactory = quiet,
) -> BenchOutcome:
    """--compare when a pair was given, else --sweep, else several configurations or one."""
    if parsed.pairs:
        return run_compare(bench, parsed.pairs, bench.lead_metric(metric).name, progress)
    if do_sweep:
        return run_sweep(bench, parsed.runs[0][1], bench.lead_metric(metric), grid, settings, progress)
    if len(parsed.runs) > 1:
        return run_many(bench, parsed.runs, progress)
    return run_one(bench, *parsed.runs[0], progress)
