"""The search routes' answers in each client's shape: SearXNG's ``/search?format=json``, Tavily's ``/search`` and
Firecrawl's ``/v2/search`` (their requests: ``search_shapes``). A search no engine answered is each one's error
form where the shape has no room to say so beside its rows."""

from __future__ import annotations

import math
import uuid
from typing import Any
from urllib.parse import urlparse

from serpfuse.models import (
    ANSWERED,
    FusedResult,
    SearchResponse,
)
from serpfuse.serve.errors import ApiError
from serpfuse.serve.search_shapes import TAVILY_APPLIED, TAVILY_CHUNK_JOIN, flag, tavily_category
from serpfuse.urls import favicon_url


def tavily_content(r: FusedResult) -> str:
    """A row's Tavily content: its passages joined as Tavily joins its chunks, else its snippet."""
    if r.passages:
        return TAVILY_CHUNK_JOIN.join(p.text for p in r.passages)
    return r.snippet


def _engines_by_rank(r: FusedResult) -> list[str]:
    return sorted(r.engine_ranks, key=lambda e: (r.engine_ranks[e], e)) or list(r.engines)


def outcome_of(resp: SearchResponse) -> dict[str, Any]:
    """The response's outcome as the shapes add it (``outcome``: status, message, failed, answered, notSetUp)."""
    assert resp.outcome is not None  # SearchResponse fills it
    return resp.outcome.to_json_dict()


def refuse_failed(answers: list[SearchResponse]) -> None:
    """Tavily's and Firecrawl's shapes have no room for "no engine answered" beside their rows, so a search
    none answered is their error form: a 503 whose one line is the outcome's message (which engines, and why)."""
    if answers and all(r.outcome is not None and r.outcome.status == "failed" for r in answers):
        messages = dict.fromkeys(r.outcome.message for r in answers if r.outcome is not None)
        raise ApiError(503, " ".join(messages))


def _unresponsive(resp: SearchResponse) -> list[list[str]]:
    """SearXNG's ``[engine, why]`` pairs for every engine that did not answer: the failed first (each with its
    hint), then the engines not asked, then those nobody set up."""
    assert resp.outcome is not None
    failed = {t.engine: t for t in resp.outcome.failed}
    set_up_last = set(resp.outcome.not_set_up)
    pairs = []
    for e in sorted(resp.engines, key=lambda e: (e.engine not in failed, e.engine in set_up_last)):
        if e.status in ANSWERED:
            continue
        why = f"{e.status}: {e.reason}" if e.reason else e.status
        pairs.append([e.engine, f"{why} [{failed[e.engine].hint}]" if e.engine in failed else why])
    return pairs


def searxng_shape(resp: SearchResponse) -> dict[str, Any]:
    """The response as SearXNG's ``/search?format=json`` shapes it (results, answers, ... unresponsive_engines),
    and serpfuse's ``outcome``."""
    results = []
    previous = math.inf
    for r in resp.results:
        engines = _engines_by_rank(r)
        # SearXNG lists results by descending score and clients re-sort on it (Open WebUI does), so the
        # score is kept non-increasing down the list, or a re-sort would undo serpfuse's diversity order.
        score = min(r.score, previous)
        previous = score
        results.append(
            {
                "url": r.url,
                "title": r.title,
                "content": r.snippet,
                "engine": engines[0] if engines else "",
                "engines": engines,
                "positions": [r.engine_ranks.get(e, 0) for e in engines],
                "score": float(score),
                "category": "general",
                "template": "default.html",
                "publishedDate": r.published.isoformat() if r.published else None,
                "parsed_url": list(urlparse(r.url)),
                "priority": "",
            }
        )
    return {
        "query": resp.query,
        "number_of_results": len(results),
        "results": results,
        "answers": [],
        "corrections": [],
        "infoboxes": [],
        "suggestions": [],
        "unresponsive_engines": _unresponsive(resp),
        "outcome": outcome_of(resp),
        "shared": resp.shared,  # an identical search in flight answered this one
    }


def tavily_shape(resp: SearchResponse, seconds: float, body: dict[str, Any] | None = None) -> dict[str, Any]:
    """Tavily's response: scores scaled to 0-1 (the top result is 1), no answer, no images.

    The optional parts come back when the request asks for them, as on Tavily: ``favicon`` per result
    (include_favicon), ``usage`` (include_usage; serpfuse spends no Tavily credits) and ``auto_parameters``
    (the topic and depth serpfuse searched with). A search no engine answered is Tavily's error form instead
    (``refuse_failed``); any other says its ``outcome``."""
    refuse_failed([resp])
    body = body or {}
    top = max((r.score for r in resp.results), default=0.0)
    results = []
    for r in resp.results:
        row: dict[str, Any] = {
            "title": r.title,
            "url": r.url,
            "content": tavily_content(r),
            "score": round(min(1.0, max(0.0, r.score / top)) if top > 0 else 0.0, 6),
            "raw_content": None,
        }
        if r.published:
            row["published_date"] = r.published.isoformat()
        if flag(body.get("include_favicon", False)):
            row["favicon"] = favicon_url(r.url)
        results.append(row)
    extras: dict[str, Any] = {}
    if flag(body.get("auto_parameters", False)):
        extras["auto_parameters"] = {**TAVILY_APPLIED, "topic": tavily_category(body)}
    if flag(body.get("include_usage", False)):
        extras["usage"] = {"credits": 0}
    return {
        "query": resp.query,
        "answer": None,
        "images": [],
        "follow_up_questions": None,
        "results": results,
        "response_time": round(seconds, 3),
        "request_id": str(uuid.uuid4()),
        **extras,
        "outcome": outcome_of(resp),
        "shared": resp.shared,  # an identical search in flight answered this one
    }


def firecrawl_search_shape(
    answers: dict[str, SearchResponse], sources: list[str], warnings: list[str]
) -> dict[str, Any]:
    """Firecrawl's ``/v2/search`` answer: ``data`` keyed by each source asked, web rows as url, title,
    description and position, news rows as title, url, snippet, date and position (``read_shapes
    .add_firecrawl_documents`` adds the pages when asked). A source that came back empty or degraded says why
    in ``warning``; when no engine answered for any source asked, Firecrawl's error form (``refuse_failed``)."""
    refuse_failed(list(answers.values()))
    data: dict[str, Any] = {}
    notes = list(warnings)
    for source in sources:
        resp = answers.get(source)
        if resp is None:
            data[source] = []
            continue
        if source == "news":
            data[source] = [
                {"title": r.title, "url": r.url, "snippet": r.snippet, "position": i,
                 "date": r.published.isoformat() if r.published else None}
                for i, r in enumerate(resp.results, start=1)
            ]  # fmt: skip
        else:
            data[source] = [
                {"url": r.url, "title": r.title, "description": r.snippet, "position": i}
                for i, r in enumerate(resp.results, start=1)
            ]
        outcome = outcome_of(resp)
        if outcome["status"] in ("degraded", "failed"):  # the engines and why: in ``outcome``
            notes.append(f"{source}: {outcome['status']}: {outcome['summary']}")
        elif not resp.results and resp.warnings:
            notes.append(f"{source}: {resp.warnings[0]}")
    shaped: dict[str, Any] = {
        "success": True,
        "data": data,
        "creditsUsed": 0,  # serpfuse spends no Firecrawl credits
        "id": str(uuid.uuid4()),
        "outcome": {source: outcome_of(answers[source]) for source in sources if source in answers},
    }
    if notes:
        shaped["warning"] = "; ".join(notes)
    return shaped
