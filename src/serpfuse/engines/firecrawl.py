"""Firecrawl search API (keyed: Authorization Bearer); a Google-backed fallback.

POST https://api.firecrawl.dev/v1/search {query, limit, tbs: "qdr:d|w|m|y"}. v1 answers
``{success, data: [{url, title, description}]}``; v2's ``data: {web: [...]}`` is read too.
"""

from __future__ import annotations

from collections.abc import Mapping

from serpfuse.engines.base import (
    EngineError,
    EngineInfo,
    EngineQuery,
    ParseFailure,
    RequestSpec,
    check_status,
    clamp,
)
from serpfuse.engines.bodies import json_body
from serpfuse.engines.locale import split_locale
from serpfuse.engines.rows import RowFields, rows_from_json_list
from serpfuse.models import EngineRow

INFO = EngineInfo(
    name="firecrawl",
    website="https://www.firecrawl.dev",
    tier="fallback",
    region="global",
    kind="json",
    needs_key=True,
    key_envs=("SERPFUSE_FIRECRAWL_API_KEY", "FIRECRAWL_API_KEY"),
    time_range_support=True,
    rows_per_request=20,
)

URL = "https://api.firecrawl.dev/v1/search"
TBS = {"day": "qdr:d", "week": "qdr:w", "month": "qdr:m", "year": "qdr:y"}


def build_request(q: EngineQuery) -> RequestSpec | None:
    if not q.api_key or q.date_from or q.date_to:
        return None
    body: dict = {"query": q.text, "limit": clamp(q.limit, 1, INFO.rows_per_request)}
    if q.time_range:
        body["tbs"] = TBS[q.time_range]
    country, lang = split_locale(q.region, q.language)
    if lang:
        body["lang"] = lang
    if country:
        body["country"] = country
    headers = {"Authorization": f"Bearer {q.api_key}", "Content-Type": "application/json"}
    return RequestSpec(method="POST", url=URL, headers=headers, json=body)


def _pick(item: dict) -> RowFields:
    metadata = found if isinstance(found := item.get("metadata"), dict) else {}
    title = item.get("title") or metadata.get("title")
    snippet = item.get("description") or metadata.get("description")
    return item.get("url"), title, snippet, None


def parse(status: int, headers: Mapping[str, str], body: bytes, q: EngineQuery) -> list[EngineRow]:
    check_status(status, headers, body)
    data = json_body(body)
    if not isinstance(data, dict):
        raise ParseFailure("Firecrawl: unexpected response shape")
    if data.get("success") is False:
        raise EngineError("Firecrawl reported a failed search")
    results = data.get("data")
    if isinstance(results, dict):
        results = results.get("web")
    return rows_from_json_list(
        INFO.name, results, _pick, markup=False, no_list_message="Firecrawl: no result list in the response"
    )
