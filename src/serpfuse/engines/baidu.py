"""Baidu web search (keyless; Baidu's own index), its HTML results page as a browser asks for it.

``GET https://www.baidu.com/s?wd=QUERY&ie=utf-8``, ``Accept-Language: zh-CN``, as dhole-mcp 17.3 asks it (PyPI,
2026-10, ``search_metasearch.py`` class ``Baidu``: "国内裸网直连", a real results page of about 1 MB); a time range
is ``gpc=stf=FROM,TO|stf_type=2`` in Unix seconds (dhole's, checked there by the difference it makes). SearXNG
(``baidu.py`` b084194c0, 2026-06-26) asks ``tn=json`` instead; the HTML page is what a browser gets and what the
AQL captures hold, so its parser is tested on real pages.

Rows: each result container directly under ``#content_left`` whose classes hold ``c-container`` (the layout of
the 2018-2019 captures and dhole's "A" layout) or ``c-result`` (dhole's "B" layout), ads (``data-tuiguang``,
``ec_`` blocks) left out. Title: the ``h3``; snippet: ``c-abstract`` or the ``summary-text_<hash>`` span of the
newer pages, or a ``content-right`` block. URL: the container's ``mu`` attribute, else the ``mu`` in its
``data-log`` JSON, else the ``baidu.com/link?url=`` redirector (``engines.cjk.target_url``).

Blocks: a redirect to ``wappass.baidu.com/static/captcha`` (followed, it is that page) or a 200 "百度安全验证"
page of a few KB (dhole: about one in sixteen under bursts) is a challenge, never "no results".
"""

from __future__ import annotations

import json
import time
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
from serpfuse.engines.cjk import CHINESE_BLOCK_MARKERS, target_url
from serpfuse.engines.rows import RowFields, rows_from_items
from serpfuse.models import EngineRow

INFO = EngineInfo(
    name="baidu",
    website="https://www.baidu.com",
    tier="primary",
    region="cjk",
    kind="html",
    needs_key=False,
    transport="browser",
    time_range_support=True,
    rows_per_request=10,
    group="baidu",
    challenge_cooldown_s=600.0,  # a burst's block page: minutes, not hours (dhole retries it at once)
)

URL = "https://www.baidu.com/s"
BASE = "https://www.baidu.com/"
ACCEPT_LANGUAGE = "zh-CN,zh;q=0.9"
DAYS = {"day": 1, "week": 7, "month": 31, "year": 366}  # dhole's spans for gpc=stf

RESULTS_PAGE = "#content_left"
CONTAINERS = "#content_left > div"
CONTAINER_CLASSES = frozenset({"c-container", "c-result"})
SNIPPETS = (".c-abstract", "[class*='summary-text']", "[class*='content-right']", ".c-span-last", ".c-row")


def build_request(q: EngineQuery) -> RequestSpec | None:
    if q.date_from or q.date_to:
        return None
    params = {"wd": q.text, "ie": "utf-8"}
    if q.time_range:
        now = int(time.time())
        params["gpc"] = f"stf={now - DAYS[q.time_range] * 86400},{now}|stf_type=2"
    return RequestSpec(method="GET", url=URL, params=params, headers={"Accept-Language": ACCEPT_LANGUAGE})


def _is_result(node: LexborNode) -> bool:
    classes = set((node.attributes.get("class") or "").split())
    if not classes & CONTAINER_CLASSES or "data-tuiguang" in node.attributes or node.css_first("h3") is None:
        return False  # not a result card, an ad, or a box without a title ("大家还在搜")
    return not any(c.startswith("ec_") or c.startswith("ec-") for c in classes)


def _logged_mu(node: LexborNode) -> str | None:
    blob = node.attributes.get("data-log") or ""
    if not blob.startswith("{"):
        return None
    try:
        value = json.loads(blob.replace("'", '"')).get("mu")
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None


def _pick(item: LexborNode) -> RowFields | None:
    heading = item.css_first("h3")
    if heading is None:
        return None
    link = heading.css_first("a[href]")
    url = target_url(
        item.attributes.get("mu") or _logged_mu(item), link.attributes.get("href") if link else None, BASE
    )
    snippet = ""
    for selector in SNIPPETS:
        snippet = node_text(item.css_first(selector))
        if snippet:
            break
    return url, node_text(heading), snippet, None


def parse(status: int, headers: Mapping[str, str], body: bytes, q: EngineQuery) -> list[EngineRow]:
    check_status(status, headers, body)
    tree = html_tree(body, headers)
    items = [node for node in tree.css(CONTAINERS) if _is_result(node)]
    rows = rows_from_items(INFO.name, items, _pick, markup=False)
    if rows:
        return rows
    if shows_challenge(body, CHINESE_BLOCK_MARKERS):
        raise ChallengeDetected("Baidu security check (百度安全验证)")
    return results_page_without_rows(tree, RESULTS_PAGE, "Baidu")
