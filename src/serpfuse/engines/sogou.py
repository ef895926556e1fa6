"""Sogou web search (keyless; Sogou's own index), its HTML results page.

``GET https://www.sogou.com/web?query=QUERY`` with ``Accept-Language: zh-CN``, as SearXNG asks it (``sogou.py``
9e25585ae, 2026-07-14, which adds ``page=1``) and dhole-mcp 17.3 (PyPI, 2026-10, class ``Sogou``); a time range
is SearXNG's ``s_from=inttime_day|week|month|year`` with ``tsn=1``.

Rows: the result cards ``div.vrwrap`` (and the older ``div.rb``) that name a target; the "related searches"
blocks share the class and name none, so they take no rank (dhole measured 2 of 9 such on 2026-10-14). Title:
the ``h3``; snippet: ``.fz-mid``, ``.space-txt``, ``.attribute-centent``, ``.str-info`` or ``.ft``; date:
``span.cite-date`` ("2024-11-22"). URL: the card's ``data-url`` when it is one well-formed URL, else the
``/link?url=`` redirector made absolute (``engines.cjk.target_url``).

Blocks: a 302 to ``/antispider`` (SearXNG's CAPTCHA test; followed, it is that page) or a verification page is a
challenge.
"""

from __future__ import annotations

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
from serpfuse.engines.cjk import CHINESE_BLOCK_MARKERS, target_url, well_formed
from serpfuse.engines.dates import parse_published
from serpfuse.engines.rows import RowFields, rows_from_items
from serpfuse.models import EngineRow

INFO = EngineInfo(
    name="sogou",
    website="https://www.sogou.com",
    tier="primary",
    region="cjk",
    kind="html",
    needs_key=False,
    transport="browser",
    time_range_support=True,
    rows_per_request=10,
    group="sogou",
    challenge_cooldown_s=1800.0,
)

URL = "https://www.sogou.com/web"
BASE = "https://www.sogou.com/"
ACCEPT_LANGUAGE = "zh-CN,zh;q=0.9"
TIME_RANGE = {"day": "inttime_day", "week": "inttime_week", "month": "inttime_month", "year": "inttime_year"}
RESULTS_PAGE = "#main, .results"
CARD_CLASSES = frozenset({"vrwrap", "rb"})
TITLED = frozenset({"pt", "vr-title"})  # SearXNG's two title classes
SNIPPETS = (".fz-mid", ".space-txt", ".attribute-centent", ".str-info", ".ft", "p.str_info")
DATE = re.compile(r"(\d{4}-\d{1,2}-\d{1,2})")


def build_request(q: EngineQuery) -> RequestSpec | None:
    if q.date_from or q.date_to:
        return None
    params = {"query": q.text}
    if q.time_range:
        params.update(s_from=TIME_RANGE[q.time_range], tsn="1")
    return RequestSpec(method="GET", url=URL, params=params, headers={"Accept-Language": ACCEPT_LANGUAGE})


def _named_target(card: LexborNode) -> str | None:
    """The first well-formed ``data-url`` of the card, itself or inside it."""
    for node in [card, *card.css("[data-url]")]:
        found = well_formed(node.attributes.get("data-url"))
        if found:
            return found
    return None


def _is_result(card: LexborNode) -> bool:
    """A result card: its title, and a target it names (``data-url``) or one of SearXNG's titled links; not the
    "related searches" blocks that share the class (dhole-mcp 17.3)."""
    heading = card.css_first("h3")
    if heading is None or "special-wrap" in (card.attributes.get("class") or ""):
        return False
    if card.attributes.get("data-url") is not None or card.css_first("[data-url]") is not None:
        return True
    return bool(set((heading.attributes.get("class") or "").split()) & TITLED)


def _is_card(node: LexborNode) -> bool:
    return bool(set((node.attributes.get("class") or "").split()) & CARD_CLASSES)


def _cards(tree) -> list[LexborNode]:
    """The innermost result cards, in page order."""
    return [
        node
        for node in tree.css("div[class]")
        # (a node's css() holds the node itself: one card in its subtree is itself alone)
        if _is_card(node) and _is_result(node) and sum(map(_is_card, node.css("div[class]"))) <= 1
    ]


def _pick(card: LexborNode) -> RowFields | None:
    heading = card.css_first("h3")
    link = heading.css_first("a[href]") if heading is not None else None
    url = target_url(_named_target(card), link.attributes.get("href") if link else None, BASE)
    snippet = next((t for s in SNIPPETS if (t := node_text(card.css_first(s)))), "")
    date = DATE.search(node_text(card.css_first("span.cite-date, cite")))
    return url, node_text(heading), snippet, parse_published(date.group(1)) if date else None


def parse(status: int, headers: Mapping[str, str], body: bytes, q: EngineQuery) -> list[EngineRow]:
    check_status(status, headers, body)
    tree = html_tree(body, headers)
    rows = rows_from_items(INFO.name, _cards(tree), _pick, markup=False)
    if rows:
        return rows
    if shows_challenge(body, CHINESE_BLOCK_MARKERS):
        raise ChallengeDetected("Sogou verification page (antispider)")
    return results_page_without_rows(tree, RESULTS_PAGE, "Sogou")
