"""``python -m benchmarks``: the research bench over the recorded corpora (run from the repository root).

    python -m benchmarks                                   # crw56 dev, the default ranker, beside SearXNG's order
    python -m benchmarks --strategy rrf --set rrf.rrf_constant=40
    python -m benchmarks --compare baseline adaptive      # per-query deltas and a paired bootstrap 95 % interval
    python -m benchmarks --sweep --strategy rrf           # the default grid: marginal means against the defaults
    python -m benchmarks --corpus mq2008 --rankers 1-5 --depth 10
    python -m benchmarks --corpus mq2008 --compare single:9 adaptive --rankers 2,7,9,12,16,21,25
    python -m benchmarks --corpus mq2008 --random-subsets 14 --strategy all   # robustness over engine subsets
    python -m benchmarks --misspelled                     # crw56 dev with one typo per query, every ranker
    python -m benchmarks --garbage-engine bing            # every ranker with one engine answering off-topic
    python -m benchmarks --corpus mq2008 --garbage-engine r9
    python -m benchmarks --generic-rows bing              # crw56 dev: bing's lists carry rows with only generic words
    python -m benchmarks --generic-rows bing --split all  # the same, label-free, on both halves (also --misspelled,
                                                          # --garbage-engine): the injected rows counted, no judgments
    python -m benchmarks --signal-cost --repeat 7         # what the content signals add to the ranking step (A/B)
    python -m benchmarks --perf                           # the performance table, measured now
    python -m benchmarks --corpus article-extraction      # the page reader against other extractors
    python -m benchmarks --json                           # machine-readable, for version diffs

A configuration is written ``NAME[,section.knob=value...]`` (``--compare``) or ``--strategy NAME`` plus
``--set section.knob=value`` (repeatable); values are JSON (``3``, ``0.25``, ``true``, ``"text"``) or bare text.
For crw56, ``baseline`` names SearXNG's own order; for MQ2008's metasearch protocol, ``single:N`` names ranker
N's own list. The corpora live in ``--data`` or $SERPFUSE_DATA (default ../shared/data).
"""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from benchmarks import mq2008 as mq
from benchmarks.runner import run
from benchmarks.setups import CORPORA, DATA_ENV, DEPTH, BenchOptions, data_root
from serpfuse.bench.config_specs import strategy_names
from serpfuse.bench.modes import BenchError
from serpfuse.cli.bench import BenchProgress, show
from serpfuse.ranking.rankers import available

Corpus = StrEnum("Corpus", {name: name for name in CORPORA})


class Split(StrEnum):
    dev = "dev"
    test = "test"
    all = "all"


class Protocol(StrEnum):
    metasearch = "metasearch"
    classic = "classic"


def fail(message: str) -> NoReturn:
    print(f"benchmarks: error: {message}", file=sys.stderr)
    raise SystemExit(2)


app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


@app.command()
def bench_command(
    corpus: Annotated[Corpus, typer.Option("--corpus", "-c", help="which judged corpus")] = Corpus.crw56,
    strategy: Annotated[
        str | None,
        typer.Option(
            "--strategy",
            "-s",
            help=f"ranker ({', '.join(available())}); several: a,b,c or all (one table)",
        ),
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
    do_sweep: Annotated[bool, typer.Option("--sweep", help="grid over the knobs; marginal means")] = False,
    grid_items: Annotated[
        list[str] | None, typer.Option("--grid", help="a swept knob, section.knob=v1,v2,... (repeatable)")
    ] = None,
    metric: Annotated[
        str | None,
        typer.Option("--metric", help="metric for --compare/--sweep (default: the corpus's lead)"),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable output")] = False,
    as_markdown: Annotated[
        bool, typer.Option("--markdown", help="Markdown tables (what BENCHMARKS.md shows)")
    ] = False,
    split: Annotated[Split, typer.Option("--split", help="crw56: dev (judged), test or all")] = Split.dev,
    judged_only: Annotated[
        bool, typer.Option("--judged-only", help="crw56: Irrelevant@5 ignores unjudged rows")
    ] = False,
    protocol: Annotated[Protocol, typer.Option("--protocol", help="mq2008 protocol")] = Protocol.metasearch,
    rankers: Annotated[
        str | None, typer.Option("--rankers", help="mq2008: e.g. 1-5 or 2,7,9 (default all)")
    ] = None,
    depth: Annotated[
        int | None,
        typer.Option("--depth", min=1, help=f"mq2008 metasearch: rows each engine shows (default {DEPTH})"),
    ] = None,
    random_subsets: Annotated[
        int | None,
        typer.Option(
            "--random-subsets",
            min=0,
            help="mq2008 metasearch: the 3 reference setups plus N random ranker subsets; each "
            "strategy's gap to the best baseline per subset",
        ),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option("--seed", help=f"--random-subsets: seed of the draw (default {mq.SUBSET_SEED})"),
    ] = None,
    misspelled: Annotated[
        bool,
        typer.Option(
            "--misspelled",
            help="crw56 dev: every ranker on the queries with one typo plus rows echoing it, against the "
            "correctly spelled run (--split test or all: label-free counts of the echo rows)",
        ),
    ] = False,
    garbage_engine: Annotated[
        str | None,
        typer.Option(
            "--garbage-engine",
            metavar="NAME",
            help="every ranker clean and with one engine off-topic (crw56: an engine's list for another "
            "query; mq2008: a ranker rN's list shuffled across queries)",
        ),
    ] = None,
    generic_rows: Annotated[
        str | None,
        typer.Option(
            "--generic-rows",
            metavar="NAME",
            help="crw56 dev: every ranker clean and with rows matching only the query's generic words at "
            "ranks 2-6 of one engine's lists (--split test or all: label-free counts of those rows)",
        ),
    ] = None,
    data: Annotated[Path | None, typer.Option("--data", help=f"data directory (default ${DATA_ENV})")] = None,
    perf: Annotated[
        bool, typer.Option("--perf", help="speed instead of quality: the performance table, measured now")
    ] = False,
    perf_baseline: Annotated[
        Path | None,
        typer.Option("--baseline", help="--perf: another checkout's src directory, measured beside this one"),
    ] = None,
    signal_cost: Annotated[
        bool,
        typer.Option(
            "--signal-cost",
            help="speed: what the content signals add to the ranking step on the crw56 replay (A/B, one process)",
        ),
    ] = False,
    perf_repeat: Annotated[
        int, typer.Option("--repeat", min=1, help="--perf, --signal-cost: repetitions")
    ] = 3,
    extractors: Annotated[
        str | None,
        typer.Option("--extractors", help="article-extraction: a,b,c (default: the main ones)"),
    ] = None,
) -> None:
    """Measure ranking quality (or speed) on a recorded research corpus."""
    if as_json and as_markdown:
        fail("--json and --markdown are two output formats: choose one")
    output = "json" if as_json else "markdown" if as_markdown else "table"
    try:
        options = BenchOptions(
            root=data_root(data),
            corpus=corpus.value,
            strategies=strategy_names(strategy),
            settings=settings or [],
            compare=compare_specs,
            sweep=do_sweep,
            grid=grid_items or [],
            metric=metric,
            split=split.value,
            judged_only=judged_only,
            protocol=protocol.value,
            rankers=rankers,
            depth=depth,
            random_subsets=random_subsets,
            seed=seed,
            misspelled=misspelled,
            garbage_engine=garbage_engine,
            generic_rows=generic_rows,
            perf=perf,
            perf_baseline=perf_baseline,
            perf_repeat=perf_repeat,
            signal_cost=signal_cost,
            extractors=[e.strip() for e in (extractors or "").split(",") if e.strip()],
        )
        outcome = run(options, lambda total: BenchProgress(total, output == "table"))
    except BenchError as exc:
        fail(str(exc))
    show(outcome, output)


def main() -> None:
    app()
