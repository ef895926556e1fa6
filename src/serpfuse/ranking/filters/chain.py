"""The filter stage: run every filter in order, record why each dropped row was dropped, apply the fallback.

Order: domains, timerange, cjk_gate (hard: what the caller asked for and what is not even about the query),
then junk, then the relevance guards (the coverage guard, filters.coverage_rule picking the relevance guard
or the exact-token one, then geo). A relevance guard may look at the whole pool of non-junk rows first (``for_pool``)
and decide that no row is about the query; that verdict is final. Otherwise, when the relevance guards leave
nothing, the non-junk fallback may show the non-junk rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from serpfuse.ranking.context import FilterContext
from serpfuse.ranking.filters.base import Filter
from serpfuse.ranking.filters.cjk_gate import CJK_GATE
from serpfuse.ranking.filters.coverage import COVERAGE
from serpfuse.ranking.filters.domains import DOMAINS
from serpfuse.ranking.filters.geo import GEO
from serpfuse.ranking.filters.junk import ECHO, JUNK
from serpfuse.ranking.filters.relevance import RELEVANCE
from serpfuse.ranking.filters.timerange import TIMERANGE
from serpfuse.ranking.pool import PoolTerms, analyze_pool
from serpfuse.ranking.types import Candidate, Cut


@dataclass
class FilterOutcome:
    kept: list[Candidate]
    cut: dict[str, Cut]  # candidate key -> the filter that dropped it and why
    warnings: list[str] = field(default_factory=list)
    fallback_used: bool = False
    demoted: dict[str, str] = field(default_factory=dict)  # kept candidate key -> why it ranks lower
    notes: dict[str, str] = field(default_factory=dict)  # kept candidate key -> how a guard read it
    pool: PoolTerms | None = None  # the query read against the non-junk rows, for the ranker


def bind_to_pool(flt: Filter, pool: Sequence[Candidate], ctx: FilterContext) -> Filter:
    """The filter itself, or, for one that judges the pool as a whole, its bound form for this pool."""
    for_pool = getattr(flt, "for_pool", None)
    return for_pool(pool, ctx) if for_pool is not None else flt


def _run(
    flt: Filter, candidates: list[Candidate], ctx: FilterContext, cut: dict[str, Cut]
) -> list[Candidate]:
    idle = getattr(flt, "idle", None)
    if idle is not None and idle(ctx):  # it cuts nothing for this request: no row is asked
        return list(candidates)
    kept = []
    for cand in candidates:
        reason = flt.check(cand, ctx)
        if reason is None:
            kept.append(cand)
        else:
            cut[cand.key] = Cut(step=flt.name, reason=reason)
    return kept


def enabled_filters(ctx: FilterContext) -> tuple[list[Filter], list[Filter], list[Filter]]:
    """(hard, junk, relevance) filters switched on by the config, each group in running order."""
    cfg = ctx.config
    hard: list[Filter] = [DOMAINS, TIMERANGE, *([CJK_GATE] if cfg.cjk_gate else [])]
    junk: list[Filter] = [JUNK] if cfg.junk or cfg.echo else []  # the echo rule is reported as junk
    guard: Filter = RELEVANCE if cfg.coverage_rule == "relevance" else COVERAGE
    relevance: list[Filter] = [*([guard] if cfg.coverage else []), *([GEO] if cfg.geo else [])]
    return hard, junk, relevance


@dataclass
class Screened:
    """The rows past the caller's constraints and the junk rules, before any row is judged against the query."""

    kept: list[Candidate]  # not junk: the rows the pool analysis reads
    listed: list[Candidate]  # past the caller's constraints: every row an engine's list holds, junk included
    cut: dict[str, Cut]


def constrain(candidates: list[Candidate], ctx: FilterContext, cut: dict[str, Cut]) -> list[Candidate]:
    """The hard filters alone: what the caller asked for (domains, dates) and the CJK gate. Each looks at one
    row at a time, so this costs time linear in the rows whatever they hold."""
    hard, _, _ = enabled_filters(ctx)
    rows = candidates
    for flt in hard:
        rows = _run(flt, rows, ctx, cut)
    return rows


def screen(candidates: list[Candidate], ctx: FilterContext) -> Screened:
    """The first half of the filter stage: the hard filters, then the junk rules."""
    _, junk, _ = enabled_filters(ctx)
    cut: dict[str, Cut] = {}
    rows = listed = constrain(candidates, ctx, cut)
    for flt in junk:
        rows = _run(flt, rows, ctx, cut)
    return Screened(kept=rows, listed=listed, cut=cut)


def apply_filters(candidates: list[Candidate], ctx: FilterContext) -> FilterOutcome:
    """The whole filter stage on its own, the pool read between its halves as the pipeline does."""
    screened = screen(candidates, ctx)
    ctx.pool = analyze_pool(
        screened.kept, ctx.query, ctx.request.language, listed=screened.listed, cfg=ctx.config
    )
    return judge(screened, ctx)


def judge(screened: Screened, ctx: FilterContext) -> FilterOutcome:
    """The second half, once the pool is read (``ctx.pool``): the echo rule, the relevance guards, the fallback."""
    _, junk, relevance = enabled_filters(ctx)
    cut = dict(screened.cut)
    warnings: list[str] = []
    before_junk, rows = screened.listed, screened.kept
    if ctx.config.echo:
        rows = _run(ECHO, rows, ctx, cut)
    non_junk = rows
    verdicts: list[str] = []
    demoted: dict[str, str] = {}
    notes: dict[str, str] = {}
    for flt in relevance:
        bound = bind_to_pool(flt, rows, ctx)
        rows = _run(bound, rows, ctx, cut)
        if verdict := getattr(bound, "verdict", None):
            verdicts.append(verdict)
        demoted.update(getattr(bound, "demoted", {}))
        notes.update(getattr(bound, "notes", {}))

    if before_junk and not non_junk:
        # A reranker could fall back to the raw rows when every row is junk; serpfuse deliberately does not: an
        # agent is better served by an empty answer it can retry than by dictionary pages and shop homepages.
        warnings.append(f"all {len(before_junk)} results were junk; none is shown")
        return FilterOutcome(kept=[], cut=cut, warnings=warnings, pool=ctx.pool)

    if non_junk and not rows and verdicts:
        # The pool gate found that no row is about the query: falling back would show exactly those rows.
        warnings.append(f"{verdicts[0]}; none of {len(non_junk)} results is shown")
        return FilterOutcome(kept=[], cut=cut, warnings=warnings, pool=ctx.pool)

    if non_junk and not rows and ctx.config.fallback_when_empty:
        # The non-junk fallback: when the relevance guards leave nothing, show the non-junk rows rather than
        # nothing, and say so; they are no longer "cut".
        for cand in non_junk:
            cut.pop(cand.key, None)
        steps = " and ".join(f.name for f in relevance)
        warnings.append(
            f"no result passed the {steps} filters; showing {len(non_junk)} results that are only known not to be junk"
        )
        return FilterOutcome(
            kept=list(non_junk), cut=cut, warnings=warnings, fallback_used=True, pool=ctx.pool
        )

    kept = {c.key for c in rows}
    demoted = {key: why for key, why in demoted.items() if key in kept}
    notes = {key: why for key, why in notes.items() if key in kept}
    if verdicts and rows:
        warnings.append(f"{verdicts[0]}; {len(rows)} results the engines agree on are shown")
    return FilterOutcome(kept=rows, cut=cut, warnings=warnings, demoted=demoted, notes=notes, pool=ctx.pool)
