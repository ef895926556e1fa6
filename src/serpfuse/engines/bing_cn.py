"""Bing China (cn.bing.com, keyless): Bing's page layout, with the index that answers Chinese sources.

Asked as bing is (its home page's cookies, then ``form=QBRE``, ``setlang``, ``cc``, no ``count``: see ``bing``),
in Chinese unless the query names another language or region; like bing it declares no time-range support
(Bing's filter needs JavaScript). The same decoy risk as bing's: the live source checks its answers alike.
"""

from __future__ import annotations

from collections.abc import Mapping

from serpfuse.engines import bing
from serpfuse.engines.base import EngineInfo, EngineQuery, Reply, RequestSpec
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
    preflight_reuse_s=bing.INFO.preflight_reuse_s,
)

HOME = "https://cn.bing.com/"
URL = "https://cn.bing.com/search"
DEFAULT_COUNTRY = "cn"


def _chinese(q: EngineQuery) -> EngineQuery:
    if not q.language and not q.region:
        return EngineQuery(**{**q.__dict__, "language": "zh", "region": DEFAULT_COUNTRY})
    return q


def build_preflight(q: EngineQuery) -> RequestSpec | None:
    return bing.preflight_for(HOME, _chinese(q))


def build_request(q: EngineQuery, preflight: Reply) -> RequestSpec | None:
    return bing.request_for(URL, _chinese(q), preflight, DEFAULT_COUNTRY)


def parse(status: int, headers: Mapping[str, str], body: bytes, q: EngineQuery) -> list[EngineRow]:
    return bing.parse_rows(INFO.name, status, headers, body)
