"""Firecrawl without a key: its hosted MCP server's keyless tier (search, rate-limited).

Firecrawl's documentation, "Try keyless" (docs.firecrawl.dev/mcp-server/keyless, read 2026-12): "Keyless MCP is
rate limited and exposes Search, Scrape, and Parse. Add an API key to unlock the full tool surface or higher
limits"; a keyless connection lists ``firecrawl_search``. The server is ``https://mcp.firecrawl.dev/v2/mcp`` (the
firecrawl-mcp-server README's remote URL; its search-only ``/v2/mcp-search`` surface needs credentials). One
search is one MCP session (``engines.mcp``): ``firecrawl_search`` with ``{query, limit}``; its text is the search
answer as JSON, the v2 shape ``{"web": [{url, title, description}]}`` (docs.firecrawl.dev, Search), or the same
under ``data``, or a plain list. No ``scrapeOptions``: rows only, no page content.

Firecrawl's search answers from Google's results, so it holds no index of its own: one voice with the keyed
``firecrawl``, a fallback (asked when the primaries found nothing usable).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from serpfuse.engines import mcp
from serpfuse.engines.base import EngineClient, EngineInfo, EngineQuery, ParseFailure, Reply, clamp
from serpfuse.engines.rows import RowFields, rows_from_json_list
from serpfuse.models import EngineRow

INFO = EngineInfo(
    name="firecrawl-free",
    website="https://www.firecrawl.dev",
    tier="fallback",
    region="global",
    kind="mcp",
    needs_key=False,
    rows_per_request=10,
    timeout_s=25.0,
    group="firecrawl",
    own_index=False,
    quota="free tier, limit unstated",
)

URL = "https://mcp.firecrawl.dev/v2/mcp"
TOOL = "firecrawl_search"
WHO = "Firecrawl MCP"


def arguments(q: EngineQuery) -> dict[str, Any]:
    return {"query": q.text, "limit": clamp(q.limit, 1, INFO.rows_per_request)}


def _pick(item: dict[str, Any]) -> RowFields | None:
    return item.get("url"), item.get("title"), item.get("description") or item.get("snippet"), None


def _items(answer: Any) -> Any:
    if isinstance(answer, dict) and isinstance(answer.get("data"), dict | list):
        answer = answer["data"]
    if isinstance(answer, dict):
        return answer.get("web") if "web" in answer else answer.get("results")
    return answer


def parse(status: int, headers: Mapping[str, str], body: bytes, q: EngineQuery) -> list[EngineRow]:
    text = mcp.tool_text(mcp.tool_result(status, headers, body, WHO), WHO).strip()
    if not text:
        return []
    try:
        answer = json.loads(text)
    except (ValueError, RecursionError):
        raise ParseFailure(f"{WHO}: the tool's text is not the search JSON (format changed?)") from None
    return rows_from_json_list(INFO.name, _items(answer), _pick, markup=False)


async def run(client: EngineClient, q: EngineQuery) -> Reply:
    return await mcp.call_tool(client, URL, TOOL, arguments(q), WHO)
