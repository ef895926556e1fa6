"""Row building: the loop every parser ends in, from the raw fields of each result to bounded ``EngineRow``s.

Ranks are the engine's own, counted before malformed results are dropped; text is cleaned (HTML fragments or
plain text) and cut to the bounds of ``engines.bounds``; URLs are unwrapped from known redirectors and must be
absolute http(s); ad click-throughs are recognised so engines can drop them before counting.
"""

from __future__ import annotations

import datetime as dt
import html
import itertools
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

from serpfuse.engines.base import ParseFailure
from serpfuse.engines.bounds import MAX_ITEMS, MAX_SNIPPET_CHARS, MAX_TITLE_CHARS, MAX_URL_CHARS
from serpfuse.models import EngineRow
from serpfuse.text import clean_text
from serpfuse.urls import unwrap_redirect


def clean(text: Any) -> str:
    """Text of an HTML fragment (Brave descriptions, Wikipedia snippets): tags stripped, then entities
    decoded, whitespace collapsed. Decoding last keeps an escaped "&lt;T&gt;" as the visible text "<T>".
    Non-strings: ""."""
    if not isinstance(text, str):
        return ""
    return squash(html.unescape(clean_text(text)))


def squash(text: Any) -> str:
    """Plain text (parsed HTML nodes, plain-text APIs): only whitespace is collapsed, so "Vec<T>" survives."""
    return " ".join(text.split()) if isinstance(text, str) else ""


def web_url(raw: Any) -> str | None:
    """The unwrapped target when ``raw`` is an absolute http(s) URL, else None (a malformed row)."""
    if not isinstance(raw, str) or not raw.strip() or len(raw) > MAX_URL_CHARS:
        return None
    # No entity decoding: HTML parsers already decode attributes, and "&copy=2" in a JSON URL is a parameter.
    url = unwrap_redirect(raw.strip())
    if url.startswith("//"):
        url = "https:" + url
    if not url.lower().startswith(("http://", "https://")) or len(url) < 10:
        return None
    return url


# Ad click-throughs (host, path): an organic result never links through them. DuckDuckGo's y.js and Bing's
# aclick; DuckDuckGo's HTML page writes its own links host-less.
AD_CLICKS = (("duckduckgo.com", "/y.js"), ("bing.com", "/aclick"))


def is_ad_click(href: Any) -> bool:
    """Whether a result link is an ad's click-through, bare or inside a known redirector (Bing's ck/a,
    DuckDuckGo's l/?uddg=). Engines drop such results before counting ranks: an ad uses up no rank."""
    if not isinstance(href, str) or not href.strip():
        return False
    for url in {href.strip(), unwrap_redirect(href.strip())}:
        try:
            parts = urlsplit(url)
        except ValueError:
            continue
        host, path = (parts.hostname or "").lower(), parts.path.rstrip("/")
        for domain, ad_path in AD_CLICKS:
            if path == ad_path and (not host or host == domain or host.endswith("." + domain)):
                return True
    return False


def make_row(
    engine: str,
    rank: int,
    url: Any,
    title: Any = "",
    snippet: Any = "",
    published: dt.datetime | None = None,
    *,
    markup: bool = True,
) -> EngineRow | None:
    """An EngineRow, or None when the URL is unusable (the caller keeps counting ranks regardless).

    ``markup``: title and snippet are HTML fragments (tags stripped, entities decoded); False for plain text.
    """
    target = web_url(url)
    if target is None:
        return None
    text = clean if markup else squash
    return EngineRow(
        engine=engine,
        rank=rank,
        url=target,
        title=_bounded(text, title, MAX_TITLE_CHARS),
        snippet=_bounded(text, snippet, MAX_SNIPPET_CHARS),
        published=published,
    )


def _bounded(text: Callable[[Any], str], value: Any, limit: int) -> str:
    """``text(value)`` cut to ``limit`` characters; markup is cut before cleaning so its cost stays bounded."""
    if isinstance(value, str) and len(value) > 4 * limit:
        value = value[: 4 * limit]
    return text(value)[:limit]


# The fields an engine reads from one result (a JSON object, an HTML node), raw: (url, title, snippet,
# published). ``make_row`` cleans and bounds them; a ``pick`` that gives None skips the result.
RowFields = tuple[Any, Any, Any, dt.datetime | None]


def rows_from_items(
    engine: str, items: Iterable[Any], pick: Callable[[Any], RowFields | None], *, markup: bool = True
) -> list[EngineRow]:
    """The rows of an engine's results, in order: the one loop every parser ends in. Ranks are positions in
    ``items``, counted before results without a usable row (``pick`` gives None, no usable URL) are dropped,
    so a bad result never promotes the ones below it. Only the first ``MAX_ITEMS`` results are read: a flood
    of rows costs nothing. ``markup`` as in ``make_row``."""
    rows: list[EngineRow] = []
    for rank, item in enumerate(itertools.islice(items, MAX_ITEMS), start=1):
        fields = pick(item)
        row = make_row(engine, rank, *fields, markup=markup) if fields is not None else None
        if row is not None:
            rows.append(row)
    return rows


def rows_from_json_list(
    engine: str,
    items: Any,
    pick: Callable[[dict[str, Any]], RowFields | None],
    *,
    markup: bool = True,
    no_list_message: str = "no result list in the response",
) -> list[EngineRow]:
    """The rows of a JSON API's result list (or of result objects an engine parsed out of text, as Exa's MCP
    tool). The engine module says where the list lives (``items``) and which fields it reads (``pick``); this
    loop does the rest, the same for every JSON engine.

    Ranks are positions in ``items``, counted before malformed entries (not an object, ``pick`` gives None,
    no usable URL) are dropped. ``items`` that is not a list raises ``ParseFailure(no_list_message)``.
    ``markup`` as in ``make_row``.
    """
    if not isinstance(items, list):
        raise ParseFailure(no_list_message)
    return rows_from_items(
        engine, items, lambda item: pick(item) if isinstance(item, dict) else None, markup=markup
    )
