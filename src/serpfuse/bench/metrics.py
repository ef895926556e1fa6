"""Ranking metrics over one ranked list of docids and one query's judgments, in trec_eval's conventions.

Every function is pure: ``ranked`` is the list as shown (best first, already ordered; ``order_by_score`` turns
scored pairs into that order the way trec_eval does), ``qrels`` maps docid -> grade. A document is relevant when
its grade is at least ``level`` (trec_eval's ``-l``; default 1). Unjudged documents count as grade 0.

A query with no relevant document scores 0 on every measure here, as in trec_eval (it divides by the number of
relevant documents only when that number is positive); whether such a query enters an average is the caller's
choice (trec_eval averages over every query in both the run and the qrels; ``serpfuse bench`` reports ranking
quality only on the queries with a relevant row).

Checked against NIST trec_eval's own expected outputs in tests/test_trec_eval.py.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

Qrels = Mapping[str, int]
Gain = Literal["linear", "exp"]


def order_by_score(scored: Iterable[tuple[str, float]]) -> list[str]:
    """Docids ordered as trec_eval orders a run: score descending, ties by docid descending (rank ignored)."""
    # Two stable sorts: secondary key first. Sorting the docid descending then the score descending keeps
    # trec_eval's tie rule without negating strings.
    by_docid = sorted(scored, key=lambda pair: pair[0], reverse=True)
    return [docid for docid, _ in sorted(by_docid, key=lambda pair: pair[1], reverse=True)]


def num_relevant(qrels: Qrels, level: int = 1) -> int:
    return sum(1 for grade in qrels.values() if grade >= level)


def _hits(ranked: Sequence[str], qrels: Qrels, k: int | None, level: int) -> list[bool]:
    shown = ranked if k is None else ranked[:k]
    return [qrels.get(docid, 0) >= level for docid in shown]


def precision_at(ranked: Sequence[str], qrels: Qrels, k: int, level: int = 1) -> float:
    """P@k: relevant rows in the top k over k (trec_eval's P_k divides by k even when fewer were retrieved)."""
    return sum(_hits(ranked, qrels, k, level)) / k


def recall_at(ranked: Sequence[str], qrels: Qrels, k: int, level: int = 1) -> float:
    total = num_relevant(qrels, level)
    return sum(_hits(ranked, qrels, k, level)) / total if total else 0.0


def reciprocal_rank(ranked: Sequence[str], qrels: Qrels, k: int | None = None, level: int = 1) -> float:
    """MRR@k for one query: 1/rank of the first relevant row within the top k, 0 when there is none."""
    for position, hit in enumerate(_hits(ranked, qrels, k, level), start=1):
        if hit:
            return 1.0 / position
    return 0.0


def average_precision(ranked: Sequence[str], qrels: Qrels, k: int | None = None, level: int = 1) -> float:
    """AP (trec_eval's map for one query): mean precision at each relevant row, over all relevant docs."""
    total = num_relevant(qrels, level)
    if not total:
        return 0.0
    found = 0
    summed = 0.0
    for position, hit in enumerate(_hits(ranked, qrels, k, level), start=1):
        if hit:
            found += 1
            summed += found / position
    return summed / total


def gain_of(grade: int, gain: Gain = "linear") -> float:
    """trec_eval's ndcg uses the grade itself ("linear"); "exp" is Burges et al.'s 2^rel - 1. Negative -> 0."""
    if grade <= 0:
        return 0.0
    return float(grade) if gain == "linear" else float(2**grade - 1)


def dcg(grades: Iterable[int], gain: Gain = "linear") -> float:
    # Rank r (1-based) is discounted by log2(r + 1), so rank 1 is undiscounted, as trec_eval's ndcg_cut.
    return sum(
        gain_of(grade, gain) / math.log2(position + 1) for position, grade in enumerate(grades, start=1)
    )


def ndcg_at(ranked: Sequence[str], qrels: Qrels, k: int | None, gain: Gain = "linear") -> float:
    """nDCG@k: DCG of the top k over the DCG of the ideal top k built from every judged document.

    ``k=None`` is trec_eval's ``ndcg`` (whole list against the whole ideal ranking).
    """
    ideal_grades = sorted((g for g in qrels.values() if g > 0), reverse=True)
    ideal = dcg(ideal_grades if k is None else ideal_grades[:k], gain)
    if ideal <= 0:
        return 0.0
    shown = ranked if k is None else ranked[:k]
    return dcg((qrels.get(docid, 0) for docid in shown), gain) / ideal


def irrelevant_at(
    ranked: Sequence[str], qrels: Qrels, k: int, unjudged_irrelevant: bool = True, level: int = 1
) -> int:
    """Rows in the top k judged below ``level``; unjudged rows count too unless ``unjudged_irrelevant`` is off."""
    count = 0
    for docid in ranked[:k]:
        if docid in qrels:
            count += qrels[docid] < level
        else:
            count += unjudged_irrelevant
    return count


def junk_at(junk_flags: Sequence[bool], k: int) -> int:
    """Junk@k: the number of rows flagged junk among the top k (summed over queries by the caller)."""
    return sum(1 for flag in junk_flags[:k] if flag)


def clean_rel_at(junk_flags: Sequence[bool], covered_flags: Sequence[bool], k: int) -> float:
    """CleanRel@k: rows in the top k that are not junk and pass coverage, always divided by k."""
    if len(junk_flags) != len(covered_flags):
        raise ValueError("junk_flags and covered_flags must describe the same rows")
    clean = sum(
        1 for junk, covered in zip(junk_flags[:k], covered_flags[:k], strict=True) if covered and not junk
    )
    return clean / k


def kept(
    baseline: Sequence[str], ours: Sequence[str], qrels: Qrels, k: int, level: int = 1
) -> tuple[int, int]:
    """(kept, shown): relevant rows the baseline's top k showed, and how many of them stay in our top k."""
    ours_top = set(ours[:k])
    shown = [docid for docid in baseline[:k] if qrels.get(docid, 0) >= level]
    return sum(1 for docid in shown if docid in ours_top), len(shown)


def rel_shown_at(ranked: Sequence[str], qrels: Qrels, pool: Iterable[str], k: int, level: int = 1) -> float:
    """RelShown@k: relevant rows of the candidate ``pool`` shown in the top k, over min(k, relevant
    rows in the pool); 0 when the pool holds none (callers average it over queries that have one)."""
    relevant = {docid for docid in pool if qrels.get(docid, 0) >= level}
    if not relevant:
        return 0.0
    shown = {docid for docid in ranked[:k] if docid in relevant}
    return len(shown) / min(k, len(relevant))


def mean(values: Iterable[float]) -> float:
    items = list(values)
    return sum(items) / len(items) if items else 0.0
