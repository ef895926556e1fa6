"""Bing News (keyless; Microsoft's news index), from the RSS feed of its news search.

GET https://www.bing.com/news/search?q=...&format=rss, with the interface language and country Bing's web
search sends (``setlang``, ``cc``: see ``engines.bing``) and ``qft=interval="7"|"8"|"9"`` for the last day,
week or month. Bing's news has no yearly filter, so a year's range is not served.

Each ``channel/item`` is a row: ``link`` (often through ``bing.com/news/apiclick.aspx?...&url=TARGET``, opened
here), ``title``, ``description`` (tags stripped: highlighting, not text) and ``pubDate`` (RFC 2822), the
publication date. A feed never needs a DTD, so a body that declares one is refused unread (entity expansion is
no business of a feed). Bing's CAPTCHA answers in HTML instead of a feed.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping
from urllib.parse import parse_qs, urlsplit

from serpfuse.engines import bing
from serpfuse.engines.base import (
    ChallengeDetected,
    EngineInfo,
    EngineQuery,
    ParseFailure,
    RequestSpec,
    check_status,
    shows_challenge,
)
from serpfuse.engines.dates import parse_published
from serpfuse.engines.locale import accept_language
from serpfuse.engines.rows import RowFields, rows_from_items
from serpfuse.models import EngineRow

INFO = EngineInfo(
    name="bing-news",
    website="https://www.bing.com/news",
    tier="primary",
    region="global",
    kind="xml",
    needs_key=False,
    transport="browser",  # www.bing.com's bot check reads the client as it does for the web search
    time_range_support=True,  # day/week/month; a year makes build_request return None
    rows_per_request=20,
    group="bing",
    category="news",
)

URL = "https://www.bing.com/news/search"
TIME_RANGE = {"day": "7", "week": "8", "month": "9"}  # qft=interval="N": last 24 hours, 7 days, 30 days
CLICK_PATH = "/news/apiclick.aspx"
_DECLARATIONS = (b"<!DOCTYPE", b"<!ENTITY")


def build_request(q: EngineQuery) -> RequestSpec | None:
    if q.date_from or q.date_to or (q.time_range and q.time_range not in TIME_RANGE):
        return None
    setlang, cc = bing.market(q)
    params = {"q": q.text, "format": "rss", "setlang": setlang}
    if cc:
        params["cc"] = cc
    if q.time_range:
        params["qft"] = f'interval="{TIME_RANGE[q.time_range]}"'
    # The region's browser, as for the web search (SearXNG's bing news sets it from the region too).
    language = accept_language(q.region, q.language)
    headers = {"Accept-Language": language} if language else None
    return RequestSpec(method="GET", url=URL, params=params, headers=headers)


def article_url(link: str | None) -> str | None:
    """The article a feed link points at: the ``url`` of Bing's click-counting redirector, else the link."""
    if not link:
        return link
    try:
        parts = urlsplit(link.strip())
    except ValueError:
        return None
    host = (parts.hostname or "").lower()
    if (host == "bing.com" or host.endswith(".bing.com")) and parts.path.lower() == CLICK_PATH:
        return next(iter(parse_qs(parts.query).get("url", ())), None)
    return link


def _text(item: ET.Element, tag: str) -> str:
    return (item.findtext(tag) or "").strip()


def _pick(item: ET.Element) -> RowFields | None:
    return (
        article_url(_text(item, "link")),
        _text(item, "title"),
        _text(item, "description"),
        parse_published(_text(item, "pubDate")),
    )


def feed_items(body: bytes) -> list[ET.Element] | None:
    """The feed's items, or None when the body is no RSS feed (one that declares a DTD is none either)."""
    if any(d in body for d in _DECLARATIONS):
        return None
    try:
        root = ET.fromstring(body)
    except ET.ParseError:
        return None
    channel = root.find("channel") if root.tag == "rss" else None
    return None if channel is None else channel.findall("item")


def parse(status: int, headers: Mapping[str, str], body: bytes, q: EngineQuery) -> list[EngineRow]:
    check_status(status, headers, body)
    items = feed_items(body)
    if items is None:
        if shows_challenge(body, bing.CHALLENGE_MARKERS):
            raise ChallengeDetected("Bing CAPTCHA page")
        raise ParseFailure("Bing News: not an RSS feed (layout changed?)")
    return rows_from_items(INFO.name, items, _pick)
