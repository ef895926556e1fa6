"""AnySearch: a search API usable anonymously (a free quota per IP) or with a key (Bearer).

POST https://api.anysearch.com/v1/search {query, max_results (1..10), format: "json", zone, language}. ``zone``
picks AnySearch's Chinese sources (``cn``: a Chinese query or a region in mainland China) or its international
ones (``intl``); ``language`` is the caller's language, else the one the query's script names (zh, ja, ko), and
is left out for a Latin-script query nobody gave a language for. A good answer is
``{code: 0, data: {results: [{title, url, snippet, content}]}}``. Error bodies are never read: a 402 body can
carry generated credentials, so every failure gets a fixed message.

AnySearch routes each query to other engines and returns their rows: it has no index of its own
(``INFO.own_index``), so it is one voter however many sources it asked.
"""

from __future__ import annotations

from collections.abc import Mapping

from serpfuse.engines.base import (
    EngineError,
    EngineInfo,
    EngineQuery,
    ParseFailure,
    RequestSpec,
    clamp,
    classify_http,
)
from serpfuse.engines.bodies import json_body
from serpfuse.engines.locale import script_language, split_locale
from serpfuse.engines.rows import RowFields, rows_from_json_list
from serpfuse.models import EngineRow

INFO = EngineInfo(
    name="anysearch",
    website="https://www.anysearch.com",
    tier="primary",
    region="both",
    kind="json",
    needs_key=False,
    accepts_key=True,
    key_envs=("SERPFUSE_ANYSEARCH_API_KEY", "ANYSEARCH_API_KEY"),
    rows_per_request=10,
    read_error_body=False,  # the transport never even downloads a non-2xx body
    own_index=False,
)

URL = "https://api.anysearch.com/v1/search"
MAX_RESULTS = 10
NOT_MAINLAND = frozenset({"tw", "hk", "mo", "sg"})  # Chinese-speaking, answered from the international zone


def zone_and_language(q: EngineQuery) -> tuple[str, str | None]:
    """(``cn`` or ``intl``, the language to ask in or None)."""
    country, lang = split_locale(q.region, q.language)
    lang = lang or script_language(q.text)
    chinese = country == "cn" or (lang == "zh" and country not in NOT_MAINLAND)
    return ("cn" if chinese else "intl"), lang


def build_request(q: EngineQuery) -> RequestSpec | None:
    if q.time_range or q.date_from or q.date_to:
        return None  # no date filter in the API
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if q.api_key:
        headers["Authorization"] = f"Bearer {q.api_key}"
    zone, language = zone_and_language(q)
    body = {"query": q.text, "max_results": clamp(q.limit, 1, MAX_RESULTS), "format": "json", "zone": zone}
    if language:
        body["language"] = language
    return RequestSpec(method="POST", url=URL, headers=headers, json=body)


def classify(status: int, headers: Mapping[str, str], body_head: bytes) -> EngineError | None:
    """The central mapper on the status and headers only: AnySearch error bodies are never looked at."""
    error = classify_http(status, headers, b"")
    if error is None and status != 200:
        return EngineError(f"AnySearch: unexpected HTTP {status}")
    return error


def _pick(item: dict) -> RowFields:
    return item.get("url"), item.get("title"), item.get("snippet") or item.get("content"), None


def parse(status: int, headers: Mapping[str, str], body: bytes, q: EngineQuery) -> list[EngineRow]:
    if status != 200:
        raise classify(status, headers, b"") or EngineError(f"AnySearch: unexpected HTTP {status}")
    data = json_body(body)
    if not isinstance(data, dict) or "code" not in data:
        raise ParseFailure("AnySearch: unexpected response shape")
    if data.get("code") != 0:
        raise EngineError("AnySearch returned an error code")
    results = (data.get("data") or {}).get("results") if isinstance(data.get("data"), dict) else None
    return rows_from_json_list(
        INFO.name, results, _pick, no_list_message="AnySearch: no result list in the response"
    )
