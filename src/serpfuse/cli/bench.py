"""`serpfuse bench`: run ranking configurations over a corpus with judgments and report how good they are.

    serpfuse bench                                   # crw56 dev, the default ranker, beside SearXNG's own order
    serpfuse bench --strategy rrf --set rrf.rrf_constant=40
    serpfuse bench --compare baseline consensus      # per-query deltas and a paired bootstrap 95 % interval
    serpfuse bench --sweep --strategy rrf            # seed 000's grid: marginal means against the defaults
    serpfuse bench --corpus mq2008 --rankers 1-5 --depth 10
    serpfuse bench --corpus mq2008 --compare single:9 adaptive --rankers 2,7,9,12,16,21,25
    serpfuse bench --corpus mq2008 --random-subsets 14 --strategy all   # robustness over engine subsets
    serpfuse bench --json                            # machine-readable, for version diffs

A configuration is written ``NAME[,section.knob=value...]`` (``--compare``) or ``--strategy NAME`` plus
``--set section.knob=value`` (repeatable); values are JSON (``3``, ``0.25``, ``true``, ``"text"``) or bare text.
For crw56, ``baseline`` names SearXNG's own order; for MQ2008's metasearch protocol, ``single:N`` names ranker
N's own list. The corpora live in ``--data`` or $SERPFUSE_DATA (default ../shared/data).
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError

from ..bench import crw56
from ..bench import mq2008 as mq
from ..bench.report import (
    BenchReport,
    MetricSpec,
    QueryScore,
    ShownRow,
    _md,
    aggregate,
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
    worst_queries,
)
from ..bench.stats import sweep
from ..config import RankingConfig
from ..rankers import UnknownStrategy, available, get_ranker
from .errors import fail, validation_message

DATA_ENV = "SERPFUSE_DATA"
DEFAULT_DATA = Path("../shared/data")
DEPTH = 20  # mq2008 metasearch: rows each engine shows, issue 4's main setup

# Seed 000's sweep grid for rrf (27 points); a small one for consensus. Any ranker can be swept with --grid.
DEFAULT_GRIDS: dict[str, dict[str, list[Any]]] = {
    "rrf": {
        "rrf.rrf_constant": [40, 60, 80],
        "rrf.authority_boost": [0.1, 0.25, 0.4],
        "rrf.freshness_boost": [0.1, 0.2, 0.35],
    },
    "consensus": {
        "consensus.kappa": [5, 10, 20],
        "consensus.diversity_penalty": [0.05, 0.15, 0.3],
        "consensus.sparse_domain_cap": [1, 2, 3],
    },
}


class Corpus(StrEnum):
    crw56 = "crw56"
    mq2008 = "mq2008"
    consensus = "consensus"


class Split(StrEnum):
    dev = "dev"
    test = "test"
    all = "all"


class Protocol(StrEnum):
    metasearch = "metasearch"
    classic = "classic"


# --- configurations ------------------------------------------------------------------------------------------


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def parse_setting(item: str) -> tuple[list[str], Any]:
    """``section.knob=value`` -> (["section", "knob"], value); the value is JSON when it parses, else text."""
    path, sep, raw = item.partition("=")
    if not sep or not path.strip():
        raise ValueError(f"--set wants section.knob=value, got {item!r}")
    try:
        value = json.loads(raw)
    except ValueError:
        value = raw
    return [_snake(p.strip()) for p in path.split(".")], value


def apply_settings(config: RankingConfig, settings: Sequence[str]) -> RankingConfig:
    """A new, validated config with each setting applied (an unknown knob is a validation error)."""
    data = config.model_dump()
    for item in settings:
        path, value = parse_setting(item)
        node = data
        for part in path[:-1]:
            if not isinstance(node.get(part), dict):
                raise ValueError(f"unknown configuration section {'.'.join(path[:-1])!r} in {item!r}")
            node = node[part]
        if not isinstance(node, dict):
            raise ValueError(f"cannot set {item!r}")
        node[path[-1]] = value
    return RankingConfig.model_validate(data)


def config_from(strategy: str | None, settings: Sequence[str] = ()) -> RankingConfig:
    config = RankingConfig()
    config = config.with_strategy(strategy) if strategy else config
    get_ranker(config.strategy)  # UnknownStrategy before any work
    return apply_settings(config, settings)


SINGLE_SPEC = re.compile(r"^single:(\d+)$")  # --compare on MQ2008: one ranker's own list, e.g. single:9


def parse_spec(spec: str) -> tuple[str, RankingConfig | None]:
    """``NAME[,section.knob=value...]`` -> (label, config); ``baseline`` or ``single:N`` -> (label, None)."""
    name, *settings = [part.strip() for part in spec.split(",") if part.strip()]
    if name == crw56.BASELINE:
        if settings:
            raise ValueError("the baseline takes no settings")
        return spec, None
    if SINGLE_SPEC.match(name):
        if settings:
            raise ValueError(f"{name} (one ranker's own list) takes no settings")
        return spec, None
    return spec, config_from(name, settings)


def data_root(data: Path | None) -> Path:
    root = data or Path(os.environ.get(DATA_ENV) or DEFAULT_DATA)
    if not root.is_dir():
        fail(f"data directory not found: {root} (use --data or set {DATA_ENV})")
    return root


# --- corpora as benches --------------------------------------------------------------------------------------


@dataclass
class Bench:
    """A corpus with one protocol: how to run a configuration, what to show beside it, which metric leads."""

    name: str
    primary: str
    headline: tuple[str, ...]
    metrics: list[MetricSpec]
    queries: int  # per run, for the progress bar
    run: Callable[[str, RankingConfig | None, Callable[[], None] | None], BenchReport]
    # what to show beside the runs (a label in ``skip`` is one of the runs already)
    references: Callable[[Callable[[], None] | None, set[str]], list[BenchReport]] = lambda progress, skip: []
    reference_runs: int = 0
    notes: list[str] = field(default_factory=list)
    # a reference --compare can name (``single:N`` on MQ2008); None: only ``baseline`` (crw56's run(label, None))
    named: Callable[[str, Callable[[], None] | None], BenchReport] | None = None


def crw56_bench(root: Path, split: str, unjudged_irrelevant: bool, per_engine: bool = True) -> Bench:
    try:
        corpus = crw56.load_crw56(root)
    except crw56.CorpusError as exc:
        fail(str(exc))
    runner = crw56.PipelineRunner(corpus)

    def run(label: str, config: RankingConfig | None, progress) -> BenchReport:
        return crw56.run(
            corpus,
            config,
            split,
            label=label,
            per_engine=per_engine and config is not None,
            unjudged_irrelevant=unjudged_irrelevant,
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
    """Every MQ2008-agg query under ``root``, or exit 2 saying what is missing or unreadable."""

    folder = root / "mq2008-agg"
    if not folder.is_dir():
        fail(f"MQ2008-agg not found: {folder}")
    try:
        return mq.queries_of(mq.load_mq2008(folder))
    except (ValueError, OSError) as exc:
        fail(str(exc).splitlines()[0])


def mq2008_bench(root: Path, protocol: str, rankers_text: str | None, depth: int) -> Bench:

    try:
        rankers = parse_rankers(rankers_text, mq.RANKERS)
    except ValueError as exc:
        fail(str(exc))
    queries = load_mq2008_queries(root)
    subset_of = {qid: q.subset for qid, q in queries.items()}
    text_of = {qid: f"MQ2008 {qid}" for qid in queries}
    engines = compact_ranges(rankers)
    split = f"{protocol} · rankers {engines}" + (f" · depth {depth}" if protocol == "metasearch" else "")

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

    if protocol == "classic":

        def classic_scores(run_fn, progress) -> list[QueryScore]:
            from ..bench import metrics as m

            scores = []
            for qid, q in queries.items():
                ranked = m.order_by_score(run_fn(q))
                values = {
                    "MAP": m.average_precision(ranked, q.grades),
                    "P@10": m.precision_at(ranked, q.grades, 10),
                }
                rows = [ShownRow(d, d, grade=q.grades.get(d)) for d in ranked[:10]]
                scores.append(QueryScore(qid, text_of[qid], values, {"subset": subset_of[qid]}, rows))
                if progress:
                    progress()
            return scores

        def strategy_run(config: RankingConfig):
            from ..fusion import fuse_lists

            def run_fn(q):
                lists = {mq.engine_name(r): q.ranking(r) for r in rankers if q.ranking(r)}
                return fuse_lists(lists, config.strategy, config)

            return run_fn

        def run_classic(label: str, config: RankingConfig | None, progress) -> BenchReport:
            config = config or RankingConfig()
            return report(
                label,
                config.fingerprint(),
                classic_scores(strategy_run(config), progress),
                MQ_CLASSIC_METRICS,
            )

        def classic_references(progress, skip: set[str]) -> list[BenchReport]:
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

    judged = {qid: q for qid, q in queries.items() if q.has_relevant}

    def meta_scores(fuser, progress) -> list[QueryScore]:
        scores = []
        for qid, q in judged.items():
            ranked = list(fuser(mq.shown_lists(q, rankers, depth)))[: mq.CUTOFF]
            ndcg, precision, rr = mq.score_ranked(ranked, q.grades)
            rows = [ShownRow(d, d, grade=q.grades.get(d)) for d in ranked]
            values = {"nDCG@8": ndcg, "P@8": precision, "MRR@8": rr}
            scores.append(QueryScore(qid, text_of[qid], values, {"subset": subset_of[qid]}, rows))
            if progress:
                progress()
        return scores

    singles: dict[int, list[QueryScore]] = {}  # each ranker alone does not depend on the configuration

    def single(ranker: int, progress=None) -> list[QueryScore]:
        if ranker not in singles:
            singles[ranker] = meta_scores(mq.single_fuser(ranker), progress)
        return singles[ranker]

    def run_meta(label: str, config: RankingConfig | None, progress) -> BenchReport:
        config = config or RankingConfig()
        scores = meta_scores(mq.strategy_fuser(config.strategy, config), progress)
        out = report(label, config.fingerprint(), scores, MQ_METRICS)
        for r in rankers:
            out.per_engine[mq.engine_name(r)] = aggregate(single(r), MQ_METRICS)
        return out

    def named_single(label: str, progress) -> BenchReport:
        match = SINGLE_SPEC.match(label.strip())
        if not match or int(match[1]) not in rankers:
            fail(f"{label!r}: --compare names one ranker of the setup as single:N, N among {engines}")
        return report(label, "reference", single(int(match[1]), progress), MQ_METRICS)

    def meta_references(progress, skip: set[str]) -> list[BenchReport]:
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


def consensus_bench(root: Path) -> Bench:
    """consensus-v2.1's frozen fused baselines (``bench.consensus_frozen``): agreement with the reference lists."""
    from ..bench import consensus_frozen

    folder = root / "consensus-v2.1"
    if not folder.is_dir():
        fail(f"consensus-v2.1 baselines not found: {folder}")
    try:
        cases = consensus_frozen.load_cases(folder)
    except (ValueError, OSError) as exc:
        fail(str(exc).splitlines()[0])

    def run(label: str, config: RankingConfig | None, progress) -> BenchReport:
        return consensus_frozen.run(cases, config or RankingConfig(strategy="consensus"), label, progress)

    return Bench(
        name="consensus",
        primary=consensus_frozen.PRIMARY,
        headline=tuple(s.name for s in consensus_frozen.METRICS),
        metrics=consensus_frozen.METRICS,
        queries=len(cases),
        run=run,
    )


# --- progress and output -------------------------------------------------------------------------------------


class Progress:
    """A rich progress bar on stderr for runs longer than a blink; silent when stderr is not a terminal."""

    def __init__(self, total: int, enabled: bool):
        self.total = total
        self.enabled = enabled and sys.stderr.isatty()
        self._progress = None
        self._task = None

    def __enter__(self) -> Progress:
        if self.enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._progress = Progress(
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
        if self._progress is not None:
            self._progress.update(self._task, description=text)

    def step(self) -> None:
        if self._progress is not None:
            self._progress.advance(self._task)

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.__exit__(None, None, None)


def _console():
    from rich.console import Console

    return Console(width=max(120, Console().width))


def _print_json(payload: Any) -> None:
    sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False, default=str) + "\n")


def _print_text(text: str) -> None:
    sys.stdout.write(text.rstrip("\n") + "\n")


def _grid(strategy: str, grid_items: Sequence[str]) -> dict[str, list[Any]]:
    if not grid_items:
        if strategy not in DEFAULT_GRIDS:
            raise ValueError(
                f"no default grid for {strategy!r}: give --grid section.knob=v1,v2,... (repeatable)"
            )
        return DEFAULT_GRIDS[strategy]
    grid: dict[str, list[Any]] = {}
    for item in grid_items:
        knob, sep, values = item.partition("=")
        if not sep or not values:
            raise ValueError(f"--grid wants section.knob=v1,v2,..., got {item!r}")
        grid[knob.strip()] = [parse_setting(f"x={v.strip()}")[1] for v in values.split(",")]
    return grid


def _current(config: RankingConfig, knob: str) -> Any:
    node: Any = config.model_dump()
    for part in knob.split("."):
        node = node[_snake(part)]
    return node


def register(app: typer.Typer) -> None:
    @app.command("bench")
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
        do_sweep: Annotated[
            bool, typer.Option("--sweep", help="grid over the knobs; marginal means")
        ] = False,
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
        protocol: Annotated[
            Protocol, typer.Option("--protocol", help="mq2008 protocol")
        ] = Protocol.metasearch,
        rankers: Annotated[
            str | None, typer.Option("--rankers", help="mq2008: e.g. 1-5 or 2,7,9 (default all)")
        ] = None,
        depth: Annotated[
            int | None,
            typer.Option(
                "--depth", min=1, help=f"mq2008 metasearch: rows each engine shows (default {DEPTH})"
            ),
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
        data: Annotated[
            Path | None, typer.Option("--data", help=f"data directory (default ${DATA_ENV})")
        ] = None,
    ) -> None:
        """Measure ranking quality on a judged corpus: overall, per group, per engine, worst queries."""
        root = data_root(data)
        names = strategy_names(strategy)
        try:
            configs = [config_from(name, settings or []) for name in names]
            config = configs[0]
            pairs = [parse_spec(s) for s in compare_specs] if compare_specs else []
        except UnknownStrategy as exc:
            fail(str(exc))
        except ValidationError as exc:
            fail(validation_message(exc))
        except ValueError as exc:
            fail(str(exc))
        meta = corpus is Corpus.mq2008 and protocol is Protocol.metasearch
        for label, config in pairs:
            if config is None and label.strip() == crw56.BASELINE and corpus is not Corpus.crw56:
                fail("'baseline' (SearXNG's own order) exists only for --corpus crw56")
            if config is None and label.strip() != crw56.BASELINE and not meta:
                fail(
                    f"{label.strip()!r} (one ranker's own list) exists only for --corpus mq2008 (metasearch)"
                )
        if as_json and as_markdown:
            fail("--json and --markdown are two output formats: choose one")
        output = "json" if as_json else "markdown" if as_markdown else "table"
        if compare_specs and do_sweep:
            fail("--compare and --sweep are separate runs: choose one")
        if len(configs) > 1 and (compare_specs or do_sweep):
            fail("--compare and --sweep take one strategy")
        labels = [",".join([c.strategy, *(settings or [])]) for c in configs]
        if random_subsets is None and seed is not None:
            fail("--seed goes with --random-subsets")
        if random_subsets is not None:
            if not meta:
                fail("--random-subsets runs on --corpus mq2008 (metasearch protocol)")
            if compare_specs or do_sweep:
                fail("--random-subsets, --compare and --sweep are separate runs: choose one")
            if rankers or depth is not None:
                fail("--random-subsets draws its own rankers and depths: drop --rankers and --depth")
            runs = list(zip(labels, configs, strict=True))
            _run_subsets(root, runs, random_subsets, seed, output)
            return

        if corpus is Corpus.crw56:
            bench = crw56_bench(root, split.value, not judged_only)
        elif corpus is Corpus.mq2008:
            bench = mq2008_bench(root, protocol.value, rankers, DEPTH if depth is None else depth)
        else:
            bench = consensus_bench(root)
        lead = metric or bench.primary
        lead_spec = next((s for s in bench.metrics if s.name == lead and s.agg != "ratio"), None)
        if lead_spec is None:
            names = ", ".join(s.name for s in bench.metrics if s.agg != "ratio")
            fail(f"unknown metric {lead!r} for {bench.name}; choose one of: {names}")

        if pairs:
            _run_compare(bench, pairs, lead, output)
        elif do_sweep:
            _run_sweep(bench, config, lead_spec, grid_items or [], settings or [], output)
        elif len(configs) > 1:
            _run_many(bench, list(zip(labels, configs, strict=True)), output)
        else:
            _run_one(bench, labels[0], config, output)


def strategy_names(text: str | None) -> list[str | None]:
    """``None`` (the default ranker), one name, ``a,b,c`` or ``all``."""
    if not text:
        return [None]
    if text == "all":
        return list(available())
    return [name.strip() for name in text.split(",") if name.strip()] or [None]


def _run_one(bench: Bench, label: str, config: RankingConfig, output: str) -> None:
    with Progress(bench.queries * (1 + bench.reference_runs), output == "table") as progress:
        references = bench.references(progress.step, set())
        report = bench.run(label, config, progress.step)
    report.notes.extend(bench.notes)
    if output == "json":
        _print_json(
            {"report": report.to_json(with_rows=True), "references": [r.to_json() for r in references]}
        )
    elif output == "markdown":
        _print_text(markdown_report(report, extra=references, names=bench.headline))
    else:
        render_report(_console(), report, extra=references, names=bench.headline)


def _run_many(bench: Bench, runs: list[tuple[str, RankingConfig]], output: str) -> None:
    """Several configurations in one summary table (per-group and worst-query tables need a single run)."""
    with Progress(bench.queries * (len(runs) + bench.reference_runs), output == "table") as progress:
        references = bench.references(progress.step, {label for label, _ in runs})
        reports = [bench.run(label, config, progress.step) for label, config in runs]
    if output == "json":
        _print_json(
            {"reports": [r.to_json() for r in reports], "references": [r.to_json() for r in references]}
        )
        return
    first = reports[0]
    specs = [s for s in first.metrics if s.name in bench.headline and s.name in first.summary]
    if output == "markdown":
        parts = [markdown_summary([*references, *reports], bench.headline)]
        if first.per_engine:
            parts.append(
                "Per engine (each engine's own list alone):\n\n"
                + markdown_rows("engine", first.per_engine, specs)
            )
        _print_text("\n\n".join(parts))
        return
    console = _console()
    console.print(summary_table([*references, *reports], f"{first.corpus} · {first.split}", bench.headline))
    if first.per_engine:
        console.print(
            rows_table("per engine (each engine's own list alone)", "engine", first.per_engine, specs)
        )
    for note in bench.notes:
        console.print(f"[dim]note: {note}[/dim]")


def _run_compare(
    bench: Bench, pairs: list[tuple[str, RankingConfig | None]], metric: str, output: str
) -> None:
    def run(label: str, config: RankingConfig | None, progress) -> BenchReport:
        if config is None and bench.named is not None:
            return bench.named(label, progress)
        return bench.run(label, config, progress)

    with Progress(bench.queries * 2, output == "table") as progress:
        a, b = (run(label, config, progress.step) for label, config in pairs)
    result = compare(a, b, metric)
    if output == "json":
        _print_json(comparison_json(result))
    elif output == "markdown":
        _print_text(markdown_comparison(result))
    else:
        render_comparison(_console(), result, names=bench.headline)


def _run_sweep(
    bench: Bench,
    config: RankingConfig,
    metric: MetricSpec,
    grid_items: Sequence[str],
    settings: Sequence[str],
    output: str,
) -> None:
    try:
        grid = _grid(config.strategy, grid_items)
        default = {knob: _current(config, knob) for knob in grid}
        for knob, values in grid.items():  # every value must validate before hours of work
            for value in values:
                apply_settings(config, [f"{knob}={json.dumps(value)}"])
    except (KeyError, ValueError, ValidationError) as exc:
        fail(f"bad grid: {exc}".splitlines()[0])
    points = 1
    for values in grid.values():
        points *= len(values)

    def evaluate(point: dict[str, Any]) -> list[float]:
        point_config = apply_settings(
            config, [*settings, *(f"{k}={json.dumps(v)}" for k, v in point.items())]
        )
        report = bench.run(config.strategy, point_config, progress.step)
        return [q.values[metric.name] for q in report.per_query if metric.name in q.values]

    with Progress(bench.queries * (points + 1), output == "table") as progress:
        progress.describe(f"sweep {points} points")
        result = sweep(grid, default, evaluate, metric=metric.name, higher_is_better=metric.higher_is_better)
    if output == "json":
        _print_json(sweep_json(result))
    elif output == "markdown":
        _print_text(markdown_sweep(result))
    else:
        render_sweep(_console(), result)


# --- robustness over engine subsets (MQ2008 metasearch) ------------------------------------------------------


def _subset_tables(
    results: Sequence[mq.SubsetResult], labels: Sequence[str], strong: Callable[[str], str]
) -> tuple[tuple[list[str], list[list[str]]], tuple[list[str], list[list[str]]]]:
    """(header, rows) of the per-subset table and of the summary; ``strong`` marks each subset's best baseline."""

    rows = []
    for r in results:
        best_name, best = r.best_baseline
        cells = []
        for name in mq.BASELINES:
            text = f"{r.baselines[name]:.4f}" + (f" (r{r.best_single})" if name == mq.BEST_SINGLE else "")
            cells.append(strong(text) if name == best_name else text)
        for label in labels:
            value = r.strategies[label]
            cells.append(f"{value:.4f} ({mq.gap_percent(value, best):+.2f} %)")
        rows.append([r.name, f"{compact_ranges(r.rankers)}@{r.depth}", *cells])
    per_subset = (["subset", "engines@depth", *mq.BASELINES, *labels], rows)
    summaries = mq.subset_summaries(results, labels)
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
    summary = (["method", "mean gap", "worst gap", "best gap", "at or above best"], summary_rows)
    return per_subset, summary


def _run_subsets(
    root: Path, runs: list[tuple[str, RankingConfig]], count: int, seed: int | None, output: str
) -> None:

    queries = load_mq2008_queries(root)
    seed = mq.SUBSET_SEED if seed is None else seed
    setups = [*mq.REFERENCE_SETUPS, *mq.random_setups(count, seed)]
    labels = [label for label, _ in runs]
    total = sum(3 + len(s.rankers) + len(runs) for s in setups)
    with Progress(total, output == "table") as progress:
        progress.describe(f"{len(setups)} setups")
        results = mq.evaluate_subsets(queries, setups, runs, progress.step)
    note = (
        f"Gap: nDCG@8 relative to the best of {', '.join(mq.BASELINES)} on each subset, chosen in hindsight "
        f"(bold). {len(setups)} subsets: the 3 reference setups and {count} random ones "
        f"(sizes 3-10, depth 10 or 20, seed {seed})."
    )
    if output == "json":
        summaries = mq.subset_summaries(results, labels)
        _print_json(
            {
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
        )
        return
    if output == "markdown":
        (head, rows), (shead, srows) = _subset_tables(results, labels, lambda t: f"**{t}**")
        _print_text("\n\n".join([_md(head, rows, right_from=2), _md(shead, srows), note]))
        return
    from rich.table import Table

    console = _console()
    for title, (head, rows) in zip(
        ("nDCG@8 per subset (gap to the best baseline)", "summary over the subsets"),
        _subset_tables(results, labels, lambda t: f"[bold]{t}[/bold]"),
        strict=True,
    ):
        table = Table(title=title)
        text_columns = 2 if "engines@depth" in head else 1
        for i, name in enumerate(head):
            table.add_column(name, justify="left" if i < text_columns else "right")
        for row in rows:
            table.add_row(*row)
        console.print(table)
    console.print(f"[dim]{note}[/dim]")
