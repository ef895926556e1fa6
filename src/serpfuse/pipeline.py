"""The whole search, stage by stage: fan out, normalise, filter, fuse, select, respond.

I/O happens only in the fan-out (through a Source); everything after it is a pure function of the answers,
the request, the ranking configuration and the clock.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from collections import defaultdict
from dataclasses import dataclass
from functools import cache
from typing import Any

from serpfuse.config import SCORE_VERSION, FilterConfig, RankingConfig
from serpfuse.models import (
    CandidateExplanation,
    EngineAnswer,
    EngineReport,
    FusedResult,
    SearchRequest,
    SearchResponse,
)
from serpfuse.ranking.candidates import build_candidates, fold_engine_names
from serpfuse.ranking.context import FilterContext, RankContext
from serpfuse.ranking.filters import FilterOutcome, constrain, judge, passes_cjk_gate, screen
from serpfuse.ranking.filters.timerange import undated
from serpfuse.ranking.pool import analyze_pool, spelling_distance
from serpfuse.ranking.query import QueryAnalysis, analyze_query
from serpfuse.ranking.rankers import get_ranker
from serpfuse.ranking.rankers.base import demote
from serpfuse.ranking.selection import select
from serpfuse.ranking.specificity import load_tables, tables_loaded
from serpfuse.ranking.types import Candidate, Cut, Scored
from serpfuse.sources.base import Source
from serpfuse.sources.fanout import DEFAULT_DEADLINE_S, FanoutResult, fan_out
from serpfuse.urls import suffix_list
from serpfuse.workers.ranking import in_thread, off_loop, ranks_here

# How an engine's several answers (one per query variant) sum up: the best status wins.
_STATUS_ORDER = [
    "ok",
    "empty",
    "decoy",
    "rate-limited",
    "challenge",
    "timeout",
    "parse-timeout",
    "error",
    "skipped",
]


def engine_reports(answers: list[EngineAnswer]) -> list[EngineReport]:
    by_engine: dict[str, list[EngineAnswer]] = defaultdict(list)
    for a in answers:
        by_engine[a.engine].append(a)
    reports = []
    for engine, items in by_engine.items():
        best = min(items, key=lambda a: _STATUS_ORDER.index(a.status))
        reasons = [a.reason for a in items if a.reason and a.status == best.status]
        reports.append(
            EngineReport(
                engine=engine,
                status=best.status,
                latency_ms=round(max(a.latency_ms for a in items), 1),
                rows=sum(len(a.rows) for a in items),
                reason=reasons[0] if reasons else None,
                tier=best.tier,
            )
        )
    return reports


def explain_row(scored: Scored, strategy: str, demoted: str | None = None, note: str | None = None) -> str:
    """One line a person (or an LLM) can read: who ranked it where, and what moved its score."""
    ranks = ", ".join(
        f"{e} #{r}" for e, r in sorted(scored.candidate.engine_ranks.items(), key=lambda t: (t[1], t[0]))
    )
    n = len(scored.candidate.engine_ranks)
    agree = f"{n} engines agree" if n > 1 else "1 engine"
    extra = []
    if scored.metadata_delta:
        extra.append(f"metadata {scored.metadata_delta:+.3f}")
    if scored.selection_score is not None and abs(scored.selection_score - scored.score) > 1e-12:
        extra.append(f"diversity {scored.selection_score - scored.score:+.3f}")
    if demoted:
        extra.append(f"demoted x{scored.parts.get('demoted', 1.0):g}: {demoted}")
    if note:
        extra.append(note)
    tail = f" ({', '.join(extra)})" if extra else ""
    return f"{ranks}; {agree}; {strategy} score {scored.score:.3f}{tail}"


def _result(
    scored: Scored, strategy: str, demoted: str | None = None, note: str | None = None
) -> FusedResult:
    c = scored.candidate
    return FusedResult(
        url=c.url,
        title=c.title,
        snippet=c.snippet,
        domain=c.domain,
        published=c.published,
        date_status=c.date_status,
        score=scored.score,
        evidence_score=scored.evidence,
        selection_score=scored.selection_score if scored.selection_score is not None else scored.score,
        metadata_delta=scored.metadata_delta,
        engines=c.engines,
        engine_ranks=dict(sorted(c.engine_ranks.items())),
        contributions={k: v for k, v in sorted(scored.contributions.items()) if v},
        provenance=c.observations,
        reason=explain_row(scored, strategy, demoted, note),
    )


def _explanations(
    candidates: list[Candidate],
    filter_cuts: dict[str, Cut],
    ranked: list[Scored],
    selected: list[Scored],
    select_cuts: dict[str, Cut],
    demoted: dict[str, str],
) -> list[CandidateExplanation]:
    by_key = {s.candidate.key: s for s in ranked}
    position = {s.candidate.key: i for i, s in enumerate(selected, start=1)}
    out = []
    for c in candidates:
        s = by_key.get(c.key)
        cut = filter_cuts.get(c.key) or select_cuts.get(c.key)
        if s is None and cut is None:
            cut = Cut("rank", "scored zero by the ranker")
        out.append(
            CandidateExplanation(
                url=c.url,
                title=c.title,
                snippet=c.snippet,
                domain=c.domain,
                engines=c.engines,
                engine_ranks=c.engine_ranks,
                score=s.score if s else None,
                score_parts=s.parts if s else {},
                selected=c.key in position,
                position=position.get(c.key),
                cut_by=None if c.key in position else (cut.step if cut else "limit"),
                cut_reason=None
                if c.key in position
                else "; ".join(
                    filter(None, [cut.reason if cut else "below the result limit", demoted.get(c.key)])
                ),
            )
        )
    out.sort(key=lambda e: (e.position is None, e.position or 0, -(e.score or 0.0), e.url))
    return out


@dataclass
class RankingInputs:
    """What the ranker is handed for one search: every candidate, what the filters kept, cut and demoted, and
    the context. A pure function of the answers, the request, the configuration and the clock."""

    answers: list[EngineAnswer]  # as ranked: a broker's engines beyond the cap folded into one voter
    candidates: list[Candidate]
    outcome: FilterOutcome
    ctx: RankContext
    filter_ctx: FilterContext
    warnings: list[str]


def ranking_inputs(
    answers: list[EngineAnswer],
    request: SearchRequest,
    *,
    config: RankingConfig,
    query: QueryAnalysis,
    now: dt.datetime,
    fanout: FanoutResult | None = None,
) -> RankingInputs:
    """Everything after the fan-out and before the ranker: normalise, screen, read the pool, filter."""
    warnings = list(fanout.warnings) if fanout else []
    answers = fold_engine_names(answers, config.engine_names_per_answer)
    candidates, invalid = build_candidates(answers, query)
    if invalid:
        warnings.append(f"{invalid} rows had no usable http(s) URL and were dropped")
    filter_ctx = FilterContext(request=request, query=query, config=config.filters, now=now)
    screened = screen(candidates, filter_ctx)
    # The query read against the rows that are not junk, once, for the echo rule, the relevance guard and the
    # ranker (a junk row counts in its engine's list as a row carrying none of the query).
    filter_ctx.pool = analyze_pool(
        screened.kept, query, request.language, listed=screened.listed, cfg=config.filters
    )
    outcome = judge(screened, filter_ctx)
    warnings.extend(outcome.warnings)

    tiers: dict[str, str] = {a.engine: a.tier for a in answers}
    sizes: dict[str, int] = defaultdict(int)
    for a in answers:
        sizes[a.engine] = max(sizes[a.engine], len(a.rows))
    ctx = RankContext(
        request=request,
        query=query,
        config=config,
        now=now,
        engine_tiers=tiers,
        engine_list_sizes=dict(sizes),
        lead_engines=fanout.lead_engines if fanout else None,
        pool=filter_ctx.pool,
    )
    return RankingInputs(answers, candidates, outcome, ctx, filter_ctx, warnings)


def rank_answers(
    answers: list[EngineAnswer],
    request: SearchRequest,
    *,
    config: RankingConfig,
    query: QueryAnalysis | None = None,
    now: dt.datetime | None = None,
    explain: bool = False,
    fanout: FanoutResult | None = None,
) -> SearchResponse:
    """Everything after the fan-out: pure, deterministic, and what offline benchmarks call."""
    t0 = time.perf_counter()
    strategy = request.strategy or config.strategy
    ranker = get_ranker(strategy)
    config = config.with_strategy(strategy)
    query = query or analyze_query(request.query)
    now = now or dt.datetime.now(dt.UTC)
    inputs = ranking_inputs(answers, request, config=config, query=query, now=now, fanout=fanout)
    answers, candidates, outcome = inputs.answers, inputs.candidates, inputs.outcome
    ctx, filter_ctx, warnings = inputs.ctx, inputs.filter_ctx, inputs.warnings
    ranked = demote(ranker.rank(outcome.kept, ctx), outcome.demoted, config.filters.anchor_demotion)
    selection = select(ranked, ranker, ctx)
    results = [
        _result(s, strategy, outcome.demoted.get(s.candidate.key), outcome.notes.get(s.candidate.key))
        for s in selection.selected
    ]
    unchecked = {c.key for c in undated((s.candidate for s in selection.selected), filter_ctx)}
    for s, r in zip(selection.selected, results, strict=True):
        if s.candidate.key in unchecked:
            r.reason += "; undated: the date window could not be checked"
    if unchecked:
        warnings.append(
            f"{len(unchecked)} of {len(results)} results carry no date, so the date window could not be "
            "checked for them"
        )
    if not results:
        warnings.append("no result survived the filters" if candidates else "no engine returned any result")
    return SearchResponse(
        query=request.query,
        strategy=strategy,
        results=results,
        engines=engine_reports(answers),
        warnings=warnings,
        truncated=selection.truncated,
        took_ms=round((time.perf_counter() - t0) * 1000, 1),
        score_version=f"{SCORE_VERSION}/{ranker.score_version}",
        config_fingerprint=config.fingerprint(),
        candidates=_explanations(
            candidates, outcome.cut, ranked, selection.selected, selection.cut, outcome.demoted
        )
        if explain
        else None,
    )


# The ranking may run this long past the search's deadline; past it the search answers with
# ``fallback_ranking``, so a search ends within deadline + grace (+ the fallback's linear time) whatever its rows.
RANK_GRACE_S = 0.2
TABLES_BUDGET_S = 60.0  # loading the word tables is bounded; this only catches a wedged disk
OVERRUN_WARNING = "the ranking ran past the search's deadline"


def plain_rrf(config: RankingConfig) -> RankingConfig:
    """RRF on the ranks alone, for the answer past the deadline: the constant and the learned
    ``[ranking.weights]`` kept; no authority or freshness boost, interleave, region policy or RRF weight table."""
    off = {"authority_boost": 0.0, "freshness_boost": 0.0, "interleave": False, "region_policy": False}
    rrf = config.rrf.model_copy(update={**off, "weights": {}})
    return config.model_copy(update={"strategy": "rrf", "rrf": rrf})


def fallback_ranking(
    answers: list[EngineAnswer],
    request: SearchRequest,
    *,
    config: RankingConfig,
    query: QueryAnalysis,
    now: dt.datetime,
    fanout: FanoutResult | None = None,
) -> SearchResponse:
    """The answer when the ranking did not finish in time: the caller's constraints (domains, dates, the CJK
    gate) and plain RRF, each linear in the rows; no junk, relevance or diversity step. Says so in a warning
    and in every row's reason."""
    t0 = time.perf_counter()
    config = plain_rrf(config)
    answers = fold_engine_names(answers, config.engine_names_per_answer)
    candidates, _ = build_candidates(answers, query)
    filter_ctx = FilterContext(request=request, query=query, config=config.filters, now=now)
    kept = constrain(candidates, filter_ctx, {})
    ctx = RankContext(
        request=request,
        query=query,
        config=config,
        now=now,
        lead_engines=fanout.lead_engines if fanout else None,
    )
    ranker = get_ranker("rrf")
    results = []
    for scored in ranker.rank(kept, ctx)[: request.limit]:
        result = _result(scored, ranker.name)
        result.reason += "; plain RRF, unfiltered: the ranking ran past the deadline"
        results.append(result)
    warnings = [
        *(fanout.warnings if fanout else []),
        f"{OVERRUN_WARNING}: plain RRF, no junk or relevance filter",
    ]
    return SearchResponse(
        query=request.query,
        strategy=ranker.name,
        results=results,
        engines=engine_reports(answers),
        warnings=warnings,
        took_ms=round((time.perf_counter() - t0) * 1000, 1),
        score_version=f"{SCORE_VERSION}/{ranker.score_version}",
        config_fingerprint=config.fingerprint(),
    )


def fell_back(response: SearchResponse) -> bool:
    """Whether ``fallback_ranking`` made this response."""
    return any(w.startswith(OVERRUN_WARNING) for w in response.warnings)


@cache
def default_config() -> RankingConfig:
    """The default ranking configuration, built once per process: building it and hashing its fingerprint
    cost about as much as ranking a search. Shared, so never edited in place (RankingConfig says so too)."""
    return RankingConfig()


def load_tables_for(language: str | None = None) -> None:
    """The word tables, the Public Suffix List and the edit distance the ranking reads, loaded now (each once per
    process). A server's ranking process calls it before it says it is ready (``workers.ranking``)."""
    load_tables(language)
    suffix_list()
    spelling_distance()


def relevance_gate(query: QueryAnalysis, cfg: FilterConfig):
    """The CJK gate on raw rows, used by the fan-out to decide whether an answer was usable."""
    if not query.is_cjk:
        return None
    units, ascii_units = cfg.cjk_gate_units, cfg.cjk_ascii_units
    return lambda row: passes_cjk_gate(query, row.title, row.snippet, row.url, units, ascii_units)


async def search(
    request: SearchRequest,
    *,
    source: Source,
    config: RankingConfig | None = None,
    deadline_s: float = DEFAULT_DEADLINE_S,
    explain: bool = False,
    now: dt.datetime | None = None,
) -> SearchResponse:
    config = config or default_config()
    t0 = time.perf_counter()
    rank_by = t0 + deadline_s + RANK_GRACE_S  # the ranking's own deadline

    def left() -> float:
        return max(0.0, rank_by - time.perf_counter())

    get_ranker(request.strategy or config.strategy)  # a bad strategy fails before any engine is asked
    query = analyze_query(request.query)
    gate = relevance_gate(query, config.filters) if config.filters.cjk_gate else None
    # A process's first search loads the ranking's word tables (about 0.3 s) while the engines are asked, not
    # after the last one answered; later searches find them loaded. A server's ranking process has its own.
    tables = None
    if ranks_here() and not tables_loaded(request.language):
        loading = in_thread(load_tables_for, request.language, budget_s=TABLES_BUDGET_S)
        tables = asyncio.ensure_future(loading)
    kwargs: dict[str, Any] = {"config": config, "query": query, "now": now, "explain": explain}
    fanout = await fan_out(source, request, query, deadline_s=deadline_s, gate=gate)
    try:
        if tables is not None:  # once per process, whatever the rows: not held to the deadline
            await tables
        # Ranking is pure CPU work: off the loop (a server's ranking process, else a thread), so the loop keeps
        # serving other searches' I/O meanwhile. It may always take the grace: the tables may have been loading.
        response = await off_loop(
            rank_answers,
            fanout.answers,
            request,
            budget_s=max(left(), RANK_GRACE_S),
            fanout=fanout,
            **kwargs,
        )
    except TimeoutError:
        response = fallback_ranking(
            fanout.answers,
            request,
            config=config,
            query=query,
            now=now or dt.datetime.now(dt.UTC),
            fanout=fanout,
        )
    response.took_ms = round((time.perf_counter() - t0) * 1000, 1)
    return response


def search_sync(request: SearchRequest, **kwargs) -> SearchResponse:
    return asyncio.run(search(request, **kwargs))
