"""360 Search (so.com; keyless; 360's own index), its HTML results page.

``GET https://www.so.com/s?q=QUERY`` with ``Accept-Language: zh-CN`` and the cookie so.com sets, as SearXNG
asks it (``360search.py`` 6c9dcd424, 2026-06-14; c57db4567, 2025-12-10 "cookie caching": a first GET's
``Set-Cookie``, kept an hour) and dhole-mcp 17.3 (PyPI, 2026-10, class ``So360``, a desktop fingerprint: a
mobile one gets a layout without ``li.res-list``). Here the cookie comes from the home page, as a person's
browser gets it (``build_preflight``, kept an hour, fetched anew after a failed search); a time range is
SearXNG's ``adv_t=d|w|m|y``.

Rows: ``li.res-list``; title ``h3.res-title`` (else any ``h3``); URL the title link's ``data-mdurl`` when it is
one well-formed URL (video cards join several in one), else the ``so.com/link?m=`` redirector
(``engines.cjk.target_url``); snippet ``p.res-desc``, ``span.res-list-summary`` or ``.res-comm-con``.
"""

from __future__ import annotations

from collections.abc import Mapping

from selectolax.lexbor import LexborNode

from serpfuse.engines.base import (
    BODY_HEAD_BYTES,
    ChallengeDetected,
    EngineInfo,
    EngineQuery,
    Reply,
    RequestSpec,
    check_status,
    set_cookies,
    shows_challenge,
)
from serpfuse.engines.bodies import html_tree, node_text, results_page_without_rows
from serpfuse.engines.cjk import CHINESE_BLOCK_MARKERS, target_url
from serpfuse.engines.rows import RowFields, rows_from_items
from serpfuse.models import EngineRow

INFO = EngineInfo(
    name="so360",
    website="https://www.so.com",
    tier="primary",
    region="cjk",
    kind="html",
    needs_key=False,
    transport="browser",
    time_range_support=True,
    rows_per_request=10,
    group="so360",
    preflight_reuse_s=3600.0,  # SearXNG keeps the cookie an hour
    challenge_cooldown_s=1800.0,
)

HOME = "https://www.so.com/"
URL = "https://www.so.com/s"
ACCEPT_LANGUAGE = "zh-CN,zh;q=0.9"
TIME_RANGE = {"day": "d", "week": "w", "month": "m", "year": "y"}
RESULTS_PAGE = "#main, #container, ul.result"
SNIPPETS = ("p.res-desc", "span.res-list-summary", ".res-comm-con", ".res-rich")


def build_preflight(q: EngineQuery) -> RequestSpec | None:
    if q.date_from or q.date_to:
        return None
    return RequestSpec(method="GET", url=HOME, headers={"Accept-Language": ACCEPT_LANGUAGE})


def build_request(q: EngineQuery, preflight: Reply) -> RequestSpec | None:
    _, headers, body = preflight
    if shows_challenge(body[:BODY_HEAD_BYTES], CHINESE_BLOCK_MARKERS):
        raise ChallengeDetected("360 Search verification page (home page)")
    params = {"q": q.text}
    if q.time_range:
        params["adv_t"] = TIME_RANGE[q.time_range]
    return RequestSpec(
        method="GET",
        url=URL,
        params=params,
        headers={"Accept-Language": ACCEPT_LANGUAGE, "Referer": HOME},
        cookies=set_cookies(headers) or None,
    )


def _pick(item: LexborNode) -> RowFields | None:
    heading = item.css_first("h3.res-title") or item.css_first("h3")
    if heading is None:
        return None
    link = heading.css_first("a[href]") or heading.css_first("a")
    attrs = link.attributes if link is not None else {}
    url = target_url(attrs.get("data-mdurl"), attrs.get("href"), HOME)
    snippet = next((t for s in SNIPPETS if (t := node_text(item.css_first(s)))), "")
    return url, node_text(heading), snippet, None


def parse(status: int, headers: Mapping[str, str], body: bytes, q: EngineQuery) -> list[EngineRow]:
    check_status(status, headers, body)
    tree = html_tree(body, headers)
    rows = rows_from_items(INFO.name, tree.css("li.res-list"), _pick, markup=False)
    if rows:
        return rows
    if shows_challenge(body, CHINESE_BLOCK_MARKERS):
        raise ChallengeDetected("360 Search verification page")
    return results_page_without_rows(tree, RESULTS_PAGE, "360 Search")
