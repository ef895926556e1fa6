"""Brave Search's own web results page (keyless): Brave's independent index, read from its HTML.

GET https://search.brave.com/search?q=...&source=web, as the search box sends it; ``tf`` (pd|pw|pm|py) filters
by time. The region goes in the ``country`` cookie, ``useLocation=0`` keeps Brave from guessing it from the
IP, and ``summarizer=0`` turns off the AI summary (SearXNG's brave engine sends both). Brave answers browsers
with brotli and checks the Sec-Fetch-* headers a navigation carries: the browser transport sends both (curl_cffi
decodes brotli).

A 429 (with or without ``Retry-After``) is a rate limit: the engine cools down for what Retry-After says
(at least 10 s) or 180 s, and is not asked again in the same search.

Each web result is a ``div[data-type="web"]``. Two layouts are read: the 2022 one (``a.result-header``,
``.snippet-title``, ``p.snippet-description``; the real captures in ../shared/data/aql-serps) and the current
Svelte one (``a.l1``, ``.search-snippet-title``, ``.generic-snippet .content``; hand-made fixture from peers'
documented selectors). A snippet's leading "February 13, 2026 -" is its date, not text.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping

from selectolax.lexbor import LexborNode

from serpfuse.engines.base import (
    ChallengeDetected,
    EngineInfo,
    EngineQuery,
    RequestSpec,
    check_status,
    shows_challenge,
)
from serpfuse.engines.bodies import html_tree, node_text, results_page_without_rows
from serpfuse.engines.dates import leading_date
from serpfuse.engines.locale import split_locale
from serpfuse.engines.rows import RowFields, rows_from_items
from serpfuse.models import EngineRow

INFO = EngineInfo(
    name="brave-web",
    website="https://search.brave.com",
    tier="primary",
    region="global",
    kind="html",
    needs_key=False,
    transport="browser",
    time_range_support=True,
    rows_per_request=20,
    group="brave",
    # Brave answers a burst from one address with 429: a query's variants go a second apart, and one queued
    # behind a 429 is not sent at all (the live source re-checks the cooldown after the queue).
    min_interval_s=1.0,
)

URL = "https://search.brave.com/search"
TIME_RANGE = {"day": "pd", "week": "pw", "month": "pm", "year": "py"}
# What a click on Brave's own search box sends (a same-origin navigation).
HEADERS = {
    "Referer": "https://search.brave.com/",
    "Sec-Fetch-Dest": "document",
    "Sec-Fetch-Mode": "navigate",
    "Sec-Fetch-Site": "same-origin",
    "Sec-Fetch-User": "?1",
}

RESULTS = 'div[data-type="web"]'  # one selector: a comma list would match a node once per alternative
# Each tuple is tried in order, newest layout first.
LINKS = ("a.l1", "a.result-header", "a[href]")
TITLES = (".search-snippet-title", ".snippet-title", ".title")
SNIPPETS = (".generic-snippet .content", ".generic-snippet", ".snippet-description", ".description")
# The results page itself (with or without results): a page without it is not one Brave's parser knows.
RESULTS_PAGE = '#results, #search-main, div[data-type="web"]'
# Brave's bot check: its own PoW/CAPTCHA page, or a third-party CAPTCHA widget.
CHALLENGE_MARKERS = (b"/search/captcha", b"pow-captcha", b"captcha-container", b"g-recaptcha", b"h-captcha")
# "February 13, 2026 - text", "3 days ago - text": the date Brave puts in front of a snippet.
_DATE_PREFIX = re.compile(r"^(?P<date>[A-Za-z0-9 ,.]{3,30}?)\s+[-\u2013\u2014]\s+(?P<rest>.*)$", re.DOTALL)


def build_request(q: EngineQuery) -> RequestSpec | None:
    if q.date_from or q.date_to:
        return None  # tf takes relative ranges only here
    params = {"q": q.text, "source": "web"}
    if q.time_range:
        params["tf"] = TIME_RANGE[q.time_range]
    country, _ = split_locale(q.region, q.language)
    cookies = {"useLocation": "0", "summarizer": "0", "country": country or "all"}
    return RequestSpec(method="GET", url=URL, params=params, headers=dict(HEADERS), cookies=cookies)


def _first(item: LexborNode, selectors: tuple[str, ...]) -> LexborNode | None:
    for selector in selectors:
        node = item.css_first(selector)
        if node is not None:
            return node
    return None


def dated_snippet(text: str) -> tuple[str, dt.datetime | None]:
    return leading_date(text, _DATE_PREFIX)


def _pick(item: LexborNode) -> RowFields | None:
    link = _first(item, LINKS)
    if link is None:
        return None
    title = node_text(_first(link, TITLES) or _first(item, TITLES) or link)
    snippet, published = dated_snippet(node_text(_first(item, SNIPPETS)))
    return link.attributes.get("href"), title, snippet, published


def parse(status: int, headers: Mapping[str, str], body: bytes, q: EngineQuery) -> list[EngineRow]:
    check_status(status, headers, body)
    tree = html_tree(body, headers)
    rows = rows_from_items(INFO.name, tree.css(RESULTS), _pick, markup=False)
    if rows:
        return rows
    if shows_challenge(body, CHALLENGE_MARKERS):
        raise ChallengeDetected("Brave Search bot check")
    return results_page_without_rows(tree, RESULTS_PAGE, "Brave Search")
