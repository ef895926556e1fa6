"""What the MCP tools answer: the rows as text a model reads well and as structured content, bounded by
``max_chars`` (rows dropped whole, and said so)."""

from __future__ import annotations

from collections.abc import Callable

from pydantic import Field

from serpfuse.models import (
    ANSWERED,
    CandidateExplanation,
    FusedResult,
    Model,
    Outcome,
    SearchResponse,
)
from serpfuse.service import EngineHealth

SNIPPET_CHARS = 300
TITLE_CHARS = 200
REASON_CHARS = 100


# --- structured output -------------------------------------------------------------------------------------


class ResultRow(Model):
    title: str
    url: str
    snippet: str
    published: str | None = None
    score: float
    engines: list[str]
    # with passages=true: the page's passages that answer the query (in page order), or None and why
    passages: list[str] | None = Field(None, exclude_if=lambda v: v is None)
    passages_status: str | None = Field(None, exclude_if=lambda v: v is None)


class EngineLine(Model):
    engine: str
    status: str
    rows: int
    reason: str | None = None


class WebSearchOutput(Model):
    query: str
    strategy: str
    results: list[ResultRow]
    engines: list[EngineLine]
    warnings: list[str]
    truncated: bool = Field(description="true when rows were left out to stay within max_chars")
    omitted: int = 0
    cached: bool
    shared: bool = Field(False, description="true when an identical search in flight answered this one")
    outcome: Outcome = Field(description="results, empty, degraded or failed, with the engines and why")
    score_version: str
    config_fingerprint: str


class CandidateRow(Model):
    position: int | None
    url: str
    title: str
    engine_ranks: dict[str, int]
    score: float | None
    score_parts: dict[str, float]
    selected: bool
    cut_by: str | None
    cut_reason: str | None


class ExplainOutput(Model):
    query: str
    strategy: str
    candidates: list[CandidateRow]
    total_candidates: int
    selected: int
    engines: list[EngineLine]
    warnings: list[str]
    truncated: bool
    omitted: int = 0
    cached: bool
    shared: bool = False
    outcome: Outcome
    config_fingerprint: str


class EngineStatusOutput(Model):
    engines: list[EngineHealth]


# --- text rendering ----------------------------------------------------------------------------------------


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: max(0, limit - 1)].rstrip() + "…"


def _row(r: FusedResult) -> ResultRow:
    return ResultRow(
        title=_clip(r.title or r.url, TITLE_CHARS),
        url=r.url,
        snippet=_clip(r.snippet, SNIPPET_CHARS),
        published=r.published.date().isoformat() if r.published else None,
        score=round(r.score, 4),
        engines=r.engines,
        passages=[p.text for p in r.passages] if r.passages is not None else None,
        passages_status=r.passages_status,
    )


def _engine_lines(resp: SearchResponse) -> list[EngineLine]:
    """Each engine's line: those that failed first, then those that answered, then those not asked."""
    failed = {t.engine for t in _outcome(resp).failed}
    order = {e.engine: 0 if e.engine in failed else 1 if e.status in ANSWERED else 2 for e in resp.engines}
    return [
        EngineLine(
            engine=e.engine,
            status=e.status,
            rows=e.rows,
            reason=_clip(e.reason, REASON_CHARS) if e.reason else None,
        )
        for e in sorted(resp.engines, key=lambda e: order[e.engine])
    ]


def _outcome(resp: SearchResponse) -> Outcome:
    assert resp.outcome is not None  # SearchResponse fills it
    return resp.outcome


def _outcome_line(resp: SearchResponse) -> str:
    """The head's second line when the search did not simply go well: the outcome, said first."""
    outcome = _outcome(resp)
    if outcome.status in ("degraded", "empty"):  # the engines' line below says each one's reason
        return f"\n{outcome.status.capitalize()}: {_clip(outcome.summary, REASON_CHARS * 2)}."
    return ""


def _engines_text(lines: list[EngineLine]) -> str:
    parts = []
    for e in lines:
        if e.status in ANSWERED:
            parts.append(f"{e.engine} {e.status} ({e.rows})")
        else:
            parts.append(f"{e.engine} {e.status}" + (f": {e.reason}" if e.reason else ""))
    return "Engines: " + "; ".join(parts) if parts else "Engines: none"


def _row_text(i: int, r: ResultRow) -> str:
    meta = [f"score {r.score:.3f}", ", ".join(r.engines)]
    if r.published:
        meta.insert(0, f"published {r.published}")
    lines = [f"{i}. {r.title}", f"   {r.url}"]
    if r.passages:
        lines.extend(f"   > {' '.join(p.split())}" for p in r.passages)
    elif r.snippet:
        lines.append(f"   {r.snippet}")
    if r.passages_status:
        lines.append(f"   (no passages: {r.passages_status}; the engine's snippet above)")
    lines.append(f"   {' · '.join(meta)}")
    return "\n".join(lines)


def fit_blocks(
    head: str, blocks: list[str], tail: str, max_chars: int, note: Callable[[int, int], str]
) -> tuple[str, int]:
    """Join ``head``, as many leading ``blocks`` as fit, and ``tail`` within ``max_chars``; (text, blocks kept).

    When blocks are dropped, ``note(kept, total)`` is appended, and its room is reserved before any block is
    kept, so the result never exceeds ``max_chars`` (a too-long head or tail is clipped as a last resort).
    """
    total = len(blocks)
    fixed = [p for p in (head, tail) if p]
    base = sum(len(p) + 2 for p in fixed)
    reserve = len(note(total, total)) + 2 + len(str(total))  # digits of "kept" may vary
    kept: list[str] = []
    used = base
    for block in blocks:
        room = max_chars - used - reserve
        if len(block) + 2 > room:
            break
        kept.append(block)
        used += len(block) + 2
    parts = [head, *kept] if head else list(kept)
    if len(kept) < total:
        parts.append(note(len(kept), total))
    if tail:
        parts.append(tail)
    text = "\n\n".join(parts)
    if len(text) > max_chars:
        text = text[: max_chars - 1] + "…"
    return text, len(kept)


def render_results(resp: SearchResponse, max_chars: int) -> tuple[str, WebSearchOutput]:
    rows = [_row(r) for r in resp.results]
    engines = _engine_lines(resp)
    cached = " · from cache" if resp.cached else ""
    cached += " · shared with an identical search in flight" if resp.shared else ""
    head = f'Results for "{resp.query}" ({resp.strategy}, {len(rows)} rows{cached}):'
    if not rows:  # the engines answered (a search none answered is a tool error): nothing relevant came back
        head = f'No relevant results for "{resp.query}" ({resp.strategy}{cached}).'
    head += _outcome_line(resp)
    tail_lines = [_clip(_engines_text(engines), max(80, max_chars // 4))]
    tail_lines += [f"Warning: {_clip(w, 200)}" for w in resp.warnings[:3]]
    text, kept = fit_blocks(
        head,
        [_row_text(i, r) for i, r in enumerate(rows, start=1)],
        "\n".join(tail_lines),
        max_chars,
        lambda k, n: f"[truncated: showing {k} of {n} results to stay within max_chars={max_chars}]",
    )
    out = WebSearchOutput(
        query=resp.query,
        strategy=resp.strategy,
        results=rows[:kept],
        engines=engines,
        warnings=resp.warnings,
        truncated=kept < len(rows),
        omitted=len(rows) - kept,
        cached=resp.cached,
        shared=resp.shared,
        outcome=_outcome(resp),
        score_version=resp.score_version,
        config_fingerprint=resp.config_fingerprint,
    )
    return text, out


def _candidate(c: CandidateExplanation) -> CandidateRow:
    return CandidateRow(
        position=c.position,
        url=c.url,
        title=_clip(c.title or c.url, TITLE_CHARS),
        engine_ranks=c.engine_ranks,
        score=round(c.score, 4) if c.score is not None else None,
        score_parts={k: round(v, 4) for k, v in c.score_parts.items()},
        selected=c.selected,
        cut_by=c.cut_by,
        cut_reason=_clip(c.cut_reason, REASON_CHARS) if c.cut_reason else None,
    )


def _candidate_text(c: CandidateRow) -> str:
    ranks = ", ".join(f"{e} #{r}" for e, r in sorted(c.engine_ranks.items(), key=lambda t: (t[1], t[0])))
    where = f"#{c.position}" if c.selected else "cut"
    score = f"score {c.score:.3f}" if c.score is not None else "not scored"
    lines = [f"{where} {score} [{ranks}] {c.title}", f"   {c.url}"]
    if c.score_parts:
        lines.append("   parts: " + ", ".join(f"{k}={v:.3g}" for k, v in c.score_parts.items()))
    if not c.selected:
        lines.append(f"   cut by {c.cut_by}: {c.cut_reason}")
    return "\n".join(lines)


def render_explanation(resp: SearchResponse, max_chars: int) -> tuple[str, ExplainOutput]:
    candidates = [_candidate(c) for c in resp.candidates or []]
    selected = sum(1 for c in candidates if c.selected)
    engines = _engine_lines(resp)
    head = (
        f'Candidates for "{resp.query}" ({resp.strategy}): {len(candidates)} seen, {selected} selected; '
        "selected rows first, then every cut row with the step that cut it."
    ) + _outcome_line(resp)
    text, kept = fit_blocks(
        head,
        [_candidate_text(c) for c in candidates],
        _clip(_engines_text(engines), max(80, max_chars // 4)),
        max_chars,
        lambda k, n: f"[truncated: showing {k} of {n} candidates to stay within max_chars={max_chars}]",
    )
    out = ExplainOutput(
        query=resp.query,
        strategy=resp.strategy,
        candidates=candidates[:kept],
        total_candidates=len(candidates),
        selected=selected,
        engines=engines,
        warnings=resp.warnings,
        truncated=kept < len(candidates),
        omitted=len(candidates) - kept,
        cached=resp.cached,
        shared=resp.shared,
        outcome=_outcome(resp),
        config_fingerprint=resp.config_fingerprint,
    )
    return text, out


def render_status(engines: list[EngineHealth]) -> str:
    lines = ["Engine status (key status only; keys are never shown):"]
    for e in engines:
        bits: list[str] = [e.state]
        if e.reason:
            bits.append(e.reason)
        if e.tier:
            bits.append(f"tier {e.tier}")
        if e.key:
            bits.append(f"key {e.key}")
        if e.last_status:
            bits.append(f"last search: {e.last_status} in {e.last_latency_ms or 0:.0f} ms")
        lines.append(f"- {e.engine}: " + " · ".join(bits))
    return "\n".join(lines)
