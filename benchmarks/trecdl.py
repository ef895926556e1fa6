"""The trec-dl-passages corpus: 76 real Bing questions (TREC Deep Learning 2019-2021, the even positions of each
year's queries), each with up to six real retrieval systems' top 20 passages with their text, and NIST's graded
judgments (0-3).

- Each system is an engine, each passage a row of its own host (``https://p<docid>.msmarco-passage.example/``,
  as the data's SOURCE.txt suggests) with no title and the passage as its snippet: the recording ``serpfuse
  search --replay`` would read, built in memory, so no per-site rule fires and every text rule reads the text.
- Each configuration runs the whole pipeline on it (``ReplaySource``), limit 8, at a fixed clock.
- nDCG@8 with gain 2^rel - 1 as on crw56 (the ideal from every judged passage; an unjudged one counts 0),
  P@8, MRR@8, R@8 and RelShown@8 with relevant = grade >= 1; Irrelevant@5 as on crw56 (judged 0 or unjudged).
- ``emptied``: queries with a relevant passage in the pool that the configuration answers with no row.
- Four query folds for the ablation's bar: by the query's position in the file, ``index % 4``.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from serpfuse.bench import judged_recording as jr
from serpfuse.bench.judged_recording import RecordedRow, Shown
from serpfuse.bench.report import BenchReport
from serpfuse.config import RankingConfig
from serpfuse.urls import dedup_key

FOLDER = "trec-dl-passages"
QUERIES = "queries-dev.jsonl"
QRELS = "qrels-dev.jsonl"
NOW = dt.datetime(2026, 5, 31, tzinfo=dt.UTC)  # no passage is dated: any fixed clock
# The systems as engine names (SOURCE.txt's names, shortened).
SYSTEMS = {
    "BM25": "bm25",
    "BM25_RM3": "bm25rm3",
    "SPLADE_P_P_ENSEMBLE_DISTIL": "splade",
    "D_BERT_KD_TASB": "tasb",
    "OPEN_AI_ADA2": "ada2",
    "REP_LLAMA": "repllama",
}


class CorpusError(Exception):
    """The corpus files are missing or unreadable."""


def passage_url(docid: str) -> str:
    return f"https://p{docid}.msmarco-passage.example/"


@dataclass
class TrecDlQuery(jr.JudgedQuery):
    index: int = 0
    lists: Mapping[str, list[tuple[str, str]]] | None = None  # engine -> [(docid, text)], best first

    @property
    def year(self) -> str:
        return str(self.qid).split("-")[0]

    @property
    def fold(self) -> int:
        return self.index % 4

    def groups(self) -> dict[str, str]:
        return {"year": self.year, "systems": str(len(self.lists or {}))}


@dataclass
class TrecDlCorpus(jr.JudgedRecording):
    def split(self, name: str = "dev") -> list[TrecDlQuery]:
        if name not in ("dev", "all"):
            raise ValueError(f"trec-dl-passages holds only its dev half here, not {name!r}")
        return list(self.queries)  # type: ignore[arg-type]

    @cached_property
    def replay(self) -> dict:
        """The corpus as the replay source reads it: normalised query -> RecordedQuery."""
        from serpfuse.models import EngineAnswer, EngineRow
        from serpfuse.sources.replay import RecordedQuery, normalise_query

        out = {}
        for q in self.queries:
            answers = {}
            for engine, rows in (q.lists or {}).items():  # type: ignore[attr-defined]
                answers[engine] = EngineAnswer(
                    engine=engine,
                    status="ok" if rows else "empty",
                    rows=[
                        EngineRow(engine=engine, rank=i, url=passage_url(docid), title="", snippet=text)
                        for i, (docid, text) in enumerate(rows, start=1)
                    ],
                )
            out[normalise_query(q.query)] = RecordedQuery(query=q.query, variants={"": answers})
        return out


def load_trecdl(data_dir: str | Path) -> TrecDlCorpus:
    folder = Path(data_dir) / FOLDER
    paths = folder / QUERIES, folder / QRELS
    for path in paths:
        if not path.is_file():
            raise CorpusError(f"trec-dl-passages file missing: {path}")
    try:
        entries = [
            json.loads(line) for line in paths[0].read_text(encoding="utf-8").splitlines() if line.strip()
        ]
        qrels = [
            json.loads(line) for line in paths[1].read_text(encoding="utf-8").splitlines() if line.strip()
        ]
    except (OSError, ValueError) as exc:
        raise CorpusError(f"cannot read trec-dl-passages: {exc}") from None
    grades: dict[str, dict[str, int]] = {}
    for item in qrels:
        grades.setdefault(item["qid"], {})[dedup_key(passage_url(str(item["docid"])))] = int(item["grade"])
    queries = []
    for index, entry in enumerate(entries):
        lists = {
            SYSTEMS.get(name, name.lower()): [
                (str(p["docid"]), p["text"]) for p in sorted(ps, key=lambda p: p["rank"])
            ]
            for name, ps in entry["lists"].items()
        }
        rows = []
        seen: set[str] = set()
        for engine, ranked in lists.items():
            for rank, (docid, text) in enumerate(ranked, start=1):
                if docid not in seen:
                    seen.add(docid)
                    rows.append(RecordedRow(passage_url(docid), "", text, 0.0, (engine,), (rank,)))
        queries.append(
            TrecDlQuery(qid=entry["qid"], query=entry["query"], rows=rows, judged=grades.get(entry["qid"], {}),
                        index=index, lists=lists)
        )  # fmt: skip
    return TrecDlCorpus(recording=folder / QUERIES, queries=queries, has_searxng_order=False)


class PipelineRunner(jr.PipelineRunner):
    """The full pipeline on the corpus's in-memory recording, limit 8."""

    def __init__(self, corpus: TrecDlCorpus, now: dt.datetime = NOW, limit: int = jr.LIMIT):
        super().__init__(corpus.recording, now, limit, corpus.replay)


def no_flags(analysis, row: Shown) -> tuple[bool, bool]:
    """Junk@5 and CleanRel@5 mean nothing without titles and hosts: every row is neither junk nor uncovered."""
    return False, True


def run(
    corpus: TrecDlCorpus,
    config: RankingConfig,
    label: str | None = None,
    runner: Callable[[jr.JudgedQuery, RankingConfig], list[Shown]] | None = None,
    progress: Callable[[], None] | None = None,
) -> BenchReport:
    report = jr.run_config(
        corpus,
        corpus.split("dev"),
        config,
        runner or PipelineRunner(corpus),
        "trec-dl-passages",
        "dev",
        label=label,
        per_engine=False,
        flags=no_flags,
        progress=progress,
    )
    return report


def emptied(report: BenchReport) -> int:
    """Queries with a relevant passage answered with no row."""
    return sum(1 for q in report.per_query if "nDCG@8" in q.values and q.values.get("shown", 0) == 0)
