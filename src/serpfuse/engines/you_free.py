"""You.com's free MCP profile (keyless): You.com's own web index, 100 searches a day per IP.

You.com documents one keyless way in: its remote MCP server with the trial profile,
``https://api.you.com/mcp?profile=free``, whose ``you-search`` tool needs no credentials (you.com, "How to Set
Up the You.com MCP Server for Web Search in Any Client", and the official youdotcom-oss/dx-toolkit README:
"Free tier, no signup — ?profile=free exposes you-search to any MCP client with zero auth"). Its arguments and
answer as free-search-mcp 0.16.0 (PyPI, 2026-10, ``engines/youcom.py``, from the tool's ``tools/list`` schema
of 2026-10-18) reads them: ``query``, ``count``, ``freshness`` (day, week, month, year); the tool's text is the
search JSON ``{"results": {"web": [...], "news": [...]}}``, each item ``url``, ``title``, ``description``,
``snippets`` and ``page_age``.

One search is one MCP session (``engines.mcp``). Web items come first, news after, ranked in that order; a
news item's ``page_age`` is its publication time, a web item's may be a crawl time and is not read as one. The
daily allowance spent answers with HTTP 429 or a tool error about the quota: the engine then cools down for an
hour (or Retry-After), as asking again the same day only spends requests. A fallback engine: with 100 searches
a day it is asked when the primaries found nothing usable, not on every search.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from serpfuse.engines import mcp
from serpfuse.engines.base import (
    EngineClient,
    EngineInfo,
    EngineQuery,
    ParseFailure,
    RateLimited,
    Reply,
    clamp,
)
from serpfuse.engines.dates import parse_published
from serpfuse.engines.rows import RowFields, rows_from_json_list
from serpfuse.models import EngineRow

INFO = EngineInfo(
    name="you-free",
    website="https://you.com",
    tier="fallback",
    region="both",
    kind="mcp",
    needs_key=False,
    time_range_support=True,
    rows_per_request=20,
    timeout_s=25.0,
    group="you",
    quota="100 a day per IP",
)

URL = "https://api.you.com/mcp?profile=free"
TOOL = "you-search"
WHO = "You.com MCP"
SNIPPET_CHARS = 300
QUOTA_COOLDOWN_S = 3600.0


def arguments(q: EngineQuery) -> dict[str, Any]:
    args: dict[str, Any] = {"query": q.text, "count": clamp(q.limit, 1, INFO.rows_per_request)}
    if q.time_range:
        args["freshness"] = q.time_range
    return args


def _pick_web(item: dict[str, Any]) -> RowFields | None:
    return _fields(item, None)


def _pick_news(item: dict[str, Any]) -> RowFields | None:
    return _fields(item, parse_published(item.get("page_age")))


def _fields(item: dict[str, Any], published: Any) -> RowFields:
    snippet = item.get("description")
    if not isinstance(snippet, str) or not snippet.strip():
        snippets = item.get("snippets")
        snippet = next((s for s in snippets if isinstance(s, str)), "") if isinstance(snippets, list) else ""
    return item.get("url"), item.get("title"), snippet[:SNIPPET_CHARS], published


def _longer(error: RateLimited) -> RateLimited:
    """A spent daily allowance waits an hour unless the server said when to come back."""
    if error.retry_after_s is not None:
        return error
    return RateLimited("You.com MCP: the free daily allowance is spent", retry_after_s=QUOTA_COOLDOWN_S)


def parse(status: int, headers: Mapping[str, str], body: bytes, q: EngineQuery) -> list[EngineRow]:
    try:
        result = mcp.tool_result(status, headers, body, WHO)
    except RateLimited as exc:
        raise _longer(exc) from None
    text = mcp.tool_text(result, WHO).strip()
    if not text:
        return []
    try:
        answer = json.loads(text)
    except (ValueError, RecursionError):
        raise ParseFailure(f"{WHO}: the tool's text is not the search JSON (format changed?)") from None
    groups = answer.get("results") if isinstance(answer, dict) else None
    if not isinstance(groups, dict):
        raise ParseFailure(f"{WHO}: unexpected answer shape")
    web = found if isinstance(found := groups.get("web"), list) else []
    news = found if isinstance(found := groups.get("news"), list) else []
    rows = rows_from_json_list(INFO.name, web, _pick_web, markup=False)
    more = rows_from_json_list(INFO.name, news, _pick_news, markup=False)
    # News ranks after the web rows: one list, one rank order.
    return rows + [row.model_copy(update={"rank": row.rank + len(web)}) for row in more]


async def run(client: EngineClient, q: EngineQuery) -> Reply:
    try:
        return await mcp.call_tool(client, URL, TOOL, arguments(q), WHO)
    except RateLimited as exc:
        raise _longer(exc) from None
