"""Parallel's free Search MCP (keyless): Parallel's own web index, asked through its anonymous MCP server.

The server is ``https://search.parallel.ai/mcp`` (Streamable HTTP, no key, no OAuth), its search tool
``web_search`` with ``search_queries`` (a list) and an ``objective``; it "returns ranked results with
answer-ready excerpts". Source: Parallel's published plugin, parallel-web/search-mcp ``SETUP.md`` and
``skills/parallel-search-setup/SKILL.md`` (commit 18b4f4f, read 2026-12): "The endpoint is anonymous. No API
key, no OAuth, no environment variables"; "Sustained or production-scale use will hit rate limits (HTTP 429)";
"Search overrides passed by the caller are ignored for anonymous requests". Parallel's docs (Search MCP,
docs.parallel.ai/integrations/mcp/search-mcp) add that the tools use the Search API in ``agentic`` mode, and
that date or domain constraints belong in the objective, not in parameters: none are sent, and the engine
declares no time-range support (it is skipped for a time-range search rather than answering unfiltered).

One search is one MCP session (``engines.mcp``). The tool's text is the Search API's answer as JSON,
``{"results": [{"url", "title", "publish_date", "excerpts": [...]}]}`` (docs.parallel.ai Search API); a
``structuredContent`` object of that shape is read the same. The first excerpt, cut at 300 characters, is the
snippet. HTTP 429 or a tool error saying so is the free tier's limit: a cooldown (Retry-After or 180 s).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from serpfuse.engines import mcp
from serpfuse.engines.base import EngineClient, EngineInfo, EngineQuery, ParseFailure, Reply
from serpfuse.engines.dates import parse_published
from serpfuse.engines.rows import RowFields, rows_from_json_list
from serpfuse.models import EngineRow

INFO = EngineInfo(
    name="parallel",
    website="https://parallel.ai",
    tier="primary",
    region="both",
    kind="mcp",
    needs_key=False,
    rows_per_request=10,
    timeout_s=25.0,
    group="parallel",
    quota="free tier, limit unstated",
)

URL = "https://search.parallel.ai/mcp"
TOOL = "web_search"
WHO = "Parallel Search MCP"
SNIPPET_CHARS = 300


def arguments(q: EngineQuery) -> dict[str, Any]:
    return {"objective": q.text, "search_queries": [q.text]}


def _pick(item: dict[str, Any]) -> RowFields | None:
    excerpts = item.get("excerpts")
    first = (
        next((e for e in excerpts if isinstance(e, str) and e.strip()), "")
        if isinstance(excerpts, list)
        else ""
    )
    return (
        item.get("url"),
        item.get("title"),
        first[:SNIPPET_CHARS],
        parse_published(item.get("publish_date")),
    )


def _answer(result: dict[str, Any]) -> Any:
    structured = result.get("structuredContent")
    if isinstance(structured, dict) and "results" in structured:
        return structured
    text = mcp.tool_text(result, WHO).strip()
    if not text:
        return {"results": []}
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        raise ParseFailure(f"{WHO}: the tool's text is not the Search API's JSON (format changed?)") from None


def parse(status: int, headers: Mapping[str, str], body: bytes, q: EngineQuery) -> list[EngineRow]:
    answer = _answer(mcp.tool_result(status, headers, body, WHO))
    if not isinstance(answer, dict):
        raise ParseFailure(f"{WHO}: unexpected answer shape")
    return rows_from_json_list(INFO.name, answer.get("results"), _pick, markup=False)


async def run(client: EngineClient, q: EngineQuery) -> Reply:
    return await mcp.call_tool(client, URL, TOOL, arguments(q), WHO)
