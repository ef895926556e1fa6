"""Brave Search's news results page (keyless): news from Brave's own index, read from its HTML.

GET https://search.brave.com/news?q=...&source=web, with the cookies and navigation headers of ``brave_web``
(the region in ``country``, ``useLocation=0``). Brave's news page takes no time filter (its ``tf`` works on web
search only), so the engine is skipped for time-range searches.

Each article is a ``div[data-type="news"]``: the link ``a.result-header``, the title ``.snippet-title``, the
text ``p.desc`` (the selectors of SearXNG's brave engine in its news category). The card shows when the article
appeared, as a ``<time>`` or as its age ("3 hours ago"), which is the row's publication date.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping

from selectolax.lexbor import LexborNode

from serpfuse.engines import brave_web
from serpfuse.engines.base import (
    ChallengeDetected,
    EngineInfo,
    EngineQuery,
    RequestSpec,
    check_status,
    shows_challenge,
)
from serpfuse.engines.bodies import html_tree, node_text, results_page_without_rows
from serpfuse.engines.dates import parse_published
from serpfuse.engines.locale import split_locale
from serpfuse.engines.rows import RowFields, rows_from_items
from serpfuse.models import EngineRow

INFO = EngineInfo(
    name="brave-news",
    website="https://search.brave.com/news",
    tier="primary",
    region="global",
    kind="html",
    needs_key=False,
    transport="browser",
    rows_per_request=20,
    group="brave",
    category="news",
)

URL = "https://search.brave.com/news"
RESULTS = 'div[data-type="news"]'
LINKS = ("a.result-header", "a[href]")
TITLES = (".snippet-title", ".title")
SNIPPETS = ("p.desc", ".snippet-description", ".description")
RESULTS_PAGE = '#results, #search-main, div[data-type="news"]'
_AGE = re.compile(r"\b(?:\d+|an?) (?:minute|hour|day|week|month|year)s? ago\b", re.IGNORECASE)


def build_request(q: EngineQuery) -> RequestSpec | None:
    country, _ = split_locale(q.region, q.language)
    return RequestSpec(
        method="GET",
        url=URL,
        params={"q": q.text, "source": "web"},
        headers=dict(brave_web.HEADERS),
        cookies={"useLocation": "0", "summarizer": "0", "country": country or "all"},
    )


def _first(item: LexborNode, selectors: tuple[str, ...]) -> LexborNode | None:
    for selector in selectors:
        node = item.css_first(selector)
        if node is not None:
            return node
    return None


def card_date(item: LexborNode, text_nodes: tuple[LexborNode | None, ...]) -> dt.datetime | None:
    """When the article appeared: the card's ``<time>``, else an age in the card's text outside its title and
    description."""
    stamp = item.css_first("time")
    if stamp is not None:
        found = parse_published(stamp.attributes.get("datetime") or node_text(stamp))
        if found is not None:
            return found
    text = node_text(item)
    for node in text_nodes:
        if node is not None:
            text = text.replace(node_text(node), " ")
    age = _AGE.search(text)
    return parse_published(age.group(0)) if age else None


def _pick(item: LexborNode) -> RowFields | None:
    link = _first(item, LINKS)
    if link is None:
        return None
    title = _first(link, TITLES) or _first(item, TITLES)
    snippet = _first(item, SNIPPETS)
    published = card_date(item, (title, snippet))
    return link.attributes.get("href"), node_text(title or link), node_text(snippet), published


def parse(status: int, headers: Mapping[str, str], body: bytes, q: EngineQuery) -> list[EngineRow]:
    check_status(status, headers, body)
    tree = html_tree(body, headers)
    rows = rows_from_items(INFO.name, tree.css(RESULTS), _pick, markup=False)
    if rows:
        return rows
    if shows_challenge(body, brave_web.CHALLENGE_MARKERS):
        raise ChallengeDetected("Brave Search bot check")
    return results_page_without_rows(tree, RESULTS_PAGE, "Brave Search")
