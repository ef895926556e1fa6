"""DuckDuckGo News (keyless; news from Bing's index under DuckDuckGo's ranking), from the JSON its page reads.

Two requests, as the site makes them. First the news results page, https://duckduckgo.com/?q=...&iar=news&t=h_:
it holds the query's ``vqd`` token (``vqd="4-..."`` in its scripts), without which DuckDuckGo's JSON endpoints
refuse to answer. Then the fetch that page makes: GET https://duckduckgo.com/news.js with ``o=json``, ``q``,
``l`` (DuckDuckGo's region code, ``wt-wt`` for none), ``vqd``, ``noamp=1`` and ``df`` (d/w/m) for a time range.
A token belongs to one query, so each call fetches its own.

The answer is ``{"results": [{date, title, excerpt, url, source, relative_time}, ...]}``: ``date`` in Unix
seconds (the publication date), ``excerpt`` HTML. News has no yearly filter, so a year's range is not served.
The query is sent as ddg's web search sends it (bangs quoted, at most 499 characters).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from typing import Any

from serpfuse.engines import ddg
from serpfuse.engines.base import (
    ChallengeDetected,
    EngineInfo,
    EngineQuery,
    ParseFailure,
    QueryNotServed,
    Reply,
    RequestSpec,
    check_status,
    shows_challenge,
)
from serpfuse.engines.bodies import json_body
from serpfuse.engines.rows import RowFields, rows_from_json_list
from serpfuse.models import EngineRow

INFO = EngineInfo(
    name="ddg-news",
    website="https://duckduckgo.com",
    tier="primary",
    region="global",
    kind="json",
    needs_key=False,
    # The token page and its fetch are DuckDuckGo's own, behind the bot wall that reads TLS fingerprints.
    transport="browser",
    time_range_support=True,  # day/week/month; a year makes build_preflight return None
    rows_per_request=30,
    group="bing",
    challenge_cooldown_s=ddg.INFO.challenge_cooldown_s,
    category="news",
)

ROOT = "https://duckduckgo.com"
TIME_RANGE = {"day": "d", "week": "w", "month": "m"}
_VQD = re.compile(rb"""vqd=["']?([0-9][0-9-]{4,})""")
# The fetch the results page makes: same origin, from a script.
FETCH_HEADERS = {
    "Accept": "application/json, text/javascript, */*; q=0.01",
    "Sec-Fetch-Dest": "empty",
    "Sec-Fetch-Mode": "cors",
}


def build_preflight(q: EngineQuery) -> RequestSpec | None:
    if q.date_from or q.date_to or (q.time_range and q.time_range not in TIME_RANGE):
        return None
    if len(q.text) > ddg.MAX_QUERY_CHARS:
        raise QueryNotServed(
            f"query is {len(q.text)} characters; DuckDuckGo takes at most {ddg.MAX_QUERY_CHARS}"
        )
    root = ROOT
    params = {"q": ddg.quote_bangs(q.text), "iar": "news", "t": "h_"}
    return RequestSpec(method="GET", url=root + "/", params=params, headers={"Referer": root + "/"})


def token(body: bytes) -> str | None:
    """The ``vqd`` token of a results page, or None."""
    match = _VQD.search(body)
    return match.group(1).decode("ascii") if match else None


def build_request(q: EngineQuery, preflight: Reply) -> RequestSpec | None:
    status, headers, body = preflight
    if status == ddg.CHALLENGE_STATUS:
        raise ChallengeDetected("DuckDuckGo bot challenge (HTTP 202)")
    vqd = token(body)
    if vqd is None:
        if shows_challenge(body, ddg.CHALLENGE_MARKERS):
            raise ChallengeDetected("DuckDuckGo bot challenge")
        raise ParseFailure("DuckDuckGo: no vqd token on the results page (layout changed?)")
    root = ROOT
    params = {
        "o": "json",
        "q": ddg.quote_bangs(q.text),
        "l": ddg.region_code(q.region, q.language),
        "vqd": vqd,
        "noamp": "1",
    }
    if q.time_range:
        params["df"] = TIME_RANGE[q.time_range]
    return RequestSpec(
        method="GET", url=root + "/news.js", params=params, headers={**FETCH_HEADERS, "Referer": root + "/"}
    )


def published(seconds: Any) -> dt.datetime | None:
    """A Unix time as an aware UTC datetime; None for anything else (or a time before 1990, which no
    article of DuckDuckGo's news has)."""
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        return None
    if not 631152000 <= seconds <= 32503680000:  # 1990-01-01 .. 3000-01-01
        return None
    return dt.datetime.fromtimestamp(seconds, dt.UTC)


def _pick(item: dict) -> RowFields | None:
    return item.get("url"), item.get("title"), item.get("excerpt"), published(item.get("date"))


def parse(status: int, headers: Mapping[str, str], body: bytes, q: EngineQuery) -> list[EngineRow]:
    if status == ddg.CHALLENGE_STATUS:
        raise ChallengeDetected("DuckDuckGo bot challenge (HTTP 202)")
    check_status(status, headers, body)
    data = json_body(body)
    if not isinstance(data, dict):
        raise ParseFailure("DuckDuckGo News: unexpected response shape")
    return rows_from_json_list(
        INFO.name, data.get("results"), _pick, no_list_message="DuckDuckGo News: no result list"
    )
