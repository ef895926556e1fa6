"""Bing web search, scraped from www4.bing.com (keyless; Microsoft's index).

Two requests, as a person's browser makes them. First the home page (``build_preflight``), for the cookies it
sets; then the search, carrying them, as a query typed into the results page's box (``form=QBRE``) and without
``count``, which no browser sends. Asked with ``?q=...&count=10`` and no cookies, Bing answers HTTP 200 with ten
well-formed rows about the query's first word only (a "decoy"): free-search-mcp 0.16.0 (PyPI, 2026-10,
``engines/bing.py``) measured on 2026-09-21 "as shipped ``count=10``, no cookies: 0/10 on topic; home-page
cookies + ``form=QBRE`` and no ``count``: 9-10/10; the same plus ``count=10``: decoy", on the www4 edge, with the
jar kept 30 minutes. The live source keeps the home page that long (``INFO.preflight_reuse_s``), drops it after a
failed search, and checks every answer for a decoy (``engines.decoy``): a decoy is asked once more with a fresh
home page, and a second decoy is the engine's status, its rows kept out of the results.

Bing reads the query in the interface language (``setlang``) and country (``cc``) given on the URL; without
them it answers from the query's first word or with unrelated pages (SearXNG #4964, PR #6671). The language
comes from the query's language, else from its script (kana: ja, hangul: ko, Han: zh-hans, else en). ``cc``
is left out for us, cn and ru, which return unrelated pages to a client outside those countries (PR #6671).

No time range: Bing's ``filters=ex1:"ez…"`` now needs JavaScript (SearXNG 6521190bb, 2026-03), so a
filtered request returns unfiltered rows. The engine declares no time-range support and is skipped, rather
than passing unfiltered rows off as filtered.

Rows: ``li.b_algo``; the title is the ``h2`` link (the newer layout puts a site-attribution link, "Tokio" +
"https://tokio.rs", before it); the snippet without its ``algoSlug_icon`` label ("WEB"). Ads (links through
``bing.com/aclick``, bare or inside ``ck/a``) are never rows and use up no rank. Result links are often
wrapped in ``https://www.bing.com/ck/a?...&u=a1<base64url>``; ``unwrap_redirect`` opens them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping

from selectolax.lexbor import LexborNode

from serpfuse.engines.base import (
    BODY_HEAD_BYTES,
    ChallengeDetected,
    EngineInfo,
    EngineQuery,
    Reply,
    RequestSpec,
    check_status,
    set_cookies,
    shows_challenge,
)
from serpfuse.engines.bodies import html_tree, node_text, results_page_without_rows
from serpfuse.engines.dates import parse_published
from serpfuse.engines.locale import accept_language, script_language, split_locale
from serpfuse.engines.rows import RowFields, is_ad_click, rows_from_items
from serpfuse.models import EngineRow

INFO = EngineInfo(
    name="bing",
    website="https://www.bing.com",
    tier="primary",
    region="global",
    kind="html",
    needs_key=False,
    transport="browser",
    rows_per_request=20,
    group="bing",
    preflight_reuse_s=1800.0,  # the cookie jar's life in free-search-mcp 0.16.0 (30 min)
)

HOME = "https://www4.bing.com/"
URL = "https://www4.bing.com/search"
FORM = "QBRE"  # the results page's own search box; "QBLH" (the home page's) answers a lighter layout
# Countries whose cc makes Bing answer garbage to a client outside them (SearXNG PR #6671).
NO_CC = frozenset({"us", "cn", "ru"})
TRADITIONAL_CHINESE = frozenset({"tw", "hk", "mo"})

# Bing's bot check ("turing" CAPTCHA) and the challenge pages it serves instead of results.
CHALLENGE_MARKERS = (
    b"/turing/captcha/",
    b'id="b_captcha',
    b"challenges.cloudflare.com/turnstile",
    b"b_captcha",
)

RESULTS = "li.b_algo"  # one selector: a comma list would match a node once per alternative
RESULTS_PAGE = "#b_results"  # on every results page, with or without results (the AQL captures)
# The result's own title link first, then the layouts without one: a comma list would take whichever comes
# first in the page, and the newer layout's site-attribution link (a.tilk) comes before the h2.
TITLE_LINK = "h2 a[href]"
LINKED_HEADING = "a[href] > h2"
FALLBACK_LINKS = (".b_algoheader a[href]", "a.tilk[href]")
TITLE_HEADING = "h2"
SNIPPET_LABEL = "span.algoSlug_icon"  # "WEB": a label shown in front of the snippet, not its text
# Tried in order; "p.b_paractl" is a rich (Wikipedia) card's text. The caption's <cite> is never a snippet.
SNIPPETS = (
    ".b_caption p",
    "p.b_lineclamp2",
    "p.b_lineclamp3",
    "p.b_lineclamp4",
    ".b_algoSlug",
    "p.b_paractl",
)
DATE = "span.news_dt"


def market(q: EngineQuery, default_country: str | None = None) -> tuple[str, str | None]:
    """(setlang like "en" or "zh-hans", cc like "de" or None) for the query."""
    country, lang = split_locale(q.region, q.language)
    country = country or default_country
    lang = lang or script_language(q.text) or "en"
    if lang == "zh":
        lang = "zh-hant" if country in TRADITIONAL_CHINESE else "zh-hans"
    return lang, (country if country and country not in NO_CC else None)


def _language_header(q: EngineQuery) -> dict[str, str] | None:
    # The region's browser, too: Bing weighs Accept-Language beside cc (and a US browser's header otherwise).
    language = accept_language(q.region, q.language)
    return {"Accept-Language": language} if language else None


def preflight_for(home: str, q: EngineQuery) -> RequestSpec:
    """The home page, opened as a typed address (no Referer, so Sec-Fetch-Site "none"), for its cookies."""
    return RequestSpec(method="GET", url=home, headers=_language_header(q))


def request_for(
    url: str, q: EngineQuery, preflight: Reply, default_country: str | None = None
) -> RequestSpec:
    """The search, with the cookies the home page set. No ``count``: with it Bing answers a decoy."""
    _, headers, body = preflight
    if shows_challenge(body[:BODY_HEAD_BYTES], CHALLENGE_MARKERS):
        raise ChallengeDetected("Bing CAPTCHA (home page)")
    setlang, cc = market(q, default_country)
    params: dict[str, str] = {"q": q.text, "form": FORM, "setlang": setlang}
    if cc:
        params["cc"] = cc
    return RequestSpec(
        method="GET",
        url=url,
        params=params,
        headers=_language_header(q),
        cookies=set_cookies(headers) or None,
    )


def build_preflight(q: EngineQuery) -> RequestSpec | None:
    return preflight_for(HOME, q)


def build_request(q: EngineQuery, preflight: Reply) -> RequestSpec | None:
    return request_for(URL, q, preflight)


def _snippet(item: LexborNode) -> tuple[str, dt.datetime | None]:
    for selector in SNIPPETS:
        node = item.css_first(selector)
        if node is None:
            continue
        date_node = node.css_first(DATE)
        published = None
        text = node_text(node)
        if date_node is not None:
            date_text = node_text(date_node)
            published = parse_published(date_text)
            # "Jul 10, 2021 · text": the date is metadata, not snippet text.
            text = text.removeprefix(date_text).lstrip(" ·\u00a0-").strip()
        if text:
            return text, published
    return "", None


def _title_link(item: LexborNode) -> LexborNode | None:
    link = item.css_first(TITLE_LINK)
    if link is None:  # ".b_algoheader a > h2": the link wraps the heading
        heading = item.css_first(LINKED_HEADING)
        link = heading.parent if heading is not None else None
    for fallback in FALLBACK_LINKS:
        link = link or item.css_first(fallback)
    return link


def _title(link: LexborNode) -> str:
    # The heading inside the link when there is one (".b_algoheader a > h2"), else the link's own text.
    heading = link.css_first(TITLE_HEADING)
    return node_text(heading if heading is not None else link)


def _is_ad(item: LexborNode) -> bool:
    link = _title_link(item)
    return link is not None and is_ad_click(link.attributes.get("href"))


def _pick(item: LexborNode) -> RowFields | None:
    link = _title_link(item)
    if link is None:
        return None
    return link.attributes.get("href"), _title(link), *_snippet(item)


def parse_rows(engine: str, status: int, headers: Mapping[str, str], body: bytes) -> list[EngineRow]:
    check_status(status, headers, body)
    tree = html_tree(body, headers)
    for label in tree.css(SNIPPET_LABEL):
        label.decompose()
    organic = [item for item in tree.css(RESULTS) if not _is_ad(item)]
    rows = rows_from_items(engine, organic, _pick, markup=False)
    if rows:
        return rows
    if shows_challenge(body, CHALLENGE_MARKERS):
        raise ChallengeDetected("Bing CAPTCHA page")
    return results_page_without_rows(tree, RESULTS_PAGE, "Bing")


def parse(status: int, headers: Mapping[str, str], body: bytes, q: EngineQuery) -> list[EngineRow]:
    return parse_rows(INFO.name, status, headers, body)
