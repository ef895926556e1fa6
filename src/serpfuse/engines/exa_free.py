"""Exa's keyless MCP endpoint (https://mcp.exa.ai/mcp): Exa's neural index without a key, rate-limited per IP.

One search is one MCP session (``engines.mcp``): ``initialize``, the ``notifications/initialized``
notification, then ``tools/call`` of ``web_search_exa`` with ``{query, numResults}`` (at most 10). The tool
answers with text blocks ("Title: ...", "URL: ...", "Published Date: ...", "Highlights:"/"Text: ...")
separated by ``---`` lines; a JSON ``{results: [...]}`` text (older servers) is read too.

This engine is multi-step, so it defines ``run(client, q)`` instead of ``build_request``: it holds the session
and returns the ``tools/call`` reply, which ``parse`` reads, live (off the event loop, under the parse budget,
like any engine's answer) and in replays.

The per-IP rate limit answers any step with HTTP 429 or with a JSON-RPC error saying so ("You've hit Exa's
free MCP rate limit...", code -32000, on a 2xx or a 4xx); either is ``RateLimited``, which cools the engine
down for Retry-After or 180 s, instead of a plain error retried 5 s later only to be refused again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from serpfuse.engines import mcp
from serpfuse.engines.base import EngineClient, EngineInfo, EngineQuery, Reply, clamp
from serpfuse.engines.dates import parse_published
from serpfuse.engines.rows import RowFields, rows_from_json_list
from serpfuse.models import EngineRow

INFO = EngineInfo(
    name="exa-free",
    website="https://exa.ai",
    tier="primary",
    region="both",
    kind="mcp",
    needs_key=False,
    rows_per_request=10,
    timeout_s=25.0,
    group="exa",
)

URL = "https://mcp.exa.ai/mcp"
TOOL = "web_search_exa"
WHO = "Exa MCP"
SNIPPET_CHARS = 300

BLOCK_SEPARATOR = re.compile(r"^\s*-{3,}\s*$", re.MULTILINE)
FIELD = re.compile(
    r"^(Title|URL|Published Date|Published|Author|Highlights|Text|Summary):[ \t]*(.*)$", re.MULTILINE
)
SNIPPET_FIELDS = ("Highlights", "Summary", "Text")


def tool_call(q: EngineQuery) -> dict[str, Any]:
    arguments = {"query": q.text, "numResults": clamp(q.limit, 1, INFO.rows_per_request)}
    return mcp.rpc("tools/call", {"name": TOOL, "arguments": arguments})


def _field_blocks(text: str) -> list[dict[str, str]]:
    blocks = []
    for chunk in BLOCK_SEPARATOR.split(text):
        fields: dict[str, str] = {}
        matches = list(FIELD.finditer(chunk))
        for m, nxt in zip(matches, [*matches[1:], None], strict=True):
            end = nxt.start() if nxt else len(chunk)
            # A multi-line field (Highlights, Text) runs until the next field.
            fields.setdefault(m.group(1), (m.group(2) + chunk[m.end() : end]).strip())
        if fields:
            blocks.append(fields)
    return blocks


def _pick_block(item: dict) -> RowFields:
    snippet = next((item[k] for k in SNIPPET_FIELDS if isinstance(item.get(k), str) and item[k]), "")
    published = parse_published(item.get("Published Date") or item.get("Published"))
    return item.get("URL"), item.get("Title"), snippet[:SNIPPET_CHARS], published


def parse_text(text: str) -> list[EngineRow]:
    """Rows of the ``web_search_exa`` tool text; rank counts every block, usable or not."""
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    items: list[dict[str, Any]]
    if isinstance(data, dict) and isinstance(data.get("results"), list):
        items = [
            {
                "Title": r.get("title"),
                "URL": r.get("url"),
                "Published Date": r.get("publishedDate"),
                "Text": " … ".join(r.get("highlights") or []) or r.get("text"),
            }
            for r in data["results"]
            if isinstance(r, dict)
        ]
    else:
        items = [b for b in _field_blocks(text) if "URL" in b or "Title" in b]
    return rows_from_json_list(INFO.name, items, _pick_block, markup=False)


def parse(status: int, headers: Mapping[str, str], body: bytes, q: EngineQuery) -> list[EngineRow]:
    """Rows of one ``tools/call`` reply."""
    result = mcp.tool_result(status, headers, body, WHO)
    text = mcp.tool_text(result, WHO) if result is not None else ""
    return parse_text(text) if text.strip() else []


async def run(client: EngineClient, q: EngineQuery) -> Reply:
    """The session's three steps (``engines.mcp``); the ``tools/call`` reply, for ``parse``."""
    arguments = tool_call(q)["params"]["arguments"]
    return await mcp.call_tool(client, URL, TOOL, arguments, WHO)
