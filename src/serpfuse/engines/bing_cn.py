"""Bing China (cn.bing.com, keyless): Bing's page layout, with the index that answers Chinese sources.

Asked as bing is (``setlang``, ``cc``), in Chinese unless the query names another language or region; like
bing it declares no time-range support (Bing's filter needs JavaScript).
"""

from __future__ import annotations

from collections.abc import Mapping

from serpfuse.engines import bing
from serpfuse.engines.base import EngineInfo, EngineQuery, RequestSpec
from serpfuse.models import EngineRow

INFO = EngineInfo(
    name="bing-cn",
    website="https://cn.bing.com",
    tier="primary",
    region="cjk",
    kind="html",
    needs_key=False,
    transport="browser",
    rows_per_request=20,
    group="bing",
)

URL = "https://cn.bing.com/search"
DEFAULT_COUNTRY = "cn"


def build_request(q: EngineQuery) -> RequestSpec | None:
    if not q.language and not q.region:
        q = EngineQuery(**{**q.__dict__, "language": "zh", "region": DEFAULT_COUNTRY})
    return bing.request_for(URL, q, DEFAULT_COUNTRY)


def parse(status: int, headers: Mapping[str, str], body: bytes, q: EngineQuery) -> list[EngineRow]:
    return bing.parse_rows(INFO.name, status, headers, body)
