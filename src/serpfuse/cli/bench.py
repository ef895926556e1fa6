"""`serpfuse bench`: run ranking configurations over a recording with JSON Lines judgments and report how good
they are.

    serpfuse bench --replay REC.json --qrels JUDGED.jsonl                 # the default ranker (beside SearXNG's
                                                                          # own order for a SearXNG recording)
    serpfuse bench --replay REC --qrels J.jsonl --strategy rrf --set rrf.rrf_constant=40
    serpfuse bench --replay REC --qrels J.jsonl --strategy all            # every ranker, one table
    serpfuse bench --replay REC --qrels J.jsonl --compare baseline combmnz    # per-query deltas, paired bootstrap
    serpfuse bench --replay REC --qrels J.jsonl --sweep --strategy rrf    # a grid: marginal means, best vs default
    serpfuse bench --replay REC --qrels J.jsonl --json                    # machine-readable, per query
    serpfuse bench --replay REC --qrels J.jsonl --compare consensus consensus --weights W.toml  # learned weights

Judgments are one JSON object a line, ``{"query": "...", "url": "...", "rel": 0|1|2}``, matched to the recording by
query text and canonical URL. A configuration is written ``NAME[,section.knob=value...]`` (``--compare``) or
``--strategy NAME`` plus ``--set section.knob=value`` (repeatable); values are JSON (``3``, ``0.25``, ``true``,
``"text"``) or bare text. ``baseline`` names SearXNG's own order, which only a SearXNG recording has.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from serpfuse.cli.errors import fail, fail_on
from serpfuse.errors import SerpfuseError

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress as Bar
    from rich.progress import TaskID


class BenchProgress:
    """A rich progress bar on stderr for runs longer than a blink; silent when stderr is not a terminal."""

    def __init__(self, total: int, enabled: bool):
        self.total = total
        self.enabled = enabled and sys.stderr.isatty()
        self._progress: Bar | None = None
        self._task: TaskID | None = None

    def __enter__(self) -> BenchProgress:
        if self.enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
            from rich.progress import Progress as Bar

            self._progress = Bar(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self._progress.__enter__()
            self._task = self._progress.add_task("bench", total=self.total)
        return self

    def describe(self, text: str) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, description=text)

    def step(self) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.advance(self._task)

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.__exit__(None, None, None)


def _console() -> Console:
    from rich.console import Console

    return Console(width=max(120, Console().width))


def _clock(text: str | None) -> dt.datetime | None:
    if text is None:
        return None
    try:
        when = dt.datetime.fromisoformat(text)
    except ValueError:
        fail(f"--now wants an ISO date or date-time (2026-05-31), got {text!r}")
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)


def register(app: typer.Typer) -> None:
    @app.command("bench")
    def bench_command(
        replay: Annotated[
            Path, typer.Option("--replay", help="the recording (serpfuse record's or a SearXNG JSON list)")
        ],
        qrels: Annotated[
            Path, typer.Option("--qrels", help='judgments, JSON Lines: {"query", "url", "rel"} a line')
        ],
        strategy: Annotated[
            str | None,
            typer.Option("--strategy", "-s", help="ranker; several: a,b,c or all (one table)"),
        ] = None,
        settings: Annotated[
            list[str] | None, typer.Option("--set", help="a ranking knob, section.knob=value (repeatable)")
        ] = None,
        compare_specs: Annotated[
            tuple[str, str] | None,
            typer.Option(
                "--compare", help="two configurations A B (NAME[,section.knob=value...]); B - A per query"
            ),
        ] = None,
        do_sweep: Annotated[
            bool, typer.Option("--sweep", help="grid over the knobs; marginal means")
        ] = False,
        grid_items: Annotated[
            list[str] | None, typer.Option("--grid", help="a swept knob, section.knob=v1,v2,... (repeatable)")
        ] = None,
        metric: Annotated[
            str | None, typer.Option("--metric", help="metric for --compare/--sweep (default nDCG@8)")
        ] = None,
        judged_only: Annotated[
            bool, typer.Option("--judged-only", help="Irrelevant@5 ignores unjudged rows")
        ] = False,
        now: Annotated[
            str | None,
            typer.Option("--now", help="the clock freshness is judged against, ISO date (default: now)"),
        ] = None,
        weights: Annotated[
            Path | None,
            typer.Option(
                "--weights", help="engine weights, [ranking.weights] (calibrate's); with --compare: B's only"
            ),
        ] = None,
        as_json: Annotated[bool, typer.Option("--json", help="machine-readable output")] = False,
        as_markdown: Annotated[bool, typer.Option("--markdown", help="Markdown tables")] = False,
    ) -> None:
        """Measure ranking quality on a recording with judgments: overall, per group, per engine, worst queries."""
        from serpfuse.bench.config_specs import strategy_names
        from serpfuse.bench.judged_recording import RecordingBenchOptions, run

        if as_json and as_markdown:
            fail("--json and --markdown are two output formats: choose one")
        output = "json" if as_json else "markdown" if as_markdown else "table"
        if weights is not None:  # the file's weights as knobs, so the configuration's label names them
            knobs = [f"weights.{engine}={w:g}" for engine, w in _read_weights(weights).items()]
            if compare_specs:
                compare_specs = (compare_specs[0], ",".join([compare_specs[1], *knobs]))
            else:
                settings = [*(settings or []), *knobs]
        options = RecordingBenchOptions(
            replay=replay,
            qrels=qrels,
            strategies=strategy_names(strategy),
            settings=settings or [],
            compare=compare_specs,
            sweep=do_sweep,
            grid=grid_items or [],
            metric=metric,
            judged_only=judged_only,
            now=_clock(now),
        )
        try:
            outcome = run(options, lambda total: BenchProgress(total, output == "table"))
        except SerpfuseError as exc:
            fail_on(exc)
        show(outcome, output)


def _read_weights(path: Path) -> dict[str, float]:
    from serpfuse.settings import read_weights_file

    try:
        return read_weights_file(path)
    except SerpfuseError as exc:
        fail_on(exc)


def show(outcome: Any, output: str) -> None:
    """Print a bench outcome as JSON, Markdown or rich tables."""
    if output == "json":
        _print_json(outcome.to_json())
    elif output == "markdown":
        _print_text(outcome.markdown())
    else:
        outcome.render(_console())


def _print_json(payload: Any) -> None:
    sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False, default=str) + "\n")


def _print_text(text: str) -> None:
    sys.stdout.write(text.rstrip("\n") + "\n")
