"""The crw56 corpus: 56 real queries as one SearXNG instance answered them, graded judgments for the
even-index queries.

- dev = even qids, judged in qrels-dev.jsonl; test = odd qids (judged, but not here: only Junk/CleanRel).
- Each configuration runs the whole pipeline on the recording (``ReplaySource``), limit 8.
- Ranking quality (nDCG@8 with gain 2^rel-1, P@8, MRR@8, R@8) is reported on the queries with a relevant row;
  half the queries have none, and there the right answer is to show little, which Irrelevant@5 measures: the
  rows in the top 5 judged 0, summed over every dev query. Pooled judging covered every row of the
  recording, so an unjudged row (none should occur) counts as irrelevant by default; both counts are reported.
- RelShown@8: relevant rows shown in the top 8 over min(8, relevant rows in the query's candidate
  pool, i.e. the whole recording for it), averaged over the queries with a relevant row. It replaces kept@8 in
  the headline: kept@8 (of the relevant rows the baseline's top 8 showed, the share still in our top 8,
  pooled) measures agreement with SearXNG's google-weighted order rather than relevance; --json keeps it.
- Baseline: SearXNG's own order, the recording's ``score`` descending (ties keep SearXNG's order), exact-URL
  dedupe. It scores nDCG@8 0.8926 and Irrelevant@5 73 on the dev queries.
- Rows are matched to judgments by ``urls.dedup_key`` on both sides (a result's own URL or any URL an engine
  returned for it), so canonicalisation can never make a judged row look unjudged.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from serpfuse.bench import judged_recording as jr
from serpfuse.bench.judged_recording import (  # noqa: F401 - the crw56 protocol is the package's, re-exported
    BASELINE,
    HEADLINE,
    K_SHOWN,
    LIMIT,
    METRICS,
    PRIMARY,
    K,
    RecordedRow,
    RowFlags,
    Shown,
    baseline_order,
    build_report,
    engines_of,
    filter_flags,
    judge,
    score_query,
    score_run,
)
from serpfuse.bench.report import BenchReport
from serpfuse.config import RankingConfig
from serpfuse.urls import dedup_key

RECORDING = "crw56/searxng_raw.json"
QRELS_DEV = "crw56/qrels-dev.jsonl"
# The recording's date: freshness is judged as of then, so a run is the same every day.
RECORDED_AT = dt.datetime(2026, 5, 31, tzinfo=dt.UTC)

# The corpus's query groups in index order (travel/geo, how-to, shopping, tech, health, travel logistics, news,
# homonyms); each entry is (first qid of the group, name).
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


class CorpusError(Exception):
    """The corpus files are missing or unreadable."""


@dataclass
class Crw56Query(jr.JudgedQuery):
    qid: int

    @property
    def category(self) -> str:
        return next(name for start, name in reversed(CATEGORY_STARTS) if self.qid >= start)

    def groups(self) -> dict[str, str]:
        return {"script": self.analysis.script, "category": self.category}


@dataclass
class Crw56Corpus(jr.JudgedRecording):
    """The recording with every query (dev judged, test without judgments here) and SearXNG's order."""

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
    return Crw56Corpus(recording=recording, queries=queries, has_searxng_order=True)


def engine_lists(corpus: Crw56Corpus) -> dict[int, dict[str, list[Shown]]]:
    """qid -> engine -> that engine's own list, as the replay source rebuilds it from ``positions``."""
    return jr.engine_lists(corpus.recording, corpus.queries)


class PipelineRunner(jr.PipelineRunner):
    """The full pipeline on the crw56 recording (or an altered copy of it), at the recording's date, limit 8."""

    def __init__(
        self,
        corpus: Crw56Corpus,
        now: dt.datetime = RECORDED_AT,
        limit: int = LIMIT,
        recording: dict | None = None,  # the recording as loaded and then altered (the robustness benches)
    ):
        super().__init__(corpus.recording, now, limit, recording)


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
    return jr.run_config(
        corpus,
        corpus.split(split),
        config,
        runner or (PipelineRunner(corpus) if config is not None else None),
        "crw56",
        split,
        label=label,
        per_engine=per_engine,
        unjudged_irrelevant=unjudged_irrelevant,
        flags=flags,
        progress=progress,
    )


def per_engine_summaries(
    corpus: Crw56Corpus, split: str, flags: RowFlags | None = filter_flags
) -> dict[str, dict[str, float]]:
    """Each engine's own list alone, summed up over the split (computed once per split and flags)."""
    return jr.per_engine_summaries(corpus, corpus.split(split), flags)
