"""The selection stage, the same for every ranker: the score floor, then top-k with a per-domain cap or greedy
MMR over shingle Jaccard with a sparse-text domain cap.

A ranker orders candidates by a quality score; this stage decides which of them fill the ``limit`` slots.
Every row left out gets a ``Cut`` naming the step that left it out (``min_score``, ``per_domain``,
``diversity``, ``limit``), so ``--explain`` can show why.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from serpfuse.ranking.types import Cut, Scored, Selection
from serpfuse.text import RowForm, shingle_tokens

if TYPE_CHECKING:
    from serpfuse.ranking.context import RankContext
    from serpfuse.ranking.rankers.base import Ranker

Shingles = frozenset[str]


def shingles(text: str, n: int = 3, min_tokens: int = 8) -> Shingles | None:
    """Word/CJK-character n-shingles of ``text``; None when it has fewer than ``min_tokens`` tokens.

    A short text gives too few shingles for Jaccard to mean anything, so it gets none and the caller
    falls back to a per-domain cap instead.
    """
    return shingles_of_tokens(shingle_tokens(text), n, min_tokens)


def shingles_of_tokens(tokens: Sequence[str], n: int, min_tokens: int) -> Shingles | None:
    if len(tokens) < min_tokens:
        return None
    if n < 1:
        return frozenset(" ".join(tokens[i : i + n]) for i in range(len(tokens) - n + 1))
    # each run of n tokens, by zipping the token list with itself shifted (the join and the loop run in C)
    return frozenset(map(" ".join, zip(*(tokens[k:] for k in range(n)), strict=False)))


def row_shingles(row: Scored, n: int = 3, min_tokens: int = 8) -> Shingles | None:
    """Shingles of a row's title and snippet, the text an agent actually sees (once per row text)."""

    def compute(form: RowForm) -> Shingles | None:
        return shingles_of_tokens(form.shingle_tokens, n, min_tokens)

    return row.candidate.form.derived(("shingles", n, min_tokens), compute)


def jaccard(a: Shingles | None, b: Shingles | None) -> float:
    """|a ∩ b| / |a ∪ b|; 0 when either side has no shingles (no evidence of redundancy)."""
    if not a or not b:
        return 0.0
    overlap = len(a & b)
    return overlap / (len(a) + len(b) - overlap)


def single_site(include_domains: Iterable[str]) -> bool:
    """True when the caller asked for exactly one site: then many rows of that domain are the point."""
    return len({d.lower() for d in include_domains}) == 1


@dataclass
class _Pending:
    row: Scored
    shingles: Shingles | None
    redundancy: float = 0.0  # max Jaccard against the rows selected so far, updated as each one is picked


def mmr_select(
    rows: Sequence[Scored],
    *,
    limit: int,
    penalty: float,
    shingles_of: Callable[[Scored], Shingles | None],
    sparse_domain_cap: int | None,
) -> Selection:
    """Greedy MMR over ``rows``: each step takes the row with the best ``score - penalty * max Jaccard``.

    The Jaccard is taken only against rows already selected, so a row that is never chosen neither
    consumes quota nor lowers anyone's marginal score. Rows without shingles (sparse text) are instead
    admitted only while fewer than ``sparse_domain_cap`` selected rows share their domain
    (``None`` = no cap). Equal marginal scores go to the smaller candidate key, so the result does not
    depend on the input order. Each selected row is returned as a copy carrying its ``selection_score``.
    """
    pending = [_Pending(r, shingles_of(r)) for r in rows]
    per_domain: dict[str, int] = {}
    out: list[Scored] = []

    def capped(p: _Pending) -> bool:
        return (
            p.shingles is None
            and sparse_domain_cap is not None
            and per_domain.get(p.row.candidate.domain, 0) >= sparse_domain_cap
        )

    while pending and len(out) < limit:
        best: int | None = None
        best_score = -math.inf
        for i, p in enumerate(pending):
            if capped(p):
                continue
            marginal = p.row.score - penalty * p.redundancy
            if (
                best is None
                or marginal > best_score
                or (marginal == best_score and p.row.candidate.key < pending[best].row.candidate.key)
            ):
                best, best_score = i, marginal
        if best is None:
            break
        chosen = pending.pop(best)
        if chosen.shingles:  # only the new pick can raise a row's redundancy: no pair is compared twice
            for p in pending:
                p.redundancy = max(p.redundancy, jaccard(p.shingles, chosen.shingles))
        out.append(replace(chosen.row, selection_score=best_score))
        domain = chosen.row.candidate.domain
        per_domain[domain] = per_domain.get(domain, 0) + 1

    cut: dict[str, Cut] = {}
    for p in pending:
        if capped(p):
            cut[p.row.candidate.key] = Cut(
                "diversity", f"sparse text: already {sparse_domain_cap} rows from {p.row.candidate.domain}"
            )
        else:
            cut[p.row.candidate.key] = Cut("limit", f"list already holds {limit} rows")
    return Selection(selected=out, cut=cut, truncated=bool(pending))


def min_score_floor(rows: Iterable[Scored], min_score: float) -> tuple[list[Scored], dict[str, Cut]]:
    """Keep rows with a finite positive quality score at or above ``min_score``; cut the others."""
    kept: list[Scored] = []
    cut: dict[str, Cut] = {}
    floor = max(0.0, min_score)
    for r in rows:
        if math.isfinite(r.score) and r.score > 0 and r.score >= floor:
            kept.append(r)
        else:
            cut[r.candidate.key] = Cut("min_score", f"score {r.score:.6g} is below min_score {floor:g}")
    return kept, cut


def select_top(scored: Sequence[Scored], limit: int, per_domain: int = 0) -> Selection:
    """The first ``limit`` rows in the given order, at most ``per_domain`` per domain (0 = no cap).

    For rankers whose order is already final; ``selection_score`` is the row's own score.
    """
    out: list[Scored] = []
    cut: dict[str, Cut] = {}
    counts: dict[str, int] = {}
    for r in scored:
        domain = r.candidate.domain or r.candidate.host
        if per_domain and counts.get(domain, 0) >= per_domain:
            rows = "a row" if per_domain == 1 else f"{per_domain} rows"
            cut[r.candidate.key] = Cut("per_domain", f"already {rows} from {domain}")
        elif len(out) >= limit:
            cut[r.candidate.key] = Cut("limit", f"list already holds {limit} rows")
        else:
            counts[domain] = counts.get(domain, 0) + 1
            out.append(replace(r, selection_score=r.score))
    return Selection(selected=out, cut=cut, truncated=bool(cut))


def select(ranked: Sequence[Scored], ranker: Ranker, ctx: RankContext) -> Selection:
    """The final list from the ranker's order: rows below ``min_score`` (or scoring nothing) are cut first
    and take no slot, then ``selection.method`` fills ``limit`` slots ("auto": the ranker's ``selects_by``)."""
    cfg = ctx.config.selection
    eligible, floor_cut = min_score_floor(ranked, ctx.request.min_score)
    method = ranker.selects_by if cfg.method == "auto" else cfg.method
    if method == "mmr":
        n, min_tokens = cfg.shingle_n, cfg.shingle_min_tokens
        one_site = single_site({*ctx.request.include_domains, *ctx.query.include_domains})
        picked = mmr_select(
            eligible,
            limit=ctx.request.limit,
            penalty=cfg.diversity_penalty,
            shingles_of=lambda r: row_shingles(r, n, min_tokens),
            sparse_domain_cap=None if one_site else cfg.sparse_domain_cap,
        )
    else:
        own_cap = getattr(ranker, "per_domain", 0)  # a ranker may declare its own cap (lexical: one a domain)
        per_domain = own_cap if cfg.per_domain is None else cfg.per_domain
        picked = select_top(eligible, ctx.request.limit, per_domain)
    return Selection(selected=picked.selected, cut={**floor_cut, **picked.cut}, truncated=picked.truncated)
