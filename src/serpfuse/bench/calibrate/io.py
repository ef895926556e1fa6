"""Calibration's inputs: runs with TREC qrels or JSON Lines judgments, or a recording with its judgments, each
made into a ``Problem``."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Mapping
from pathlib import Path

from serpfuse.bench import trec
from serpfuse.bench.calibrate.problem import CalibrationError, Problem, cache_lists, cache_ranking_inputs
from serpfuse.config import DEFAULT_STRATEGY, RankingConfig


def is_json_lines(path: Path) -> bool:
    """JSON Lines when the first line that says anything starts with ``{``; TREC qrels otherwise."""
    try:
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    return line.lstrip().startswith("{")
    except FileNotFoundError:
        raise CalibrationError(f"judgments file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CalibrationError(f"cannot read judgments {path}: {exc}".splitlines()[0]) from None
    raise CalibrationError(f"no judgments in {path}")


def read_run_qrels(path: Path) -> trec.QrelsSet:
    """qid -> docid -> grade for runs: TREC qrels, or JSON Lines whose ``query`` is the qid and ``url`` the docid."""
    from serpfuse.bench.judged_recording import JudgmentsError, read_judgment_lines

    if is_json_lines(path):
        qrels: trec.QrelsSet = {}
        try:
            judgments = read_judgment_lines(path)
        except JudgmentsError as exc:
            raise CalibrationError(str(exc)) from None
        for item in judgments:  # the qid and the docid as written: runs name documents exactly
            grades = qrels.setdefault(item.query, {})
            grades[item.url] = max(item.rel, grades.get(item.url, item.rel))
        return qrels
    try:
        return trec.read_qrels(path)
    except trec.TrecFormatError as exc:
        raise CalibrationError(str(exc)) from None


def default_config() -> RankingConfig:
    """The default ranker's (``fuse --weights`` and ``search --weights`` without ``--strategy``)."""
    return RankingConfig(strategy=DEFAULT_STRATEGY)


def problem_from_runs(
    runs: Mapping[str, trec.Run],
    qrels: trec.QrelsSet,
    depth: int | None = None,
    config: RankingConfig | None = None,
) -> tuple[Problem, list[str]]:
    """The problem over the judged queries with a relevant document that some run answers, and notes."""
    config = config or default_config()
    lists = trec.per_query_lists(runs, depth)
    judged = [q for q in trec.qid_order(qrels) if any(g >= 1 for g in qrels[q].values())]
    caches = [cache_lists(q, lists[q], qrels[q], config) for q in judged if q in lists]
    notes = []
    missing = sum(1 for q in judged if q not in lists)
    if missing:
        notes.append(f"{missing} judged queries with a relevant document are in no run (skipped)")
    return Problem(caches, config), notes


def recording_judgments(recording: Path, qrels: Path) -> dict[str, dict[str, int]]:
    """Normalised query -> dedup key -> grade, from JSON Lines or from TREC qrels whose qid is the query's
    0-based position in the recording."""
    from serpfuse.bench.judged_recording import JudgmentsError, read_judgments, recorded_rows
    from serpfuse.urls import dedup_key

    if is_json_lines(qrels):
        try:
            return read_judgments(qrels)
        except JudgmentsError as exc:
            raise CalibrationError(str(exc)) from None
    try:
        rows, _ = recorded_rows(recording)
    except JudgmentsError as exc:
        raise CalibrationError(str(exc)) from None
    keys = list(rows)
    out: dict[str, dict[str, int]] = {}
    try:
        raw = trec.read_qrels(qrels)
    except trec.TrecFormatError as exc:
        raise CalibrationError(str(exc)) from None
    for qid, grades in raw.items():
        if not qid.isdigit() or int(qid) >= len(keys):
            line = _first_line_of(qrels, qid)
            raise CalibrationError(
                f"{qrels}:{line}: query {qid!r} is not in the recording (a qid is the 0-based position of a "
                f"query in it; it holds {len(keys)})"
            )
        target = out.setdefault(keys[int(qid)], {})
        for url, grade in grades.items():
            key = dedup_key(url)
            target[key] = max(grade, target.get(key, grade))
    return out


def _first_line_of(path: Path, qid: str) -> int:
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.split()[:1] == [qid]:
            return number
    return 0


def problem_from_recording(
    recording: Path,
    qrels: Path,
    config: RankingConfig | None = None,
    now: dt.datetime | None = None,
) -> tuple[Problem, list[str]]:
    """The problem over the recording's judged queries with a relevant row, each run through the pipeline up to
    the ranker (the replay source, limit 8, at a fixed clock) as ``serpfuse bench`` runs it."""
    from serpfuse.bench.judged_recording import LIMIT, JudgmentsError, recorded_rows
    from serpfuse.models import SearchRequest
    from serpfuse.pipeline import ranking_inputs, relevance_gate
    from serpfuse.ranking.query import analyze_query
    from serpfuse.sources.fanout import fan_out
    from serpfuse.sources.replay import ReplaySource

    config = config or default_config()
    now = now or dt.datetime.now(dt.UTC)
    grades = recording_judgments(recording, qrels)
    try:
        rows, _ = recorded_rows(recording)
        source = ReplaySource(recording)
    except (JudgmentsError, OSError) as exc:
        raise CalibrationError(str(exc).splitlines()[0]) from None
    caches, notes = [], []
    for qid, (key, (text, _)) in enumerate(rows.items()):
        judged = grades.get(key)
        if not judged or not any(g >= 1 for g in judged.values()):
            continue
        request = SearchRequest(query=text, limit=LIMIT)
        query = analyze_query(text)
        gate = relevance_gate(query, config.filters) if config.filters.cjk_gate else None
        fanout = asyncio.run(fan_out(source, request, query, gate=gate))
        inputs = ranking_inputs(fanout.answers, request, config=config, query=query, now=now, fanout=fanout)
        caches.append(cache_ranking_inputs(str(qid), inputs, judged))
    unmatched = sum(1 for key in grades if key not in rows)
    if unmatched:
        notes.append(f"{unmatched} judged queries are not in the recording (skipped)")
    return Problem(caches, config), notes
