"""Brave Search API, web results (keyed: header X-Subscription-Token; free plan 1 request/s).

GET https://api.search.brave.com/res/v1/web/search with ``q``, ``count`` (1..20) and ``freshness``
(pd|pw|pm|py or YYYY-MM-DDtoYYYY-MM-DD). Rows are ``web.results[]`` with ``title``, ``url``,
``description``, ``page_age`` (ISO) and ``age`` ("3 days ago" or "May 12, 2023").
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping

from serpfuse.engines.base import EngineInfo, EngineQuery, ParseFailure, RequestSpec, check_status, clamp
from serpfuse.engines.bodies import json_body
from serpfuse.engines.dates import parse_published
from serpfuse.engines.locale import split_locale
from serpfuse.engines.rows import RowFields, rows_from_json_list
from serpfuse.models import EngineRow

INFO = EngineInfo(
    name="brave",
    website="https://brave.com/search/api/",
    tier="primary",
    region="both",
    kind="json",
    needs_key=True,
    key_envs=("SERPFUSE_BRAVE_API_KEY", "BRAVE_API_KEY"),
    time_range_support=True,
    date_range_support=True,
    rows_per_request=20,
    min_interval_s=1.0,
)

URL = "https://api.search.brave.com/res/v1/web/search"
FRESHNESS = {"day": "pd", "week": "pw", "month": "pm", "year": "py"}
EARLIEST = dt.date(1970, 1, 1)


def freshness(q: EngineQuery, today: dt.date) -> str | None:
    if q.time_range:
        return FRESHNESS[q.time_range]
    if q.date_from or q.date_to:
        return f"{(q.date_from or EARLIEST).isoformat()}to{(q.date_to or today).isoformat()}"
    return None


def build_request(q: EngineQuery) -> RequestSpec | None:
    if not q.api_key:
        return None
    params: dict[str, str | int] = {
        "q": q.text,
        "count": clamp(q.limit, 1, INFO.rows_per_request),
        "text_decorations": "false",
    }
    fresh = freshness(q, dt.date.today())
    if fresh:
        params["freshness"] = fresh
    country, lang = split_locale(q.region, q.language)
    if country:
        params["country"] = country.upper()
    if lang:
        params["search_lang"] = lang
    headers = {"Accept": "application/json", "X-Subscription-Token": q.api_key}
    return RequestSpec(method="GET", url=URL, params=params, headers=headers)


def _pick(item: dict) -> RowFields:
    published = parse_published(item.get("page_age")) or parse_published(item.get("age"))
    return item.get("url"), item.get("title"), item.get("description"), published


def parse(status: int, headers: Mapping[str, str], body: bytes, q: EngineQuery) -> list[EngineRow]:
    check_status(status, headers, body)
    data = json_body(body)
    if not isinstance(data, dict):
        raise ParseFailure("Brave: unexpected response shape")
    web = data.get("web")
    if web is None:
        return []  # Brave leaves out the web section when nothing matched
    results = web.get("results") if isinstance(web, dict) else None
    return rows_from_json_list(INFO.name, results, _pick, no_list_message="Brave: no web result list")
