"""Brave Search API, web results (keyed: header X-Subscription-Token; free plan 1 request/s).

GET https://api.search.brave.com/res/v1/web/search with ``q``, ``count`` (1..20) and ``freshness``
(pd|pw|pm|py or YYYY-MM-DDtoYYYY-MM-DD). Rows are ``web.results[]`` with ``title``, ``url``,
``description``, ``page_age`` (ISO) and ``age`` ("3 days ago" or "May 12, 2023").

``search_lang`` and ``country`` take Brave's own enums (data/brave_locales.json), and Brave answers 422 to any
other value: the caller's language is spelt Brave's way (``zh-hans``/``zh-hant`` for Chinese by script or
country, ``jp`` for Japanese, ``pt-br``/``pt-pt``, ``nb`` for Norwegian, ``en-gb`` in the United Kingdom), the
country upper case with ``GB`` for ``uk``, and whatever Brave does not list is left out rather than sent.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from functools import cache

from serpfuse import data
from serpfuse.engines.base import EngineInfo, EngineQuery, ParseFailure, RequestSpec, check_status, clamp
from serpfuse.engines.bodies import json_body
from serpfuse.engines.dates import parse_published
from serpfuse.engines.locale import split_locale
from serpfuse.engines.rows import RowFields, rows_from_json_list
from serpfuse.models import EngineRow

INFO = EngineInfo(
    name="brave",
    website="https://brave.com/search/api/",
    tier="primary",
    region="both",
    kind="json",
    needs_key=True,
    key_envs=("SERPFUSE_BRAVE_API_KEY", "BRAVE_API_KEY"),
    time_range_support=True,
    date_range_support=True,
    rows_per_request=20,
    min_interval_s=1.0,
)

URL = "https://api.search.brave.com/res/v1/web/search"
FRESHNESS = {"day": "pd", "week": "pw", "month": "pm", "year": "py"}
EARLIEST = dt.date(1970, 1, 1)


def freshness(q: EngineQuery, today: dt.date) -> str | None:
    if q.time_range:
        return FRESHNESS[q.time_range]
    if q.date_from or q.date_to:
        return f"{(q.date_from or EARLIEST).isoformat()}to{(q.date_to or today).isoformat()}"
    return None


TRADITIONAL_CHINESE = frozenset({"tw", "hk", "mo"})
COUNTRY_ALIASES = {"uk": "gb"}


@cache
def _enums() -> tuple[frozenset[str], frozenset[str]]:
    table = data.json("brave_locales.json")
    return frozenset(table["search_lang"]), frozenset(table["country"])


def search_lang(language: str | None, country: str | None) -> str | None:
    """Brave's ``search_lang`` for a language ("zh-TW", "ja", "pt") in a country, or None outside Brave's enum."""
    languages, _ = _enums()
    tag = (language or "").strip().lower().replace("_", "-")
    lang = tag.split("-", 1)[0]
    if lang == "zh":
        script = "hant" if "hant" in tag or country in TRADITIONAL_CHINESE else "hans"
        wanted = f"zh-{script}"
    elif lang == "pt":
        wanted = "pt-br" if country == "br" else "pt-pt"
    elif lang == "en" and country == "gb":
        wanted = "en-gb"
    else:
        wanted = {"ja": "jp", "no": "nb", "nn": "nb"}.get(lang, lang)
    return wanted if wanted in languages else None


def country_code(country: str | None) -> str | None:
    """Brave's ``country`` (upper case, ``GB`` for ``uk``), or None outside Brave's enum."""
    _, countries = _enums()
    code = COUNTRY_ALIASES.get(country or "", country or "").upper()  # "uk" is how people write GB
    return code if code in countries and code != "ALL" else None


def build_request(q: EngineQuery) -> RequestSpec | None:
    if not q.api_key:
        return None
    params: dict[str, str | int] = {
        "q": q.text,
        "count": clamp(q.limit, 1, INFO.rows_per_request),
        "text_decorations": "false",
    }
    fresh = freshness(q, dt.date.today())
    if fresh:
        params["freshness"] = fresh
    country, lang = split_locale(q.region, q.language)
    country = COUNTRY_ALIASES.get(country or "", country)
    if code := country_code(country):
        params["country"] = code
    # The language tag as given ("zh-Hant" names a script split_locale would read as a country).
    if language := search_lang(q.language or lang, country):
        params["search_lang"] = language
    headers = {"Accept": "application/json", "X-Subscription-Token": q.api_key}
    return RequestSpec(method="GET", url=URL, params=params, headers=headers)


def _pick(item: dict) -> RowFields:
    published = parse_published(item.get("page_age")) or parse_published(item.get("age"))
    return item.get("url"), item.get("title"), item.get("description"), published


def parse(status: int, headers: Mapping[str, str], body: bytes, q: EngineQuery) -> list[EngineRow]:
    check_status(status, headers, body)
    data = json_body(body)
    if not isinstance(data, dict):
        raise ParseFailure("Brave: unexpected response shape")
    web = data.get("web")
    if web is None:
        return []  # Brave leaves out the web section when nothing matched
    results = web.get("results") if isinstance(web, dict) else None
    return rows_from_json_list(INFO.name, results, _pick, no_list_message="Brave: no web result list")
