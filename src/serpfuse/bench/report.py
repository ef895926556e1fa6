"""What every corpus's protocol returns, how it is summed up, and how it is shown (rich tables or JSON).

A protocol scores each query into a ``QueryScore`` whose ``values`` hold only the metrics that apply to it (a
query without a relevant row has no nDCG); ``aggregate`` then sums or averages each metric over the queries
that have it, as its ``MetricSpec`` says. Rendering never computes a number.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from serpfuse.bench.bootstrap import Bootstrap
from serpfuse.bench.sweep import Sweep

Aggregate = Literal["mean", "sum", "ratio"]


@dataclass(frozen=True)
class MetricSpec:
    name: str
    agg: Aggregate = "mean"
    higher_is_better: bool = True
    # for "ratio": sum(numerator) / sum(denominator), pooled over queries
    numerator: str = ""
    denominator: str = ""
    fmt: str = ".4f"
    doc: str = ""
    show: bool = True  # False for the bookkeeping counts a ratio is built from


@dataclass
class ShownRow:
    """One row a configuration showed, with what the judgments and the filters say about it."""

    docid: str
    url: str
    title: str = ""
    grade: int | None = None  # None = unjudged
    junk: bool = False
    covered: bool = True
    engines: tuple[str, ...] = ()


@dataclass
class QueryScore:
    qid: str
    query: str
    values: dict[str, float]
    groups: dict[str, str] = field(default_factory=dict)  # e.g. {"script": "ascii", "category": "how-to"}
    shown: list[ShownRow] = field(default_factory=list)


@dataclass
class BenchReport:
    corpus: str
    split: str
    label: str  # the configuration as the user named it ("consensus", "rrf,rrf.rrf_constant=40", "baseline")
    fingerprint: str
    metrics: list[MetricSpec]
    per_query: list[QueryScore]
    summary: dict[str, float]
    by_group: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    per_engine: dict[str, dict[str, float]] = field(default_factory=dict)
    worst: list[QueryScore] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    worst_columns: tuple[
        str, ...
    ] = ()  # the metrics the worst-queries table shows (default: the first three)

    @classmethod
    def from_scores(
        cls,
        corpus: str,
        split: str,
        label: str,
        fingerprint: str,
        metrics: list[MetricSpec],
        scores: list[QueryScore],
        **fields: Any,
    ) -> BenchReport:
        """A report whose summary and per-group tables are ``aggregate`` and ``by_group`` of ``scores``."""
        return cls(
            corpus=corpus,
            split=split,
            label=label,
            fingerprint=fingerprint,
            metrics=metrics,
            per_query=scores,
            summary=aggregate(scores, metrics),
            by_group=by_group(scores, metrics),
            **fields,
        )

    def spec(self, name: str) -> MetricSpec:
        return next(s for s in self.metrics if s.name == name)

    def to_json(self, with_rows: bool = False) -> dict[str, Any]:
        def query_json(q: QueryScore) -> dict[str, Any]:
            out: dict[str, Any] = {"qid": q.qid, "query": q.query, "values": q.values, "groups": q.groups}
            if with_rows:
                out["shown"] = [asdict(r) for r in q.shown]
            return out

        return {
            "corpus": self.corpus,
            "split": self.split,
            "config": self.label,
            "fingerprint": self.fingerprint,
            "metrics": {s.name: {"aggregate": s.agg, "doc": s.doc} for s in self.metrics},
            "summary": self.summary,
            "byGroup": self.by_group,
            "perEngine": self.per_engine,
            "worst": [q.qid for q in self.worst],
            "perQuery": [query_json(q) for q in self.per_query],
            "notes": self.notes,
        }


def aggregate(scores: Iterable[QueryScore], metrics: Sequence[MetricSpec]) -> dict[str, float]:
    """Each metric over the queries that carry it (``name:n`` says how many); ``queries`` counts them all."""
    items = list(scores)
    out: dict[str, float] = {"queries": float(len(items))}
    for spec in metrics:
        if spec.agg == "ratio":
            num = sum(q.values.get(spec.numerator, 0.0) for q in items)
            den = sum(q.values.get(spec.denominator, 0.0) for q in items)
            if den:
                out[spec.name] = num / den
            continue
        values = [q.values[spec.name] for q in items if spec.name in q.values]
        if not values:
            continue  # no query carries it (e.g. nDCG on an unjudged split): absent, not zero
        if spec.agg == "sum":
            out[spec.name] = float(sum(values))
        else:
            out[spec.name] = sum(values) / len(values)
        out[f"{spec.name}:n"] = float(len(values))
    return out


def by_group(
    scores: Sequence[QueryScore], metrics: Sequence[MetricSpec]
) -> dict[str, dict[str, dict[str, float]]]:
    """group kind -> group value -> aggregate, for every kind with more than one value."""
    kinds: dict[str, dict[str, list[QueryScore]]] = defaultdict(lambda: defaultdict(list))
    for q in scores:
        for kind, value in q.groups.items():
            kinds[kind][value].append(q)
    return {
        kind: {value: aggregate(members, metrics) for value, members in sorted(groups.items())}
        for kind, groups in kinds.items()
        if len(groups) > 1
    }


def worst_queries(
    scores: Sequence[QueryScore], order: Sequence[tuple[str, bool]], count: int = 5
) -> list[QueryScore]:
    """The ``count`` worst queries by the metrics in ``order`` ((name, higher_is_better) pairs, first decides).

    A query lacking the first metric sorts by the next one; queries lacking all of them are never "worst".
    """

    def key(q: QueryScore) -> tuple:
        parts = []
        for name, higher in order:
            value = q.values.get(name)
            parts.append((value is None, 0.0 if value is None else (value if higher else -value)))
        return tuple(parts)

    carrying = [q for q in scores if any(name in q.values for name, _ in order)]
    return sorted(carrying, key=key)[:count]


def paired_values(
    a: Sequence[QueryScore], b: Sequence[QueryScore], metric: str
) -> tuple[list[str], list[float], list[float]]:
    """The queries both runs scored on ``metric``, in a's order, with both values."""
    b_by_qid = {q.qid: q for q in b}
    qids, xs, ys = [], [], []
    for q in a:
        other = b_by_qid.get(q.qid)
        if other is not None and metric in q.values and metric in other.values:
            qids.append(q.qid)
            xs.append(q.values[metric])
            ys.append(other.values[metric])
    return qids, xs, ys


@dataclass
class Comparison:
    a: BenchReport
    b: BenchReport
    metric: str
    intervals: dict[str, Bootstrap]  # per metric (every non-ratio metric both runs carry)
    deltas: list[tuple[str, str, float, float]]  # (qid, query, a, b) on the primary metric


def compare(a: BenchReport, b: BenchReport, primary: str, **bootstrap_args: Any) -> Comparison:
    from serpfuse.bench.bootstrap import paired_bootstrap

    intervals = {}
    for spec in a.metrics:
        if spec.agg == "ratio" or not spec.show:
            continue
        _, xs, ys = paired_values(a.per_query, b.per_query, spec.name)
        if xs:
            intervals[spec.name] = paired_bootstrap(xs, ys, **bootstrap_args)
    queries = {q.qid: q.query for q in a.per_query}
    qids, xs, ys = paired_values(a.per_query, b.per_query, primary)
    deltas = [(qid, queries[qid], x, y) for qid, x, y in zip(qids, xs, ys, strict=True)]
    return Comparison(a=a, b=b, metric=primary, intervals=intervals, deltas=deltas)


def comparison_json(c: Comparison) -> dict[str, Any]:
    return {
        "a": c.a.to_json(),
        "b": c.b.to_json(),
        "metric": c.metric,
        "intervals": {name: iv.as_dict() for name, iv in c.intervals.items()},
        "deltas": [{"qid": q, "query": t, "a": x, "b": y, "delta": y - x} for q, t, x, y in c.deltas],
    }


def sweep_json(s: Sweep) -> dict[str, Any]:
    return {
        "metric": s.metric,
        "default": s.default,
        "defaultMean": s.default_mean,
        "best": s.best,
        "bestMean": s.best_mean,
        "bestVsDefault": s.best_vs_default.as_dict(),
        "marginals": [
            {
                "knob": m.knob,
                "value": m.value,
                "mean": m.mean,
                "configs": m.configs,
                "isDefault": m.is_default,
            }
            for m in s.marginals
        ],
        "points": [{"point": p, "mean": m} for p, m in s.points],
    }


# --- rendering -----------------------------------------------------------------------------------------------


def _fmt(spec: MetricSpec | None, value: float | None) -> str:
    if value is None:
        return "–"
    if spec is None:
        return f"{value:g}"
    if spec.agg == "sum" and float(value).is_integer():
        return str(int(value))
    return format(value, spec.fmt)


def _summary_columns(report: BenchReport, names: Sequence[str] | None) -> list[MetricSpec]:
    specs = [s for s in report.metrics if (s.name in names if names is not None else s.show)]
    return [s for s in specs if s.name in report.summary]


def summary_table(reports: Sequence[BenchReport], title: str, names: Sequence[str] | None = None):
    from rich.table import Table

    specs = _summary_columns(reports[0], names)
    table = Table(title=title, title_justify="left")
    table.add_column("configuration")
    table.add_column("queries", justify="right")
    for spec in specs:
        table.add_column(spec.name, justify="right")
    for r in reports:
        table.add_row(
            r.label, str(int(r.summary["queries"])), *(_fmt(s, r.summary.get(s.name)) for s in specs)
        )
    return table


def rows_table(title: str, first: str, rows: Mapping[str, Mapping[str, float]], specs: Sequence[MetricSpec]):
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    table.add_column(first)
    table.add_column("queries", justify="right")
    for spec in specs:
        table.add_column(spec.name, justify="right")
    for name, values in rows.items():
        table.add_row(name, str(int(values.get("queries", 0))), *(_fmt(s, values.get(s.name)) for s in specs))
    return table


def worst_table(report: BenchReport, names: Sequence[str]):
    from rich.table import Table

    table = Table(title=f"worst queries ({report.label})", title_justify="left")
    table.add_column("qid", justify="right")
    table.add_column("query", min_width=20, max_width=32)
    for name in names:
        table.add_column(name, justify="right")
    table.add_column(
        "top 3 rows (grade; J = junk; ? = unjudged)",
        min_width=40,
        max_width=64,
        no_wrap=True,
        overflow="ellipsis",
    )
    for q in report.worst:
        rows = "\n".join(
            f"{'?' if r.grade is None else r.grade}{'J' if r.junk else ''} {_short(r.url)}"
            for r in q.shown[:3]
        )
        table.add_row(
            q.qid, q.query, *(_fmt(report.spec(n), q.values.get(n)) for n in names), rows or "(nothing shown)"
        )
    return table


def _short(url: str, width: int = 70) -> str:
    text = url.split("://", 1)[-1].removeprefix("www.")
    return text if len(text) <= width else text[: width - 1] + "…"


def render_report(console, report: BenchReport, extra: Sequence[BenchReport] = (), names=None) -> None:
    """Overall (the report plus any ``extra`` ones, e.g. the baseline), per group, per engine, worst queries."""
    reports = [*extra, report]
    console.print(summary_table(reports, f"{report.corpus} · {report.split}", names))
    specs = _summary_columns(report, names)
    for kind, groups in report.by_group.items():
        console.print(rows_table(f"per {kind} ({report.label})", kind, groups, specs))
    if report.per_engine:
        console.print(
            rows_table("per engine (each engine's own list alone)", "engine", report.per_engine, specs)
        )
    if report.worst:
        console.print(worst_table(report, report.worst_columns or [s.name for s in specs[:3]]))
    for note in report.notes:
        console.print(f"[dim]note: {note}[/dim]")


def _interval_cells(c: Comparison, name: str, iv: Bootstrap) -> list[str]:
    """metric, n, A, B, delta and interval: the columns the rich and the Markdown comparison share."""
    return [
        f"{name} per query" if c.a.spec(name).agg == "sum" else name,
        str(iv.n),
        f"{iv.mean_a:.4f}",
        f"{iv.mean_b:.4f}",
        f"{iv.delta:+.4f}",
        f"[{iv.low:+.4f}, {iv.high:+.4f}]",
    ]


def render_comparison(console, c: Comparison, show: int = 15, names: Sequence[str] | None = None) -> None:
    from rich.table import Table

    title = f"{c.a.corpus} · {c.a.split}: {c.a.label} (A) vs {c.b.label} (B)"
    console.print(summary_table([c.a, c.b], title, names))
    first = next(iter(c.intervals.values()), None)
    resamples = f"{first.resamples:,}" if first else "0"
    table = Table(title=f"B − A, paired bootstrap (95 %, {resamples} resamples)", title_justify="left")
    for col in ("metric", "n", "A", "B", "Δ", "95 % interval", "B higher/lower", "excludes 0"):
        table.add_column(col, justify="right" if col != "metric" else "left")
    for name, iv in c.intervals.items():
        table.add_row(
            *_interval_cells(c, name, iv), f"{iv.wins}/{iv.losses}", "yes" if iv.excludes_zero else "no"
        )
    console.print(table)
    moved = sorted((d for d in c.deltas if d[3] != d[2]), key=lambda d: abs(d[3] - d[2]), reverse=True)
    per_query = Table(
        title=f"per-query {c.metric} deltas ({len(moved)} of {len(c.deltas)} moved)", title_justify="left"
    )
    for col in ("qid", "query", "A", "B", "Δ"):
        per_query.add_column(col, justify="left" if col == "query" else "right")
    for qid, query, x, y in moved[:show]:
        per_query.add_row(qid, query, f"{x:.4f}", f"{y:.4f}", f"{y - x:+.4f}")
    console.print(per_query)


def render_sweep(console, s: Sweep) -> None:
    from rich.table import Table

    table = Table(
        title=f"marginal means of {s.metric} over {len(s.points)} grid points", title_justify="left"
    )
    for col in ("knob", "value", s.metric, "configs"):
        table.add_column(col, justify="left" if col == "knob" else "right")
    for m in s.marginals:
        value = f"[bold]{m.value}[/bold]" if m.is_default else str(m.value)
        table.add_row(m.knob, value, f"{m.mean:.4f}", str(m.configs))
    console.print(table)
    iv = s.best_vs_default
    best = ", ".join(f"{k}={v}" for k, v in s.best.items())
    console.print(
        f"default {s.default_mean:.4f}; best grid point ({best}) {s.best_mean:.4f}: "
        f"Δ {iv.delta:+.4f}, 95 % interval [{iv.low:+.4f}, {iv.high:+.4f}]"
        + (" (excludes zero)" if iv.excludes_zero else " (touches zero: a direction, not a proven win)")
    )


# --- Markdown (for BENCHMARKS.md: the table a command prints is the table the page shows) -------------------


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[str]], right_from: int = 1) -> str:
    """A Markdown table; columns from ``right_from`` on are right-aligned."""
    lines = ["| " + " | ".join(header) + " |"]
    lines.append("|" + "|".join("---" if i < right_from else "---:" for i in range(len(header))) + "|")
    lines.extend("| " + " | ".join(row) + " |" for row in rows)
    return "\n".join(lines)


def markdown_summary(reports: Sequence[BenchReport], names: Sequence[str] | None = None) -> str:
    specs = _summary_columns(reports[0], names)
    rows = [
        [r.label, str(int(r.summary["queries"])), *(_fmt(s, r.summary.get(s.name)) for s in specs)]
        for r in reports
    ]
    return markdown_table(["configuration", "queries", *(s.name for s in specs)], rows)


def markdown_rows(first: str, rows: Mapping[str, Mapping[str, float]], specs: Sequence[MetricSpec]) -> str:
    body = [[name, *(_fmt(s, values.get(s.name)) for s in specs)] for name, values in rows.items()]
    return markdown_table([first, *(s.name for s in specs)], body)


def markdown_report(report: BenchReport, extra: Sequence[BenchReport] = (), names=None) -> str:
    parts = [markdown_summary([*extra, report], names)]
    specs = _summary_columns(report, names)
    for kind, groups in report.by_group.items():
        parts.append(f"Per {kind} ({report.label}):\n\n" + markdown_rows(kind, groups, specs))
    if report.per_engine:
        parts.append(
            "Per engine (each engine's own list alone):\n\n"
            + markdown_rows("engine", report.per_engine, specs)
        )
    return "\n\n".join(parts)


def markdown_comparison(c: Comparison) -> str:
    rows = [_interval_cells(c, name, iv) for name, iv in c.intervals.items()]
    return markdown_table(["metric", "n", c.a.label, c.b.label, "Δ", "95 % interval"], rows)


def markdown_sweep(s: Sweep) -> str:
    rows = [
        [m.knob, f"**{m.value}**" if m.is_default else str(m.value), f"{m.mean:.4f}", str(m.configs)]
        for m in s.marginals
    ]
    iv = s.best_vs_default
    best = ", ".join(f"{k}={v}" for k, v in s.best.items())
    return (
        markdown_table(["knob", "value", s.metric, "configs"], rows, right_from=1)
        + f"\n\nDefault {s.default_mean:.4f}; best grid point ({best}) {s.best_mean:.4f}: "
        + f"Δ {iv.delta:+.4f}, 95 % interval [{iv.low:+.4f}, {iv.high:+.4f}]."
    )
