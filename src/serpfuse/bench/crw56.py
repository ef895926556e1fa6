"""The crw56 protocol (issue 4): 56 real queries as one SearXNG instance answered them, graded judgments for the
even-index queries.

- dev = even qids, judged in qrels-dev.jsonl; test = odd qids (judged, but not here: only Junk/CleanRel).
- Each configuration runs the whole pipeline on the recording (``ReplaySource``), limit 8.
- Ranking quality (nDCG@8 with gain 2^rel-1, P@8, MRR@8, R@8) is reported on the queries with a relevant row;
  half the queries have none, and there the right answer is to show little, which Irrelevant@5 measures: the
  rows in the top 5 judged 0, summed over every dev query. Pooled judging covered every row of the
  recording, so an unjudged row (none should occur) counts as irrelevant by default; both counts are reported.
- RelShown@8 (issue 8): relevant rows shown in the top 8 over min(8, relevant rows in the query's candidate
  pool, i.e. the whole recording for it), averaged over the queries with a relevant row. It replaces kept@8 in
  the headline: kept@8 (of the relevant rows the baseline's top 8 showed, the share still in our top 8,
  pooled) measures agreement with SearXNG's google-weighted order rather than relevance; --json keeps it.
- Baseline: SearXNG's own order, the recording's ``score`` descending (ties keep SearXNG's order), exact-URL
  dedupe. Issue 4 states nDCG@8 0.8926 and Irrelevant@5 73 for it on the dev queries.
- Rows are matched to judgments by ``urls.dedup_key`` on both sides (a result's own URL or any URL an engine
  returned for it), so canonicalisation can never make a judged row look unjudged.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from serpfuse.bench import metrics as m
from serpfuse.bench.report import BenchReport, MetricSpec, QueryScore, ShownRow, aggregate, worst_queries
from serpfuse.config import RankingConfig
from serpfuse.urls import dedup_key

if TYPE_CHECKING:
    from serpfuse.ranking.query import QueryAnalysis

RECORDING = "crw56/searxng_raw.json"
QRELS_DEV = "crw56/qrels-dev.jsonl"
# The recording's date (PR #68, 2026-05-31): freshness is judged as of then, so a run is the same every day.
RECORDED_AT = dt.datetime(2026, 5, 31, tzinfo=dt.UTC)
LIMIT = 8
K = 8  # ranking-quality cutoff
K_SHOWN = 5  # Irrelevant@5, Junk@5, CleanRel@5
BASELINE = "baseline"

# The corpus's query groups in index order (field notes §6: travel/geo, how-to, shopping, tech, health, travel
# logistics, news, homonyms); each entry is (first qid of the group, name).
CATEGORY_STARTS: tuple[tuple[int, str], ...] = (
    (0, "travel"),
    (12, "how-to"),
    (20, "shopping"),
    (28, "tech"),
    (36, "health"),
    (42, "travel-logistics"),
    (46, "news"),
    (49, "homonyms"),
)

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


class CorpusError(Exception):
    """The corpus files are missing or unreadable."""


@dataclass(frozen=True)
class RecordedRow:
    url: str
    title: str
    snippet: str
    score: float
    engines: tuple[str, ...]
    positions: tuple[int, ...]


@dataclass
class Crw56Query:
    qid: int
    query: str
    rows: list[RecordedRow]  # in the recording's order
    judged: dict[str, int] | None = None  # dedup key -> grade; None when this split has no judgments here

    @property
    def has_relevant(self) -> bool:
        return bool(self.judged) and any(g >= 1 for g in self.judged.values())

    @cached_property
    def analysis(self) -> QueryAnalysis:
        """The query as the pipeline reads it, analysed once (every row's flags and the groups use it)."""
        from serpfuse.ranking.query import analyze_query

        return analyze_query(self.query)

    @cached_property
    def pool(self) -> frozenset[str]:
        """The dedup keys of every recorded row: the candidate pool RelShown@8 is measured against."""
        return frozenset(dedup_key(row.url) for row in self.rows)

    @property
    def category(self) -> str:
        return next(name for start, name in reversed(CATEGORY_STARTS) if self.qid >= start)


@dataclass
class Crw56Corpus:
    recording: Path
    queries: list[Crw56Query] = field(default_factory=list)
    # (split, flags) -> engine -> summary: each engine's own list does not depend on the configuration
    engine_summaries: dict[tuple, dict[str, dict[str, float]]] = field(default_factory=dict, repr=False)

    def split(self, name: str) -> list[Crw56Query]:
        if name == "dev":
            return [q for q in self.queries if q.qid % 2 == 0]
        if name == "test":
            return [q for q in self.queries if q.qid % 2 == 1]
        if name == "all":
            return list(self.queries)
        raise ValueError(f"unknown split {name!r}; choose dev, test or all")


def judgments_by_key(lines: Iterable[Mapping]) -> dict[int, dict[str, int]]:
    """qid -> dedup key -> grade; two URLs folding to one key keep the higher grade."""
    out: dict[int, dict[str, int]] = {}
    for item in lines:
        grades = out.setdefault(int(item["qid"]), {})
        key = dedup_key(item["url"])
        grades[key] = max(int(item["rel"]), grades.get(key, int(item["rel"])))
    return out


def load_crw56(data_dir: str | Path) -> Crw56Corpus:
    root = Path(data_dir)
    recording, qrels_path = root / RECORDING, root / QRELS_DEV
    for path in (recording, qrels_path):
        if not path.is_file():
            raise CorpusError(f"crw56 file missing: {path}")
    try:
        raw = json.loads(recording.read_text(encoding="utf-8"))
        lines = [
            json.loads(line) for line in qrels_path.read_text(encoding="utf-8").splitlines() if line.strip()
        ]
    except (OSError, ValueError) as exc:
        raise CorpusError(f"cannot read crw56: {exc}") from None
    judged = judgments_by_key(lines)
    queries = []
    for qid, entry in enumerate(raw):
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
        queries.append(Crw56Query(qid=qid, query=entry["query"], rows=rows, judged=judged.get(qid)))
    return Crw56Corpus(recording=recording, queries=queries)


# --- what a configuration shows ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Shown:
    """A row as shown, before judging: the URLs that identify it and its text."""

    url: str
    urls: tuple[str, ...]  # every URL engines returned for it (provenance), the shown one first
    title: str
    snippet: str
    engines: tuple[str, ...]


def baseline_order(query: Crw56Query, limit: int = LIMIT) -> list[Shown]:
    """SearXNG's own order: score descending (a stable sort, so ties keep SearXNG's order), exact-URL dedupe."""
    seen: set[str] = set()
    out: list[Shown] = []
    for row in sorted(query.rows, key=lambda r: r.score, reverse=True):
        if row.url in seen:
            continue
        seen.add(row.url)
        out.append(Shown(row.url, (row.url,), row.title, row.snippet, row.engines))
    return out[:limit]


def engine_lists(corpus: Crw56Corpus) -> dict[int, dict[str, list[Shown]]]:
    """qid -> engine -> that engine's own list, as the replay source rebuilds it from ``positions``."""
    from serpfuse.sources.replay import load_recording, normalise_query

    recording = load_recording(corpus.recording)
    out: dict[int, dict[str, list[Shown]]] = {}
    for query in corpus.queries:
        answers = recording[normalise_query(query.query)].variants.get("", {})
        out[query.qid] = {
            engine: [Shown(row.url, (row.url,), row.title, row.snippet, (engine,)) for row in answer.rows]
            for engine, answer in answers.items()
            if answer.rows
        }
    return out


class PipelineRunner:
    """Runs the full pipeline on the recording: one replay source, a fixed clock, limit 8."""

    def __init__(
        self,
        corpus: Crw56Corpus,
        now: dt.datetime = RECORDED_AT,
        limit: int = LIMIT,
        recording: dict | None = None,  # the recording as loaded and then altered (the robustness benches)
    ):
        from serpfuse.sources.replay import ReplaySource

        self.source = ReplaySource(corpus.recording, recording)
        self.now = now
        self.limit = limit

    def __call__(self, query: Crw56Query, config: RankingConfig) -> list[Shown]:
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
    """Seed 001's row flags from the project's own filters: junk, and coverage of the important terms."""
    from serpfuse.ranking.filters.coverage import passes_coverage
    from serpfuse.ranking.filters.junk import is_junk

    junk = is_junk(row.title, row.url, query=analysis)
    covered = analysis.is_cjk or passes_coverage(analysis.terms, row.title, row.snippet, 0.5)
    return junk, covered


def judge(query: Crw56Query, shown: Sequence[Shown], flags: RowFlags | None) -> list[ShownRow]:
    out = []
    for row in shown:
        keys = [dedup_key(u) for u in row.urls]
        judged_key = next((k for k in keys if query.judged and k in query.judged), None)
        grade = query.judged[judged_key] if query.judged is not None and judged_key is not None else None
        junk, covered = flags(query.analysis, row) if flags else (False, True)
        out.append(ShownRow(judged_key or keys[0], row.url, row.title, grade, junk, covered, row.engines))
    return out


def score_query(
    query: Crw56Query,
    rows: Sequence[ShownRow],
    baseline: Sequence[ShownRow],
    unjudged_irrelevant: bool = True,
) -> dict[str, float]:
    """Every metric that applies to this query (ranking metrics only with a relevant row, judged ones only when
    this split has judgments)."""
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
        kept, of = m.kept([r.docid for r in baseline], docids, qrels, K)
        values["kept"], values["keptOf"] = float(kept), float(of)
    return values


def _groups(query: Crw56Query) -> dict[str, str]:
    return {"script": query.analysis.script, "category": query.category}


Ranking = Callable[[Crw56Query], list[Shown]]


def score_run(
    queries: Sequence[Crw56Query],
    ranking: Ranking,
    flags: RowFlags | None = filter_flags,
    unjudged_irrelevant: bool = True,
    progress: Callable[[], None] | None = None,
) -> list[QueryScore]:
    scores = []
    for query in queries:
        rows = judge(query, ranking(query), flags)
        baseline = judge(query, baseline_order(query), None)
        values = score_query(query, rows, baseline, unjudged_irrelevant)
        scores.append(QueryScore(str(query.qid), query.query, values, _groups(query), rows))
        if progress:
            progress()
    return scores


def build_report(
    scores: list[QueryScore], split: str, label: str, fingerprint: str, notes: Sequence[str] = ()
) -> BenchReport:
    # the worst ranked queries with a relevant row, then the noisiest of the rest (most irrelevant rows shown)
    worst = worst_queries(scores, [("nDCG@8", True), ("Irrelevant@5", False)], count=5)
    noisy = [
        q for q in scores if "nDCG@8" not in q.values and q.values.get("Irrelevant@5", q.values["Junk@5"]) > 0
    ]
    worst += worst_queries(noisy, [("Irrelevant@5", False), ("Junk@5", False)], count=5)
    return BenchReport.from_scores(
        "crw56",
        split,
        label,
        fingerprint,
        METRICS,
        scores,
        worst=worst,
        notes=list(notes),
        worst_columns=("nDCG@8", "Irrelevant@5", "Junk@5", "shown"),
    )


def engines_of(queries: Sequence[Crw56Query]) -> list[str]:
    return sorted({e for q in queries for r in q.rows for e in r.engines})


def run(
    corpus: Crw56Corpus,
    config: RankingConfig | None,
    split: str = "dev",
    label: str | None = None,
    per_engine: bool = True,
    unjudged_irrelevant: bool = True,
    flags: RowFlags | None = filter_flags,
    runner: Callable[[Crw56Query, RankingConfig], list[Shown]] | None = None,
    progress: Callable[[], None] | None = None,
) -> BenchReport:
    """One configuration over a split; ``config=None`` is the baseline (SearXNG's own order)."""
    queries = corpus.split(split)
    if config is None:
        ranking: Ranking = baseline_order
        label, fingerprint = label or BASELINE, "searxng-recorded-order"
    else:
        pipeline = runner or PipelineRunner(corpus)
        ranking = lambda q: pipeline(q, config)  # noqa: E731 - a closure over the config is the point
        label, fingerprint = label or config.strategy, config.fingerprint()
    scores = score_run(queries, ranking, flags, unjudged_irrelevant, progress)
    unjudged = sum(
        1 for q in scores for r in q.shown if r.grade is None and q.values.get("Irrelevant@5") is not None
    )
    notes = [f"{unjudged} shown rows had no judgment (counted as irrelevant)"] if unjudged else []
    report = build_report(scores, split, label, fingerprint, notes)
    if per_engine:
        report.per_engine = per_engine_summaries(corpus, split, flags)
    return report


def per_engine_summaries(
    corpus: Crw56Corpus, split: str, flags: RowFlags | None = filter_flags
) -> dict[str, dict[str, float]]:
    """Each engine's own list alone, summed up over the split: computed once per corpus, split and flags."""
    key = (split, flags)
    if key not in corpus.engine_summaries:
        queries = corpus.split(split)
        lists = engine_lists(corpus)
        corpus.engine_summaries[key] = {
            engine: aggregate(
                score_run(queries, lambda q, e=engine: lists[q.qid].get(e, [])[:LIMIT], flags), METRICS
            )
            for engine in engines_of(queries)
        }
    return corpus.engine_summaries[key]
