"""Yahoo web search, scraped from search.yahoo.com or a regional host (keyless; Microsoft's index under
Yahoo's ranking).

The request is what Yahoo's own search box sends: ``p`` (query), ``ei=UTF-8`` and an empty ``iscqry``
(without it Yahoo answers one result; SearXNG cc61d0833). The language does not go on the URL: it sits in the
``sB`` preferences cookie (``vl=lang_<code>``), as Yahoo's settings page stores it. A region picks Yahoo's
regional host (data/yahoo_hosts.json: de.search.yahoo.com, uk.search.yahoo.com...). Yahoo drops plain Python
clients (SearXNG #6016), so the engine goes through the browser transport, whose session also keeps the ``YBV``
cookie Yahoo hands out on a redirect chain before it shows results.

Result links go through ``r.search.yahoo.com/.../RU=<target>/RK=...``; ``unwrap_redirect`` opens them. Yahoo's
time filter (``btf``) knows day, week and month only, so a year or explicit dates cannot be applied.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from urllib.parse import urlencode

from selectolax.lexbor import LexborNode

from serpfuse import data
from serpfuse.engines.base import (
    ChallengeDetected,
    EngineInfo,
    EngineQuery,
    RequestSpec,
    check_status,
    shows_challenge,
)
from serpfuse.engines.bodies import html_tree, node_text, results_page_without_rows
from serpfuse.engines.locale import split_locale
from serpfuse.engines.rows import RowFields, rows_from_items
from serpfuse.models import EngineRow

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

DEFAULT_HOST = "search.yahoo.com"
TIME_RANGE = {"day": "d", "week": "w", "month": "m"}
ANY_LANGUAGE = "any"

# Yahoo's bot wall and consent interstitials stand in for results.
CHALLENGE_MARKERS = (b"/_yahoo_captcha", b"consent.yahoo.com/v2/collectConsent", b'id="captcha')

RESULTS = "div.algo"
RESULTS_PAGE = "#web"  # on every results page (the AQL captures)
TITLE_LINK = "div.compTitle h3 a, h3.title a, div.compTitle a[href]"
TITLE_HEADING = "h3"
SNIPPET = "div.compText, p.fz-ms, p.lh-16"
BREADCRUMB_TAGS = ("span",)


@cache
def _table() -> tuple[dict[str, str], dict[str, str]]:
    table = data.json("yahoo_hosts.json")
    return dict(table["hosts"]), dict(table["languages"])


def host_for(country: str | None) -> str:
    hosts, _ = _table()
    return hosts.get(country or "", DEFAULT_HOST)


def preferences_cookie(language: str | None) -> str:
    """The ``sB`` cookie Yahoo's settings page stores: version, language filter, ten rows, the new layout."""
    _, codes = _table()
    lang = codes.get(language, language) if language else ANY_LANGUAGE
    return urlencode({"v": 1, "vl": f"lang_{lang}", "fl": 1, "pn": 10, "rw": "new", "userset": 1})


def build_request(q: EngineQuery) -> RequestSpec | None:
    if q.date_from or q.date_to or (q.time_range and q.time_range not in TIME_RANGE):
        return None
    country, lang = split_locale(q.region, q.language)
    params = {"p": q.text, "ei": "UTF-8", "iscqry": ""}
    if q.time_range:
        params["btf"] = TIME_RANGE[q.time_range]
    url = f"https://{host_for(country)}/search"
    return RequestSpec(method="GET", url=url, params=params, cookies={"sB": preferences_cookie(lang)})


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


def _pick(item: LexborNode) -> RowFields | None:
    link = item.css_first(TITLE_LINK)
    if link is None:
        return None
    return link.attributes.get("href"), _title(link), node_text(item.css_first(SNIPPET)), None


def parse(status: int, headers: Mapping[str, str], body: bytes, q: EngineQuery) -> list[EngineRow]:
    check_status(status, headers, body)
    tree = html_tree(body, headers)
    rows = rows_from_items(INFO.name, tree.css(RESULTS), _pick, markup=False)
    if rows:
        return rows
    if shows_challenge(body, CHALLENGE_MARKERS):
        raise ChallengeDetected("Yahoo bot check or consent page")
    return results_page_without_rows(tree, RESULTS_PAGE, "Yahoo")
