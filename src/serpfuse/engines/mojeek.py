"""Mojeek, an independent crawler-based index (keyless). A primary: its own crawl is a voice none of the other
keyless engines repeats (they read Microsoft's, Google's or Brave's), which is what fusion needs first.

GET https://www.mojeek.com/search?q=...; ``since=YYYYMMDD`` filters by date. Never send ``s=0`` on page 1: it
trips Mojeek's rate limiter. Language and region go in the ``lb`` and ``arc`` cookies.
"""

from __future__ import annotations

import datetime as dt
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
from serpfuse.engines.dates import parse_published, range_start
from serpfuse.engines.locale import split_locale
from serpfuse.engines.rows import RowFields, rows_from_items
from serpfuse.models import EngineRow

INFO = EngineInfo(
    name="mojeek",
    website="https://www.mojeek.com",
    tier="primary",
    region="global",
    kind="html",
    needs_key=False,
    transport="browser",
    time_range_support=True,
    rows_per_request=10,
)

URL = "https://www.mojeek.com/search"
# Mojeek's block pages; a 403 is caught by classify_http. The older one says "... appears to be sending automated
# queries"; the newer one (2026) is an ALTCHA proof-of-work page titled "Captcha" whose markup shares nothing
# with it: its widget (``<altcha-widget>``, the altcha script) in a ``captcha-wrap`` box. free-search-mcp 0.16.0
# (PyPI, 2026-10, engines/base.py) names these two markers; without them the page read as a changed layout.
CHALLENGE_MARKERS = (b"sending automated queries", b"altcha", b"captcha-wrap")

RESULTS = "ul.results-standard > li"
RESULTS_PAGE = "div.results, ul.results-standard"  # the results column, with or without results
TITLE_LINK = "h2 a, a.title"
URL_LINK = "a.ob"
SNIPPET = "p.s"
DATE = ".mdate, time"


def build_request(q: EngineQuery) -> RequestSpec | None:
    if q.date_to:
        return None  # Mojeek has a "since" but no "until"
    params = {"q": q.text}
    since = range_start(q.time_range, dt.date.today()) or q.date_from
    if since:
        params["since"] = since.strftime("%Y%m%d")
    country, lang = split_locale(q.region, q.language)
    cookies = {}
    if lang:
        cookies["lb"] = lang
    if country:
        cookies["arc"] = country
    return RequestSpec(method="GET", url=URL, params=params, cookies=cookies or None)


def _pick(item: LexborNode) -> RowFields | None:
    title = item.css_first(TITLE_LINK)
    link = item.css_first(URL_LINK) or title
    if link is None:
        return None
    date_node = item.css_first(DATE)
    published = None
    if date_node is not None:
        published = parse_published(date_node.attributes.get("datetime") or node_text(date_node))
    return link.attributes.get("href"), node_text(title), node_text(item.css_first(SNIPPET)), published


def parse(status: int, headers: Mapping[str, str], body: bytes, q: EngineQuery) -> list[EngineRow]:
    check_status(status, headers, body)
    tree = html_tree(body, headers)
    rows = rows_from_items(INFO.name, tree.css(RESULTS), _pick, markup=False)
    if rows:
        return rows
    if shows_challenge(body, CHALLENGE_MARKERS):
        raise ChallengeDetected("Mojeek bot check")
    return results_page_without_rows(tree, RESULTS_PAGE, "Mojeek")
