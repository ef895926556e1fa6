"""Mwmbl: a non-profit, community-crawled web index with an open JSON API (keyless).

GET https://api.mwmbl.org/api/v1/search/?s=QUERY. The answer is a JSON list of results, each ``{url, title,
extract}`` where title and extract are lists of ``{value, is_bold}`` pieces (the query's words marked bold), to
be joined. Mwmbl has no language, region or time filter: the engine is skipped for time-range searches.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from serpfuse.engines.base import EngineInfo, EngineQuery, RequestSpec, check_status
from serpfuse.engines.bodies import json_body
from serpfuse.engines.rows import RowFields, rows_from_json_list
from serpfuse.models import EngineRow

INFO = EngineInfo(
    name="mwmbl",
    website="https://mwmbl.org",
    tier="primary",
    region="global",
    kind="json",
    needs_key=False,
    rows_per_request=10,
    group="mwmbl",
)

URL = "https://api.mwmbl.org/api/v1/search/"


def build_request(q: EngineQuery) -> RequestSpec | None:
    return RequestSpec(method="GET", url=URL, params={"s": q.text})


def joined(pieces: Any) -> str:
    """The text of a title or extract given as ``[{value, is_bold}, ...]`` (a plain string is taken as is)."""
    if isinstance(pieces, str):
        return pieces
    if not isinstance(pieces, list):
        return ""
    return "".join(p["value"] for p in pieces if isinstance(p, dict) and isinstance(p.get("value"), str))


def _pick(item: dict) -> RowFields | None:
    return item.get("url"), joined(item.get("title")), joined(item.get("extract")), None


def parse(status: int, headers: Mapping[str, str], body: bytes, q: EngineQuery) -> list[EngineRow]:
    check_status(status, headers, body)
    return rows_from_json_list(
        INFO.name,
        json_body(body),
        _pick,
        markup=False,
        no_list_message="Mwmbl: the answer is not a result list",
    )
