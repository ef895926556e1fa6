"""Wikipedia full-text search through the MediaWiki API, in the query's language (keyless).

GET https://{lang}.wikipedia.org/w/api.php?action=query&list=search&srsearch=...&srprop=snippet|timestamp. The
language comes from the request, else from the query's script (Chinese for Han, Japanese for kana, Korean for
hangul), else English. ``published`` is the article's last edit time: the only date MediaWiki gives.

Wikimedia's User-Agent policy asks every client to say who runs it and how to reach them:
``serpfuse/<version> (<contact>; https://pypi.org/project/serpfuse/)``, the contact being the operator's
(``[engines.wikipedia] contact = "you@example.org"`` or ``SERPFUSE_ENGINES__WIKIPEDIA__CONTACT``). Without
one the User-Agent names the project page alone, which identifies the software but not who runs it: clients
without a contact are the first Wikimedia blocks when they send too much.
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
from serpfuse.engines.locale import script_language, split_locale
from serpfuse.engines.rows import RowFields, rows_from_json_list
from serpfuse.models import EngineRow
from serpfuse.version import __version__

INFO = EngineInfo(
    name="wikipedia",
    website="https://www.wikipedia.org",
    tier="primary",
    region="both",
    kind="json",
    needs_key=False,
    rows_per_request=20,
    user_agent_contact=True,
)

API_PATH = "/w/api.php"
PROJECT_PAGE = "https://pypi.org/project/serpfuse/"
DEFAULT_LANGUAGE = "en"
# The language becomes part of a host name: accept wiki codes only ("en", "zh", "zh-yue", "simple").
LANGUAGE_CODE = re.compile(r"[a-z]{2,3}(-[a-z]{2,8})?|simple")  # used with fullmatch: "$" passes "en\n"
TITLE_SAFE = "/:(),_-.~!*'"  # kept as-is in article paths, like Wikipedia's own links


def language_of(q: EngineQuery) -> str:
    _, lang = split_locale(q.region if q.language else None, q.language)
    if lang and LANGUAGE_CODE.fullmatch(lang):
        return lang
    return script_language(q.text) or DEFAULT_LANGUAGE


def site(q: EngineQuery) -> str:
    return f"https://{language_of(q)}.wikipedia.org"


def user_agent(contact: str | None) -> str:
    """The User-Agent Wikimedia's policy asks for: the software, its version, and how to reach its operator."""
    reach = f"{contact}; {PROJECT_PAGE}" if contact else PROJECT_PAGE
    return f"serpfuse/{__version__} ({reach})"


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
    headers = {"User-Agent": user_agent(q.contact)}
    return RequestSpec(method="GET", url=site(q) + API_PATH, params=params, headers=headers)


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
