"""TREC run and qrels files: read, write, and turn a run into ranked lists the way trec_eval does.

Run line: ``qid Q0 docid rank score tag`` (whitespace separated). Qrels line: ``qid iter docid rel``.
trec_eval ignores a run's rank column and orders by score descending, ties by docid descending; so does
``ranked_lists``. A docid repeated within one query keeps its highest score (trec_eval would refuse the
file; a fusion tool fed real-world runs should not).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from serpfuse.bench import metrics as m
from serpfuse.bench.metrics import order_by_score
from serpfuse.errors import InputError
from serpfuse.files import write_private

Run = dict[str, dict[str, float]]  # qid -> docid -> score
QrelsSet = dict[str, dict[str, int]]  # qid -> docid -> grade


class TrecFormatError(InputError):
    """A line that is not a run/qrels line, with the file and line number."""


@dataclass(frozen=True)
class RunLine:
    qid: str
    docid: str
    rank: int
    score: float
    tag: str


def _lines(path: Path) -> Iterable[tuple[int, list[str]]]:
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            fields = line.split()
            if fields and not fields[0].startswith("#"):
                yield number, fields


def parse_run_line(fields: Sequence[str]) -> RunLine:
    # trec_eval ignores anything after the tag, and so do we (its own test run has text there)
    if len(fields) < 6:
        raise ValueError(f"expected 6 fields (qid Q0 docid rank score tag), got {len(fields)}")
    qid, _, docid, rank, score, tag = fields[:6]
    return RunLine(qid=qid, docid=docid, rank=int(rank), score=float(score), tag=tag)


def read_run(path: str | Path) -> Run:
    """qid -> {docid: score}; a repeated docid keeps its highest score."""
    path = Path(path)
    run: Run = {}
    for number, fields in _lines(path):
        try:
            line = parse_run_line(fields)
        except ValueError as exc:
            raise TrecFormatError(f"{path}:{number}: {exc}") from None
        scores = run.setdefault(line.qid, {})
        scores[line.docid] = max(line.score, scores.get(line.docid, line.score))
    return run


def read_qrels(path: str | Path) -> QrelsSet:
    """qid -> {docid: grade}; the iteration column is ignored, as trec_eval does."""
    path = Path(path)
    qrels: QrelsSet = {}
    for number, fields in _lines(path):
        if len(fields) != 4:
            raise TrecFormatError(
                f"{path}:{number}: expected 4 fields (qid iter docid rel), got {len(fields)}"
            )
        qid, _, docid, grade = fields
        try:
            qrels.setdefault(qid, {})[docid] = int(grade)
        except ValueError:
            raise TrecFormatError(f"{path}:{number}: relevance {grade!r} is not an integer") from None
    return qrels


def ranked_lists(run: Mapping[str, Mapping[str, float]]) -> dict[str, list[str]]:
    """qid -> docids best first, in trec_eval's order (score desc, ties docid desc)."""
    return {qid: order_by_score(scores.items()) for qid, scores in run.items()}


def per_query_lists(runs: Mapping[str, Run], depth: int | None) -> dict[str, dict[str, list[str]]]:
    """qid -> engine -> docids best first, each cut to ``depth``; an engine without the query is left out."""
    out: dict[str, dict[str, list[str]]] = {}
    for engine, run in runs.items():
        for qid, ranked in ranked_lists(run).items():
            if ranked:
                out.setdefault(qid, {})[engine] = ranked[:depth] if depth else ranked
    return out


def qid_order(qids: Iterable[str]) -> list[str]:
    """Numeric qids numerically, the rest after them as text (so 2 comes before 10)."""

    def key(qid: str) -> tuple[int, int, str]:
        return (0, int(qid), "") if re.fullmatch(r"\d+", qid) else (1, 0, qid)

    return sorted(set(qids), key=key)


def format_run_line(qid: str, docid: str, rank: int, score: float, tag: str) -> str:
    # every digit the float holds (the shortest text that reads back as it): a reader re-sorts by the score, so
    # rows the fusion tells apart by a last bit must not be written as ties
    return f"{qid} Q0 {docid} {rank} {score!r} {tag}"


def run_lines(ranked: Mapping[str, Sequence[tuple[str, float]]], tag: str) -> list[str]:
    """Lines for qid -> [(docid, score)] best first; ranks are 1-based positions in that order."""
    lines: list[str] = []
    for qid in qid_order(ranked):
        for rank, (docid, score) in enumerate(ranked[qid], start=1):
            lines.append(format_run_line(qid, docid, rank, score, tag))
    return lines


def write_run(path: str | Path, ranked: Mapping[str, Sequence[tuple[str, float]]], tag: str) -> None:
    text = "\n".join(run_lines(ranked, tag))
    write_private(Path(path), text + "\n" if text else "")


def write_qrels(path: str | Path, qrels: Mapping[str, Mapping[str, int]]) -> None:
    lines = [f"{qid} 0 {docid} {grade}" for qid in qid_order(qrels) for docid, grade in qrels[qid].items()]
    write_private(Path(path), "\n".join(lines) + ("\n" if lines else ""))


def check_tag(tag: str) -> str:
    """A run tag is one whitespace-free field; refuse anything else rather than write a broken file."""
    if not tag or any(ch.isspace() for ch in tag):
        raise ValueError(f"run tag must be one non-empty word: {tag!r}")
    return tag


# --- trec_eval's measures by name ----------------------------------------------------------------------------


def _cutoff(name: str, prefix: str) -> int | None:
    rest = name.removeprefix(prefix)
    return int(rest) if rest.isdigit() and int(rest) > 0 else None


def measure(name: str, ranked: Sequence[str], qrels: Mapping[str, int], level: int = 1) -> float:
    """One trec_eval measure by its trec_eval name: map, map_cut_K, P_K, recall_K, recip_rank, ndcg,
    ndcg_cut_K, success_K, num_ret, num_rel, num_rel_ret. ``level`` is trec_eval's ``-l``."""
    if name == "map":
        return m.average_precision(ranked, qrels, level=level)
    if name == "recip_rank":
        return m.reciprocal_rank(ranked, qrels, level=level)
    if name == "ndcg":
        return m.ndcg_at(ranked, qrels, None)
    if name == "num_ret":
        return float(len(ranked))
    if name == "num_rel":
        return float(m.num_relevant(qrels, level))
    if name == "num_rel_ret":
        return float(sum(1 for docid in ranked if qrels.get(docid, 0) >= level))
    for prefix, fn in (
        ("map_cut_", lambda k: m.average_precision(ranked, qrels, k=k, level=level)),
        ("P_", lambda k: m.precision_at(ranked, qrels, k, level)),
        ("recall_", lambda k: m.recall_at(ranked, qrels, k, level)),
        ("ndcg_cut_", lambda k: m.ndcg_at(ranked, qrels, k)),
        ("success_", lambda k: float(m.reciprocal_rank(ranked, qrels, k, level) > 0)),
    ):
        if name.startswith(prefix) and (k := _cutoff(name, prefix)) is not None:
            return fn(k)
    raise ValueError(f"unknown measure: {name!r}")


SUMMED_MEASURES = frozenset({"num_ret", "num_rel", "num_rel_ret"})  # trec_eval sums these for "all"


def evaluate(
    ranked: Mapping[str, Sequence[str]],
    qrels: Mapping[str, Mapping[str, int]],
    measures: Sequence[str],
    level: int = 1,
    complete: bool = False,
) -> dict[str, dict[str, float]]:
    """Per query and ``"all"``, as ``trec_eval -q`` prints them.

    Evaluated queries are those in both the run and the qrels (a run's query without judgments is skipped);
    ``complete`` is trec_eval's ``-c``: every judged query counts, with an empty list when the run lacks it.
    Counts are summed over queries, every other measure is the arithmetic mean.
    """
    qids = [qid for qid in qid_order(qrels) if complete or qid in ranked]
    per_query = {
        qid: {name: measure(name, ranked.get(qid, []), qrels[qid], level) for name in measures}
        for qid in qids
    }
    summary: dict[str, float] = {}
    for name in measures:
        values = [per_query[qid][name] for qid in qids]
        summary[name] = (
            sum(values) if name in SUMMED_MEASURES else (sum(values) / len(values) if values else 0.0)
        )
    return {**per_query, "all": summary}
