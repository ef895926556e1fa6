"""Bing web search, scraped from www.bing.com (keyless). Market (``mkt``) from the query's region/language.

Result links are often wrapped in ``https://www.bing.com/ck/a?...&u=a1<base64url>``; ``unwrap_redirect`` opens
them. Time ranges use Bing's ``filters=ex1:"ez1|ez2|ez3"`` and a custom day range ``ez5_<from>_<to>`` (days
since the Unix epoch) for a year or explicit dates.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping

from selectolax.lexbor import LexborNode

from ..models import EngineRow
from .base import (
    ChallengeDetected,
    EngineInfo,
    EngineQuery,
    Picked,
    RequestSpec,
    check_status,
    clamp,
    html_tree,
    node_text,
    parse_published,
    range_start,
    rows_from_items,
    shows_challenge,
    split_locale,
)

INFO = EngineInfo(
    name="bing",
    website="https://www.bing.com",
    tier="primary",
    region="global",
    kind="html",
    needs_key=False,
    transport="browser",
    time_range_support=True,
    date_range_support=True,
    rows_per_request=20,
    group="bing",
)

URL = "https://www.bing.com/search"
TIME_FILTER = {"day": 'ex1:"ez1"', "week": 'ex1:"ez2"', "month": 'ex1:"ez3"'}
EPOCH = dt.date(1970, 1, 1)

# Bing's bot check ("turing" CAPTCHA) and the challenge pages it serves instead of results.
CHALLENGE_MARKERS = (
    b"/turing/captcha/",
    b'id="b_captcha',
    b"challenges.cloudflare.com/turnstile",
    b"b_captcha",
)

RESULTS = "li.b_algo"  # one selector: a comma list would match a node once per alternative
TITLE_LINK = "h2 a, .b_algoheader a[href], a.tilk"
# Tried in order; "p.b_paractl" is a rich (Wikipedia) card's text. The caption's <cite> is never a snippet.
SNIPPETS = (
    ".b_caption p",
    "p.b_lineclamp2",
    "p.b_lineclamp3",
    "p.b_lineclamp4",
    ".b_algoSlug",
    "p.b_paractl",
)
DATE = "span.news_dt"


def market(q: EngineQuery, default_country: str | None = None) -> tuple[str | None, str | None]:
    """(mkt like "en-US", setlang like "en") from the query; None where unknown."""
    country, lang = split_locale(q.region, q.language)
    country = country or default_country
    mkt = f"{lang}-{country.upper()}" if lang and country else None
    return mkt, lang


def day_range_filter(start: dt.date, end: dt.date) -> str:
    return f'ex1:"ez5_{(start - EPOCH).days}_{(end - EPOCH).days}"'


def time_filter(q: EngineQuery, today: dt.date) -> str | None:
    if q.time_range in TIME_FILTER:
        return TIME_FILTER[q.time_range]
    start = range_start(q.time_range, today) or q.date_from
    if start or q.date_to:
        return day_range_filter(start or EPOCH, q.date_to or today)
    return None


def request_for(url: str, q: EngineQuery, default_country: str | None = None) -> RequestSpec:
    params: dict[str, str | int] = {"q": q.text, "count": clamp(q.limit, 1, INFO.rows_per_request)}
    mkt, lang = market(q, default_country)
    if mkt:
        params["mkt"] = mkt
    if lang:
        params["setlang"] = lang
    flt = time_filter(q, dt.date.today())
    if flt:
        params["filters"] = flt
    return RequestSpec(method="GET", url=q.base_url or url, params=params)


def build_request(q: EngineQuery) -> RequestSpec | None:
    return request_for(URL, q)


def _snippet(item: LexborNode) -> tuple[str, dt.datetime | None]:
    for selector in SNIPPETS:
        node = item.css_first(selector)
        if node is None:
            continue
        date_node = node.css_first(DATE)
        published = None
        text = node_text(node)
        if date_node is not None:
            date_text = node_text(date_node)
            published = parse_published(date_text)
            # "Jul 10, 2021 · text": the date is metadata, not snippet text.
            text = text.removeprefix(date_text).lstrip(" ·\u00a0-").strip()
        if text:
            return text, published
    return "", None


def _pick(item: LexborNode) -> Picked | None:
    link = item.css_first(TITLE_LINK)
    if link is None:
        return None
    return link.attributes.get("href"), node_text(link), *_snippet(item)


def parse_rows(engine: str, status: int, headers: Mapping[str, str], body: bytes) -> list[EngineRow]:
    check_status(status, headers, body)
    rows = rows_from_items(engine, html_tree(body, headers).css(RESULTS), _pick, markup=False)
    if not rows and shows_challenge(body, CHALLENGE_MARKERS):
        raise ChallengeDetected("Bing CAPTCHA page")
    return rows


def parse(status: int, headers: Mapping[str, str], body: bytes, q: EngineQuery) -> list[EngineRow]:
    return parse_rows(INFO.name, status, headers, body)
