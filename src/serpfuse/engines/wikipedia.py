"""Wikipedia full-text search through the MediaWiki API, in the query's language (keyless).

GET https://{lang}.wikipedia.org/w/api.php?action=query&list=search&srsearch=...&srprop=snippet|timestamp. The
language comes from the request, else from the query's script (Chinese for Han, Japanese for kana, Korean for
hangul), else English. ``published`` is the article's last edit time: the only date MediaWiki gives.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import quote

from serpfuse.engines.base import (
    EngineError,
    EngineInfo,
    EngineQuery,
    ParseFailure,
    RequestSpec,
    check_status,
    clamp,
)
from serpfuse.engines.bodies import json_body
from serpfuse.engines.dates import parse_published
from serpfuse.engines.locale import split_locale
from serpfuse.engines.rows import RowFields, rows_from_json_list
from serpfuse.models import EngineRow
from serpfuse.text import has_cjk

INFO = EngineInfo(
    name="wikipedia",
    website="https://www.wikipedia.org",
    tier="primary",
    region="both",
    kind="json",
    needs_key=False,
    rows_per_request=20,
)

API_PATH = "/w/api.php"
DEFAULT_LANGUAGE = "en"
# The language becomes part of a host name: accept wiki codes only ("en", "zh", "zh-yue", "simple").
LANGUAGE_CODE = re.compile(r"[a-z]{2,3}(-[a-z]{2,8})?|simple")  # used with fullmatch: "$" passes "en\n"
TITLE_SAFE = "/:(),_-.~!*'"  # kept as-is in article paths, like Wikipedia's own links
KANA = re.compile(r"[\u3040-\u30ff]")
HANGUL = re.compile(r"[\uac00-\ud7af]")


def language_of(q: EngineQuery) -> str:
    _, lang = split_locale(q.region if q.language else None, q.language)
    if lang and LANGUAGE_CODE.fullmatch(lang):
        return lang
    if KANA.search(q.text):
        return "ja"
    if HANGUL.search(q.text):
        return "ko"
    if has_cjk(q.text):
        return "zh"
    return DEFAULT_LANGUAGE


def site(q: EngineQuery) -> str:
    return f"https://{language_of(q)}.wikipedia.org"


def build_request(q: EngineQuery) -> RequestSpec | None:
    params = {
        "action": "query",
        "list": "search",
        "srsearch": q.text,
        "srprop": "snippet|timestamp",
        "srlimit": clamp(q.limit, 1, INFO.rows_per_request),
        "format": "json",
        "formatversion": 2,
        "utf8": 1,
    }
    return RequestSpec(method="GET", url=site(q) + API_PATH, params=params)


def article_url(base: str, title: str) -> str:
    return f"{base}/wiki/{quote(title.replace(' ', '_'), safe=TITLE_SAFE)}"


def parse(status: int, headers: Mapping[str, str], body: bytes, q: EngineQuery) -> list[EngineRow]:
    check_status(status, headers, body)
    data = json_body(body)
    if not isinstance(data, dict):
        raise ParseFailure("Wikipedia: unexpected response shape")
    if "error" in data:
        raise EngineError("Wikipedia API error")
    query = data.get("query")
    hits = query.get("search") if isinstance(query, dict) else None  # any other shape: no search list
    base = f"https://{language_of(q)}.wikipedia.org"

    def pick(hit: dict) -> RowFields | None:
        title = hit.get("title")
        if not isinstance(title, str) or not title.strip():
            return None  # MediaWiki links by title: without one there is no URL
        return article_url(base, title), title, hit.get("snippet"), parse_published(hit.get("timestamp"))

    return rows_from_json_list(
        INFO.name, hits, pick, no_list_message="Wikipedia: no search list in the response"
    )
