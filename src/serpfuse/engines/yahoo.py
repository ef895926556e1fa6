"""Yahoo web search, scraped from search.yahoo.com (keyless; Bing's index under Yahoo's ranking).

Result links go through ``r.search.yahoo.com/.../RU=<target>/RK=...``; ``unwrap_redirect`` opens them. Yahoo's
time filter knows day, week and month only, so a year or explicit dates cannot be applied.
"""

from __future__ import annotations

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
    html_tree,
    node_text,
    rows_from_items,
    shows_challenge,
    split_locale,
)

INFO = EngineInfo(
    name="yahoo",
    website="https://search.yahoo.com",
    tier="fallback",
    region="global",
    kind="html",
    needs_key=False,
    transport="browser",
    time_range_support=True,  # day/week/month; a year makes build_request return None
    rows_per_request=10,
    group="bing",
)

URL = "https://search.yahoo.com/search"
TIME_RANGE = {"day": "d", "week": "w", "month": "m"}

# Yahoo's bot wall and consent interstitials stand in for results.
CHALLENGE_MARKERS = (b"/_yahoo_captcha", b"consent.yahoo.com/v2/collectConsent", b'id="captcha')

RESULTS = "div.algo"
TITLE_LINK = "div.compTitle h3 a, h3.title a, div.compTitle a[href]"
TITLE_HEADING = "h3"
SNIPPET = "div.compText, p.fz-ms, p.lh-16"
BREADCRUMB_TAGS = ("span",)


def build_request(q: EngineQuery) -> RequestSpec | None:
    if q.date_from or q.date_to or (q.time_range and q.time_range not in TIME_RANGE):
        return None
    params = {"p": q.text, "ei": "UTF-8"}
    _, lang = split_locale(q.region, q.language)
    if lang:
        params["vl"] = f"lang_{lang}"
    if q.time_range:
        params["btf"] = TIME_RANGE[q.time_range]
    return RequestSpec(method="GET", url=q.base_url or URL, params=params)


def _title(link: LexborNode) -> str:
    # Newer layouts put the breadcrumb ("example.com › path") in a span inside the link, before the title.
    heading = link.css_first(TITLE_HEADING)
    if heading is not None:
        return node_text(heading)
    label = link.attributes.get("aria-label")
    if label:
        return " ".join(label.split())
    direct = "".join(
        (child.text(deep=True) or "")
        for child in link.iter(include_text=True)
        if child.tag not in BREADCRUMB_TAGS
    )
    return " ".join(direct.split()) or node_text(link)


def _pick(item: LexborNode) -> Picked | None:
    link = item.css_first(TITLE_LINK)
    if link is None:
        return None
    return link.attributes.get("href"), _title(link), node_text(item.css_first(SNIPPET)), None


def parse(status: int, headers: Mapping[str, str], body: bytes, q: EngineQuery) -> list[EngineRow]:
    check_status(status, headers, body)
    rows = rows_from_items(INFO.name, html_tree(body, headers).css(RESULTS), _pick, markup=False)
    if not rows and shows_challenge(body, CHALLENGE_MARKERS):
        raise ChallengeDetected("Yahoo bot check or consent page")
    return rows
