"""Keenable's public search endpoint (keyless): an index built for agents, asked as its documentation and
SearXNG's engine ask it.

``POST https://api.keenable.ai/v1/search/public`` with the JSON body ``{"query", "mode": "pro"}``; with a key
(``SERPFUSE_KEENABLE_API_KEY`` or ``KEENABLE_API_KEY``) the same body goes to ``/v1/search`` with the key in
``X-API-KEY``, for the higher limits a key buys. Source: SearXNG ``searx/engines/keenable.py`` (0be6f8780,
2026-07-15) and Keenable's API documentation (docs.keenable.ai, as the field notes of 2026-12 read it: the public
endpoint allows 1,000 requests an hour per IP, and a result carries ``published_at`` and ``acquired_at``).

SearXNG also sends ``X-Keenable-Title`` (its own User-Agent, an attribution). Keenable does not require it and
agent projects make it opt-in (hermes-agent#49758 review): no vendor-identifying header goes out here.

Rows: ``results[]``, each ``url``, ``title``, ``description`` (else ``snippet``) and ``published_at`` (ISO 8601,
the publication date; ``acquired_at``, when Keenable fetched the page, is no publication date and is not read).
HTTP 429 is the hourly limit: a cooldown for its Retry-After or 180 s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from serpfuse.engines.base import EngineInfo, EngineQuery, ParseFailure, RequestSpec, check_status
from serpfuse.engines.bodies import json_body
from serpfuse.engines.dates import parse_published
from serpfuse.engines.rows import RowFields, rows_from_json_list
from serpfuse.models import EngineRow

INFO = EngineInfo(
    name="keenable",
    website="https://keenable.ai",
    tier="primary",
    region="both",
    kind="json",
    needs_key=False,
    accepts_key=True,
    key_envs=("SERPFUSE_KEENABLE_API_KEY", "KEENABLE_API_KEY"),
    rows_per_request=10,
    group="keenable",
    quota="1,000 an hour per IP",
)

ROOT = "https://api.keenable.ai"
PUBLIC_URL = ROOT + "/v1/search/public"
KEYED_URL = ROOT + "/v1/search"
MODE = "pro"  # SearXNG's keenable_mode default


def build_request(q: EngineQuery) -> RequestSpec | None:
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    url = PUBLIC_URL
    if q.api_key:
        url = KEYED_URL
        headers["X-API-KEY"] = q.api_key
    return RequestSpec(method="POST", url=url, headers=headers, json={"query": q.text, "mode": MODE})


def _pick(item: dict[str, Any]) -> RowFields | None:
    snippet = item.get("description") or item.get("snippet")
    return item.get("url"), item.get("title"), snippet, parse_published(item.get("published_at"))


def parse(status: int, headers: Mapping[str, str], body: bytes, q: EngineQuery) -> list[EngineRow]:
    check_status(status, headers, body)
    data = json_body(body)
    if not isinstance(data, dict):
        raise ParseFailure("Keenable: unexpected response shape")
    return rows_from_json_list(INFO.name, data.get("results"), _pick, markup=False)
