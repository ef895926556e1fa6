"""Tavily search API (keyed: Authorization Bearer). Built for agents; native domain filters.

POST https://api.tavily.com/search {query, search_depth: "basic", max_results, include_answer: false,
include_raw_content: false, time_range | start_date/end_date, include_domains, exclude_domains}. The API
answers 400 when ``time_range`` and a date are both sent, so a request carries one or the other, never both.
"""

from __future__ import annotations

from collections.abc import Mapping

from serpfuse.engines.base import EngineInfo, EngineQuery, RequestSpec, check_status, clamp
from serpfuse.engines.bodies import json_body
from serpfuse.engines.dates import parse_published
from serpfuse.engines.rows import RowFields, rows_from_json_list
from serpfuse.models import EngineRow

INFO = EngineInfo(
    name="tavily",
    website="https://tavily.com",
    tier="primary",
    region="both",
    kind="json",
    needs_key=True,
    key_envs=("SERPFUSE_TAVILY_API_KEY", "TAVILY_API_KEY"),
    time_range_support=True,
    date_range_support=True,
    rows_per_request=20,
)

URL = "https://api.tavily.com/search"
MAX_INCLUDE_DOMAINS = 300
MAX_EXCLUDE_DOMAINS = 150


def build_request(q: EngineQuery) -> RequestSpec | None:
    if not q.api_key:
        return None
    headers = {"Authorization": f"Bearer {q.api_key}", "Content-Type": "application/json"}
    return RequestSpec(method="POST", url=URL, headers=headers, json=request_body(q))


def request_body(q: EngineQuery) -> dict:
    """The search's JSON body, keyed or keyless alike (Tavily: "Keyless responses are identical")."""
    body: dict = {
        "query": q.text,
        "search_depth": "basic",
        "max_results": clamp(q.limit, 1, INFO.rows_per_request),
        "include_answer": False,
        "include_raw_content": False,
    }
    if q.time_range:
        body["time_range"] = q.time_range  # the relative range wins over dates: both would be a 400
    else:
        if q.date_from:
            body["start_date"] = q.date_from.isoformat()
        if q.date_to:
            body["end_date"] = q.date_to.isoformat()
    if q.include_domains:
        body["include_domains"] = list(q.include_domains[:MAX_INCLUDE_DOMAINS])
    if q.exclude_domains:
        body["exclude_domains"] = list(q.exclude_domains[:MAX_EXCLUDE_DOMAINS])
    return body


def _pick(item: dict) -> RowFields:
    return (
        item.get("url"),
        item.get("title"),
        item.get("content"),
        parse_published(item.get("published_date")),
    )


def parse_rows(engine: str, status: int, headers: Mapping[str, str], body: bytes) -> list[EngineRow]:
    check_status(status, headers, body)
    data = json_body(body)
    results = data.get("results") if isinstance(data, dict) else None
    return rows_from_json_list(
        engine, results, _pick, markup=False, no_list_message="Tavily: no result list in the response"
    )


def parse(status: int, headers: Mapping[str, str], body: bytes, q: EngineQuery) -> list[EngineRow]:
    return parse_rows(INFO.name, status, headers, body)
