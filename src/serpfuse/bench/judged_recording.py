"""A recording and its judgments: run the pipeline on every judged query of the recording and score what it shows.

- The recording is one ``serpfuse search --replay`` reads (``serpfuse record``'s format or a SearXNG JSON list).
- Judgments are JSON Lines, one ``{"query": ..., "url": ..., "rel": 0|1|2...}`` per line, matched to the
  recording by query text (whitespace and case folded, as the replay source matches) and to shown rows by
  ``urls.dedup_key`` on both sides (a result's own URL or any URL an engine returned for it), so
  canonicalisation can never make a judged row look unjudged. Two URLs folding to one key keep the higher grade.
- Each configuration runs the whole pipeline on the recording (``ReplaySource``), limit 8, at a fixed clock.
- Ranking quality (nDCG@8 with gain 2^rel-1, P@8, MRR@8, R@8) is reported on the judged queries with a relevant
  row; where none is relevant the right answer is to show little, which Irrelevant@5 measures: the rows in the
  top 5 judged 0, summed over every judged query. An unjudged row counts as irrelevant unless
  ``unjudged_irrelevant`` is off; both counts are reported.
- RelShown@8: relevant rows shown in the top 8 over min(8, relevant rows in the query's candidate pool, i.e.
  every row the recording holds for it), averaged over the queries with a relevant row.
- Junk@5 and CleanRel@5 come from the project's own filters and need no judgments.
- A SearXNG recording carries SearXNG's own fused order: that order (``score`` descending, ties kept, exact-URL
  dedupe) is the ``baseline`` shown beside every run, and kept@8 (of the relevant rows the baseline's top 8
  showed, the share still in ours, pooled; in ``--json``) is measured against it.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from serpfuse.bench import metrics as m
from serpfuse.bench.modes import (
    Bench,
    BenchError,
    BenchOutcome,
    ProgressFactory,
    check_runs,
    parse_configs,
    quiet,
    run_bench,
)
from serpfuse.bench.report import BenchReport, MetricSpec, QueryScore, ShownRow, aggregate, worst_queries
from serpfuse.config import RankingConfig
from serpfuse.errors import InputError
from serpfuse.urls import dedup_key

if TYPE_CHECKING:
    from serpfuse.ranking.query import QueryAnalysis

LIMIT = 8
K = 8  # ranking-quality cutoff
K_SHOWN = 5  # Irrelevant@5, Junk@5, CleanRel@5
BASELINE = "baseline"  # SearXNG's own order, where the recording has it

METRICS: list[MetricSpec] = [
    MetricSpec("nDCG@8", doc="gain 2^rel-1, ideal from every judged row; queries with a relevant row"),
    MetricSpec(
        "RelShown@8",
        doc="relevant rows shown in the top 8 / min(8, relevant rows in the pool); queries with a relevant row",
    ),
    MetricSpec("P@8", doc="relevant = grade >= 1; queries with a relevant row"),
    MetricSpec("MRR@8", doc="queries with a relevant row"),
    MetricSpec("R@8", doc="queries with a relevant row"),
    MetricSpec("kept@8", "ratio", numerator="kept", denominator="keptOf", doc="pooled over queries"),
    MetricSpec("Irrelevant@5", "sum", higher_is_better=False, doc="judged 0 or unjudged; every query"),
    MetricSpec("IrrelevantJudged@5", "sum", higher_is_better=False, doc="judged 0 only; every query"),
    MetricSpec("Junk@5", "sum", higher_is_better=False, doc="rows the junk filter flags; every query"),
    MetricSpec("CleanRel@5", doc="not junk and passing coverage, over 5; every query"),
    MetricSpec("shown", fmt=".2f", doc="rows shown (of 8)"),
    MetricSpec("kept", "sum", show=False),
    MetricSpec("keptOf", "sum", show=False),
]
HEADLINE = ("nDCG@8", "RelShown@8", "P@8", "MRR@8", "Irrelevant@5", "Junk@5", "CleanRel@5", "shown")
PRIMARY = "nDCG@8"


class JudgmentsError(InputError):
    """The recording or the judgments cannot be read, said in one line (naming the line for a bad judgment)."""


@dataclass(frozen=True)
class RecordedRow:
    url: str
    title: str
    snippet: str
    score: float
    engines: tuple[str, ...]
    positions: tuple[int, ...]


@dataclass
class JudgedQuery:
    qid: str | int
    query: str
    rows: list[RecordedRow]  # every row the recording holds for the query (SearXNG's order when it has one)
    judged: dict[str, int] | None = None  # dedup key -> grade; None when the query has no judgments here

    @property
    def has_relevant(self) -> bool:
        return self.judged is not None and any(g >= 1 for g in self.judged.values())

    @cached_property
    def analysis(self) -> QueryAnalysis:
        """The query as the pipeline reads it, analysed once (every row's flags and the groups use it)."""
        from serpfuse.ranking.query import analyze_query

        return analyze_query(self.query)

    @cached_property
    def pool(self) -> frozenset[str]:
        """The dedup keys of every recorded row: the candidate pool RelShown@8 is measured against."""
        return frozenset(dedup_key(row.url) for row in self.rows)

    def groups(self) -> dict[str, str]:
        """The groups the per-group tables break the query into."""
        return {"script": self.analysis.script}


@dataclass
class JudgedRecording:
    recording: Path
    queries: list[JudgedQuery] = field(default_factory=list)
    has_searxng_order: bool = False  # a SearXNG recording: its own order is the baseline
    unmatched: list[str] = field(default_factory=list)  # judged queries the recording does not hold
    # (qids, flags) -> engine -> summary: each engine's own list does not depend on the configuration
    engine_summaries: dict[tuple, dict[str, dict[str, float]]] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Judgment:
    """One line of a JSON Lines judgments file, as written (``line`` is its 1-based number)."""

    query: str
    url: str
    rel: int
    line: int


def read_judgment_lines(path: str | Path) -> list[Judgment]:
    """Every judgment of a JSON Lines file ``{"query", "url", "rel"}`` as written, in file order; a bad line
    raises naming it. A whole-number ``query`` is read as text (a TREC qid in JSON Lines)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise JudgmentsError(f"judgments file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise JudgmentsError(f"cannot read judgments {path}: {exc}".splitlines()[0]) from None
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            item = json.loads(line)
        except ValueError as exc:
            raise JudgmentsError(f"{where}: not JSON ({exc})".splitlines()[0]) from None
        except RecursionError:
            raise JudgmentsError(f"{where}: nests too deeply to read") from None
        if not isinstance(item, dict):
            raise JudgmentsError(f'{where}: expected an object {{"query", "url", "rel"}}')
        missing = [k for k in ("query", "url", "rel") if k not in item]
        if missing:
            raise JudgmentsError(f"{where}: missing {', '.join(repr(k) for k in missing)}")
        query, url, rel = item["query"], item["url"], item["rel"]
        if isinstance(query, int) and not isinstance(query, bool):
            query = str(query)
        if not isinstance(query, str) or not query.strip() or not isinstance(url, str) or not url.strip():
            raise JudgmentsError(f'{where}: "query" and "url" must be non-empty text')
        if isinstance(rel, bool) or not isinstance(rel, int):
            raise JudgmentsError(f'{where}: "rel" must be an integer grade, got {rel!r}')
        out.append(Judgment(query, url, rel, number))
    return out


def read_judgments(path: str | Path) -> dict[str, dict[str, int]]:
    """Normalised query -> dedup key -> grade from a JSON Lines file; a bad line raises naming it."""
    from serpfuse.sources.replay import normalise_query

    out: dict[str, dict[str, int]] = {}
    for item in read_judgment_lines(path):
        grades = out.setdefault(normalise_query(item.query), {})
        key = dedup_key(item.url)
        grades[key] = max(item.rel, grades.get(key, item.rel))
    if not out:
        raise JudgmentsError(f"no judgments in {path}")
    return out


def recorded_rows(recording: str | Path) -> tuple[dict[str, tuple[str, list[RecordedRow]]], bool]:
    """Normalised query -> (query text, every recorded row) and whether the rows are in SearXNG's own order.

    A SearXNG recording keeps its merged rows with their scores; a serpfuse recording's rows are every engine's
    rows in turn (their order is not a baseline)."""
    from serpfuse.sources.replay import ReplayError, load_recording, normalise_query

    path = Path(recording)
    try:
        recorded = load_recording(path)
    except RecursionError:
        raise JudgmentsError(f"recording {path} nests too deeply to read") from None
    except ReplayError as exc:
        raise JudgmentsError(str(exc)) from None
    raw: Any = None
    if path.is_file():
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, RecursionError):
            raw = None
    if isinstance(raw, list):  # SearXNG: the rows as it fused them
        out = {}
        for number, entry in enumerate(raw, start=1):
            for r in entry.get("results") or []:
                if not isinstance(r, dict) or not isinstance(r.get("url"), str) or not r["url"].strip():
                    raise JudgmentsError(
                        f"{path}: query {number} ({entry['query']!r}) has a result without a url"
                    )
            rows = [
                RecordedRow(
                    url=r["url"],
                    title=r.get("title") or "",
                    snippet=r.get("content") or "",
                    score=float(r.get("score") or 0.0),
                    engines=tuple(r.get("engines") or [r.get("engine", "")]),
                    positions=tuple(r.get("positions") or ()),
                )
                for r in entry.get("results") or []
            ]
            out[normalise_query(entry["query"])] = (entry["query"], rows)
        return out, True
    out = {}
    for key, rec in recorded.items():
        rows = [
            RecordedRow(row.url, row.title, row.snippet, 0.0, (engine,), (row.rank,))
            for answers in rec.variants.values()
            for engine, answer in answers.items()
            for row in answer.rows
        ]
        out[key] = (rec.query, rows)
    return out, False


def load_judged_recording(recording: str | Path, judgments: str | Path) -> JudgedRecording:
    """The recording's judged queries, in the recording's order, each with its judgments."""
    grades = read_judgments(judgments)
    rows, searxng = recorded_rows(recording)
    queries = [
        JudgedQuery(qid=str(qid), query=text, rows=recorded, judged=grades[key])
        for qid, (key, (text, recorded)) in enumerate(rows.items())
        if key in grades
    ]
    if not queries:
        raise JudgmentsError(f"no judged query is in the recording {recording} (queries match by their text)")
    unmatched = sorted(key for key in grades if key not in rows)
    return JudgedRecording(Path(recording), queries, searxng, unmatched)


# --- what a configuration shows ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Shown:
    """A row as shown, before judging: the URLs that identify it and its text."""

    url: str
    urls: tuple[str, ...]  # every URL engines returned for it (provenance), the shown one first
    title: str
    snippet: str
    engines: tuple[str, ...]


def baseline_order(query: JudgedQuery, limit: int = LIMIT) -> list[Shown]:
    """SearXNG's own order: score descending (a stable sort, so ties keep SearXNG's order), exact-URL dedupe."""
    seen: set[str] = set()
    out: list[Shown] = []
    for row in sorted(query.rows, key=lambda r: r.score, reverse=True):
        if row.url in seen:
            continue
        seen.add(row.url)
        out.append(Shown(row.url, (row.url,), row.title, row.snippet, row.engines))
    return out[:limit]


def engine_lists(recording: Path, queries: Sequence[JudgedQuery]) -> dict[str | int, dict[str, list[Shown]]]:
    """qid -> engine -> that engine's own list, as the replay source rebuilds it."""
    from serpfuse.sources.replay import load_recording, normalise_query

    recorded = load_recording(recording)
    out: dict[str | int, dict[str, list[Shown]]] = {}
    for query in queries:
        answers = recorded[normalise_query(query.query)].variants.get("", {})
        out[query.qid] = {
            engine: [Shown(row.url, (row.url,), row.title, row.snippet, (engine,)) for row in answer.rows]
            for engine, answer in answers.items()
            if answer.rows
        }
    return out


class PipelineRunner:
    """Runs the full pipeline on a recording: one replay source, a fixed clock, limit 8."""

    def __init__(
        self,
        recording: Path,
        now: dt.datetime,
        limit: int = LIMIT,
        loaded: dict | None = None,  # the recording as loaded and then altered (the robustness benches)
    ):
        from serpfuse.sources.replay import ReplaySource

        self.source = ReplaySource(recording, loaded)
        self.now = now
        self.limit = limit

    def __call__(self, query: JudgedQuery, config: RankingConfig) -> list[Shown]:
        from serpfuse.models import SearchRequest
        from serpfuse.pipeline import search_sync

        response = search_sync(
            SearchRequest(query=query.query, limit=self.limit),
            source=self.source,
            config=config,
            now=self.now,
        )
        out = []
        for result in response.results:
            urls = tuple(dict.fromkeys([result.url, *(o.url for o in result.provenance)]))
            out.append(Shown(result.url, urls, result.title, result.snippet, tuple(result.engines)))
        return out


# --- judging and scoring -------------------------------------------------------------------------------------

RowFlags = Callable[["QueryAnalysis", Shown], tuple[bool, bool]]  # (query, row) -> (junk, covered)


def filter_flags(analysis: QueryAnalysis, row: Shown) -> tuple[bool, bool]:
    """A row's flags from the project's own filters: junk, and coverage of the query's important terms."""
    from serpfuse.ranking.filters.coverage import passes_coverage
    from serpfuse.ranking.filters.junk import is_junk

    junk = is_junk(row.title, row.url, query=analysis)
    covered = analysis.is_cjk or passes_coverage(analysis.terms, row.title, row.snippet, 0.5)
    return junk, covered


def judge(query: JudgedQuery, shown: Sequence[Shown], flags: RowFlags | None) -> list[ShownRow]:
    out = []
    for row in shown:
        keys = [dedup_key(u) for u in row.urls]
        judged_key = next((k for k in keys if query.judged and k in query.judged), None)
        grade = query.judged[judged_key] if query.judged is not None and judged_key is not None else None
        junk, covered = flags(query.analysis, row) if flags else (False, True)
        out.append(ShownRow(judged_key or keys[0], row.url, row.title, grade, junk, covered, row.engines))
    return out


def score_query(
    query: JudgedQuery,
    rows: Sequence[ShownRow],
    baseline: Sequence[ShownRow] | None,
    unjudged_irrelevant: bool = True,
) -> dict[str, float]:
    """Every metric that applies to this query (ranking metrics only with a relevant row, judged ones only when
    the query has judgments, kept@8 only beside a baseline)."""
    docids = [r.docid for r in rows]
    junk = [r.junk for r in rows]
    covered = [r.covered for r in rows]
    values: dict[str, float] = {
        "Junk@5": m.junk_at(junk, K_SHOWN),
        "CleanRel@5": m.clean_rel_at(junk, covered, K_SHOWN),
        "shown": float(len(rows)),
    }
    if query.judged is None:
        return values
    qrels = query.judged
    values["Irrelevant@5"] = m.irrelevant_at(docids, qrels, K_SHOWN, unjudged_irrelevant=unjudged_irrelevant)
    values["IrrelevantJudged@5"] = m.irrelevant_at(docids, qrels, K_SHOWN, unjudged_irrelevant=False)
    if query.has_relevant:
        values["nDCG@8"] = m.ndcg_at(docids, qrels, K, gain="exp")
        values["P@8"] = m.precision_at(docids, qrels, K)
        values["MRR@8"] = m.reciprocal_rank(docids, qrels, K)
        values["R@8"] = m.recall_at(docids, qrels, K)
        values["RelShown@8"] = m.rel_shown_at(docids, qrels, query.pool, K)
        if baseline is not None:
            kept, of = m.kept([r.docid for r in baseline], docids, qrels, K)
            values["kept"], values["keptOf"] = float(kept), float(of)
    return values


Ranking = Callable[[JudgedQuery], list[Shown]]


def score_run(
    queries: Sequence[JudgedQuery],
    ranking: Ranking,
    flags: RowFlags | None = filter_flags,
    unjudged_irrelevant: bool = True,
    progress: Callable[[], None] | None = None,
    with_baseline: bool = True,
) -> list[QueryScore]:
    scores = []
    for query in queries:
        rows = judge(query, ranking(query), flags)
        baseline = judge(query, baseline_order(query), None) if with_baseline else None
        values = score_query(query, rows, baseline, unjudged_irrelevant)
        scores.append(QueryScore(str(query.qid), query.query, values, query.groups(), rows))
        if progress:
            progress()
    return scores


def build_report(
    scores: list[QueryScore],
    corpus: str,
    split: str,
    label: str,
    fingerprint: str,
    notes: Sequence[str] = (),
) -> BenchReport:
    # the worst ranked queries with a relevant row, then the noisiest of the rest (most irrelevant rows shown)
    worst = worst_queries(scores, [("nDCG@8", True), ("Irrelevant@5", False)], count=5)
    noisy = [
        q for q in scores if "nDCG@8" not in q.values and q.values.get("Irrelevant@5", q.values["Junk@5"]) > 0
    ]
    worst += worst_queries(noisy, [("Irrelevant@5", False), ("Junk@5", False)], count=5)
    return BenchReport.from_scores(
        corpus,
        split,
        label,
        fingerprint,
        METRICS,
        scores,
        worst=worst,
        notes=list(notes),
        worst_columns=("nDCG@8", "Irrelevant@5", "Junk@5", "shown"),
    )


def engines_of(queries: Sequence[JudgedQuery]) -> list[str]:
    return sorted({e for q in queries for r in q.rows for e in r.engines})


def run_config(
    recording: JudgedRecording,
    queries: Sequence[JudgedQuery],
    config: RankingConfig | None,
    runner: Callable[[JudgedQuery, RankingConfig], list[Shown]] | None,
    corpus: str,
    split: str,
    label: str | None = None,
    per_engine: bool = True,
    unjudged_irrelevant: bool = True,
    flags: RowFlags | None = filter_flags,
    progress: Callable[[], None] | None = None,
) -> BenchReport:
    """One configuration over ``queries``; ``config=None`` is the baseline (SearXNG's own order)."""
    if config is None:
        if not recording.has_searxng_order:
            raise JudgmentsError("the baseline is SearXNG's own order: only a SearXNG recording has it")
        ranking: Ranking = baseline_order
        label, fingerprint = label or BASELINE, "searxng-recorded-order"
    else:
        if runner is None:
            raise ValueError("a configuration needs a pipeline runner")
        ranking = lambda q: runner(q, config)  # noqa: E731 - a closure over the config is the point
        label, fingerprint = label or config.strategy, config.fingerprint()
    scores = score_run(
        queries, ranking, flags, unjudged_irrelevant, progress, with_baseline=recording.has_searxng_order
    )
    unjudged = sum(
        1 for q in scores for r in q.shown if r.grade is None and q.values.get("Irrelevant@5") is not None
    )
    counted = "counted as irrelevant" if unjudged_irrelevant else "not counted"
    notes = [f"{unjudged} shown rows had no judgment ({counted})"] if unjudged else []
    report = build_report(scores, corpus, split, label, fingerprint, notes)
    if per_engine and config is not None:
        report.per_engine = per_engine_summaries(recording, queries, flags)
    return report


def own_list(lists: dict[str | int, dict[str, list[Shown]]], engine: str) -> Ranking:
    """The ranking that shows ``engine``'s own list for each query, as far as a list is shown."""
    return lambda q: lists[q.qid].get(engine, [])[:LIMIT]


def per_engine_summaries(
    recording: JudgedRecording, queries: Sequence[JudgedQuery], flags: RowFlags | None = filter_flags
) -> dict[str, dict[str, float]]:
    """Each engine's own list alone, summed up over the queries: computed once per query set and flags."""
    key = (tuple(q.qid for q in queries), flags)
    if key not in recording.engine_summaries:
        lists = engine_lists(recording.recording, queries)
        recording.engine_summaries[key] = {
            engine: aggregate(
                score_run(
                    queries,
                    own_list(lists, engine),
                    flags,
                    with_baseline=recording.has_searxng_order,
                ),
                METRICS,
            )
            for engine in engines_of(queries)
        }
    return recording.engine_summaries[key]


def recording_bench(
    recording_path: Path, judgments_path: Path, now: dt.datetime, unjudged_irrelevant: bool = True
):
    """The bench over a recording and its judgments: the pipeline's runs beside SearXNG's order when the
    recording has it."""
    recording = load_judged_recording(recording_path, judgments_path)
    runner = PipelineRunner(recording.recording, now)
    corpus, split = recording.recording.name, "judged"

    def run(label: str, config: RankingConfig | None, progress) -> BenchReport:
        return run_config(
            recording,
            recording.queries,
            config,
            runner,
            corpus,
            split,
            label=label,
            unjudged_irrelevant=unjudged_irrelevant,
            progress=progress,
        )

    notes = []
    if recording.unmatched:
        notes.append(f"{len(recording.unmatched)} judged queries are not in the recording (skipped)")
    references: Callable[[Any, set[str]], list[BenchReport]] = lambda progress, skip: []  # noqa: E731
    if recording.has_searxng_order:
        references = lambda progress, skip: [run(BASELINE, None, progress)]  # noqa: E731
    return Bench(
        name=corpus,
        primary=PRIMARY,
        headline=HEADLINE,
        metrics=METRICS,
        queries=len(recording.queries),
        run=run,
        references=references,
        reference_runs=1 if recording.has_searxng_order else 0,
        notes=notes,
    )


# --- `serpfuse bench`: a recording and its judgments ---------------------------------------------------------


@dataclass
class RecordingBenchOptions:
    """Everything ``serpfuse bench`` was asked, as plain values (the CLI fills it; tests may too)."""

    replay: Path
    qrels: Path
    strategies: list[str | None] = field(default_factory=lambda: [None])
    settings: list[str] = field(default_factory=list)
    compare: tuple[str, str] | None = None
    sweep: bool = False
    grid: list[str] = field(default_factory=list)
    metric: str | None = None
    judged_only: bool = False  # Irrelevant@5 ignores unjudged rows
    now: dt.datetime | None = None  # the clock freshness is judged against (default: now)


def run(options: RecordingBenchOptions, progress: ProgressFactory = quiet) -> BenchOutcome:
    """Validate the options, load the recording and judgments, run. Bad input raises ``BenchError``."""
    parsed = parse_configs(options.strategies, options.settings, options.compare)
    check_runs(parsed, options.compare is not None, options.sweep)
    now = options.now or dt.datetime.now(dt.UTC)
    try:
        bench = recording_bench(options.replay, options.qrels, now, not options.judged_only)
        return run_bench(
            bench,
            parsed,
            do_sweep=options.sweep,
            grid=options.grid,
            settings=options.settings,
            metric=options.metric,
            progress=progress,
        )
    except JudgmentsError as exc:
        raise BenchError(str(exc)) from None
