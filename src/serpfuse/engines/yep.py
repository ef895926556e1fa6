"""Yep: Ahrefs' own web index (keyless), read from the JSON its search page asks for.

GET https://api.yep.com/search?query=...&safeSearch=off&limit=20 (``hl`` the language when one is given), as
yep.com's own page asks: a cross-site fetch from https://yep.com, so ``Origin``, ``Referer`` and the
``Sec-Fetch-*`` headers such a fetch carries (``cors``, ``empty``, ``same-site``); without them Yep answers
"access denied" (SearXNG PR #6223). The endpoint is the site's own, guarded like its pages, so it is asked for
the way a browser asks. Yep moved it from ``/fs/2/search?client=web&q=...&type=web`` to this path and these
names in 2026-05 (SearXNG #6048 and the "api path changed" fix after it).

The answer is a two-element list, ``[status, {"results": [{url, title, snippet}, ...]}]``, the snippet HTML.
Yep has no time filter: the engine is skipped for time-range searches.
"""

from __future__ import annotations

from collections.abc import Mapping

from serpfuse.engines.base import EngineInfo, EngineQuery, ParseFailure, RequestSpec, check_status, clamp
from serpfuse.engines.bodies import json_body
from serpfuse.engines.locale import split_locale
from serpfuse.engines.rows import RowFields, rows_from_json_list
from serpfuse.models import EngineRow

INFO = EngineInfo(
    name="yep",
    website="https://yep.com",
    tier="primary",
    region="global",
    kind="json",
    needs_key=False,
    # The site's own fetch endpoint, behind its bot check: asked as the browser that loaded yep.com would.
    transport="browser",
    rows_per_request=20,
    group="yep",
)

URL = "https://api.yep.com/search"
SITE = "https://yep.com"
SAFE_SEARCH = "off"
# What a fetch() from https://yep.com to api.yep.com carries.
FETCH_HEADERS = {
    "Accept": "*/*",
    "Origin": SITE,
    "Referer": SITE + "/",
    "Sec-Fetch-Dest": "empty",
    "Sec-Fetch-Mode": "cors",
    "Sec-Fetch-Site": "same-site",
}


def build_request(q: EngineQuery) -> RequestSpec | None:
    params: dict[str, str | int] = {
        "query": q.text,
        "safeSearch": SAFE_SEARCH,
        "limit": clamp(q.limit, 1, INFO.rows_per_request),
    }
    _, lang = split_locale(q.region if q.language else None, q.language)
    if lang:
        params["hl"] = lang
    return RequestSpec(method="GET", url=URL, params=params, headers=dict(FETCH_HEADERS))


def _pick(item: dict) -> RowFields | None:
    return item.get("url"), item.get("title"), item.get("snippet"), None


def parse(status: int, headers: Mapping[str, str], body: bytes, q: EngineQuery) -> list[EngineRow]:
    check_status(status, headers, body)
    data = json_body(body)
    if not (isinstance(data, list) and len(data) >= 2 and isinstance(data[1], dict)):
        raise ParseFailure("Yep: unexpected response shape")
    return rows_from_json_list(
        INFO.name, data[1].get("results"), _pick, no_list_message="Yep: no result list in the response"
    )
