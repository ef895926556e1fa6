"""Naver web search (keyless; Naver's own Korean index), its HTML results page.

``GET https://search.naver.com/search.naver?query=QUERY&start=1&where=web`` with ``Accept-Language: ko-KR``, as
SearXNG asks it since its redesign (``naver.py`` 28d388576, 2026-06-28, category general: ``where=web``,
``start``); a time range is ``nso=p:1d|1w|1m|1y``.

Rows: ``div.fds-web-normal-doc-root``; title the ``sds-comps-text-type-headline1`` span; URL the first absolute
link that is not Naver's "keep" bookmarking service; snippet the ``sds-comps-text-type-body1`` span (SearXNG's
selectors). Naver links results directly, so no redirector needs opening.
"""

from __future__ import annotations

from collections.abc import Mapping

from selectolax.lexbor import LexborNode

from serpfuse.engines.base import EngineInfo, EngineQuery, RequestSpec, check_status
from serpfuse.engines.bodies import html_tree, node_text, results_page_without_rows
from serpfuse.engines.cjk import well_formed
from serpfuse.engines.rows import RowFields, rows_from_items
from serpfuse.models import EngineRow

INFO = EngineInfo(
    name="naver",
    website="https://search.naver.com",
    tier="primary",
    region="cjk",
    kind="html",
    needs_key=False,
    transport="browser",
    time_range_support=True,
    rows_per_request=15,
    group="naver",
)

URL = "https://search.naver.com/search.naver"
ACCEPT_LANGUAGE = "ko-KR,ko;q=0.9"
TIME_RANGE = {"day": "1d", "week": "1w", "month": "1m", "year": "1y"}
RESULTS = "div.fds-web-normal-doc-root"
RESULTS_PAGE = "#main_pack, #container"
TITLE = "span.sds-comps-text-type-headline1"
SNIPPET = "span.sds-comps-text-type-body1"


def build_request(q: EngineQuery) -> RequestSpec | None:
    if q.date_from or q.date_to:
        return None
    params = {"query": q.text, "start": "1", "where": "web"}
    if q.time_range:
        params["nso"] = f"p:{TIME_RANGE[q.time_range]}"
    return RequestSpec(method="GET", url=URL, params=params, headers={"Accept-Language": ACCEPT_LANGUAGE})


def _pick(item: LexborNode) -> RowFields | None:
    url = None
    for link in item.css("a[href]"):
        href = link.attributes.get("href") or ""
        if href.startswith("http") and "keep.naver.com" not in href and (url := well_formed(href)):
            break
    return url, node_text(item.css_first(TITLE)), node_text(item.css_first(SNIPPET)), None


def parse(status: int, headers: Mapping[str, str], body: bytes, q: EngineQuery) -> list[EngineRow]:
    check_status(status, headers, body)
    tree = html_tree(body, headers)
    rows = rows_from_items(INFO.name, tree.css(RESULTS), _pick, markup=False)
    if rows:
        return rows
    return results_page_without_rows(tree, RESULTS_PAGE, "Naver")
