"""Tavily without a key: its documented keyless mode (the same search, rate-limited, free).

Tavily's documentation, "Try Tavily Without an API Key" (docs.tavily.com/documentation/keyless, read 2026-12):
"Send a request with the X-Tavily-Access-Mode: keyless header. That's it." -- ``POST https://api.tavily.com/search``
with the standard JSON body, and "Keyless responses are identical to keyed responses"; "Keyless access is free and
rate-limited, ideal for exploration and light use". So the request is ``tavily``'s body (``tavily.request_body``)
with that header instead of ``Authorization``: a header the provider requires for the mode, not an attribution.
A fallback (light use: asked when the primaries found nothing usable); with a key set the keyed ``tavily`` is a
primary beside it, and fusion counts the two as one voice (one group, Tavily's).
"""

from __future__ import annotations

from collections.abc import Mapping

from serpfuse.engines import tavily
from serpfuse.engines.base import EngineInfo, EngineQuery, RequestSpec
from serpfuse.models import EngineRow

INFO = EngineInfo(
    name="tavily-free",
    website="https://tavily.com",
    tier="fallback",
    region="both",
    kind="json",
    needs_key=False,
    time_range_support=True,
    date_range_support=True,
    rows_per_request=20,
    group="tavily",
    quota="free tier, limit unstated",
)

ACCESS_MODE = {"X-Tavily-Access-Mode": "keyless"}


def build_request(q: EngineQuery) -> RequestSpec | None:
    headers = {"Content-Type": "application/json", **ACCESS_MODE}
    return RequestSpec(method="POST", url=tavily.URL, headers=headers, json=tavily.request_body(q))


def parse(status: int, headers: Mapping[str, str], body: bytes, q: EngineQuery) -> list[EngineRow]:
    return tavily.parse_rows(INFO.name, status, headers, body)
