"""Exa search API (keyed: header x-api-key). Neural/keyword search with published dates.

POST https://api.exa.ai/search
{query, type: "auto", numResults, contents: {highlights: {maxCharacters: 300}}}. ``contents`` is always sent:
without it Exa returns up to 10,000 characters of text per row, and bills them. A region's country goes in
``userLocation`` (ISO code: ``GB`` for ``uk``), as exa-py and SearXNG's exaapi send it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping

from serpfuse.engines.base import EngineInfo, EngineQuery, RequestSpec, check_status, clamp
from serpfuse.engines.bodies import json_body
from serpfuse.engines.dates import parse_published, range_start
from serpfuse.engines.locale import iso_country
from serpfuse.engines.rows import RowFields, rows_from_json_list
from serpfuse.models import EngineRow

INFO = EngineInfo(
    name="exa",
    website="https://exa.ai",
    tier="primary",
    region="both",
    kind="json",
    needs_key=True,
    key_envs=("SERPFUSE_EXA_API_KEY", "EXA_API_KEY"),
    time_range_support=True,
    date_range_support=True,
    rows_per_request=25,
    group="exa",
)

URL = "https://api.exa.ai/search"
HIGHLIGHT_CHARS = 300


def _iso_start(day: dt.date) -> str:
    return f"{day.isoformat()}T00:00:00.000Z"


def _iso_end(day: dt.date) -> str:
    return f"{day.isoformat()}T23:59:59.999Z"


def build_request(q: EngineQuery) -> RequestSpec | None:
    if not q.api_key:
        return None
    body: dict = {
        "query": q.text,
        "type": "auto",
        "numResults": clamp(q.limit, 1, INFO.rows_per_request),
        "contents": {"highlights": {"maxCharacters": HIGHLIGHT_CHARS}},
    }
    start = range_start(q.time_range, dt.date.today()) or q.date_from
    if start:
        body["startPublishedDate"] = _iso_start(start)
    if q.date_to:
        body["endPublishedDate"] = _iso_end(q.date_to)
    if q.include_domains:
        body["includeDomains"] = list(q.include_domains)
    if q.exclude_domains:
        body["excludeDomains"] = list(q.exclude_domains)
    if country := iso_country(q.region, q.language):
        body["userLocation"] = country
    headers = {"x-api-key": q.api_key, "Content-Type": "application/json", "Accept": "application/json"}
    return RequestSpec(method="POST", url=URL, headers=headers, json=body)


def _snippet(item: dict) -> str:
    highlights = item.get("highlights")
    if isinstance(highlights, list):
        parts = [h for h in highlights if isinstance(h, str) and h.strip()]
        if parts:
            return " … ".join(parts)
    for key in ("summary", "text"):
        value = item.get(key)
        if isinstance(value, str) and value.strip():
            return value[:HIGHLIGHT_CHARS]
    return ""


def _pick(item: dict) -> RowFields:
    return item.get("url"), item.get("title"), _snippet(item), parse_published(item.get("publishedDate"))


def parse(status: int, headers: Mapping[str, str], body: bytes, q: EngineQuery) -> list[EngineRow]:
    check_status(status, headers, body)
    data = json_body(body)
    results = data.get("results") if isinstance(data, dict) else None
    return rows_from_json_list(
        INFO.name, results, _pick, markup=False, no_list_message="Exa: no result list in the response"
    )
