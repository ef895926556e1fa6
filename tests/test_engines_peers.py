"""Each engine's request pinned to a peer's: what SearXNG, ddgs or the vendor's own client sends today for the
same query, locale and time range, and where ours differs, why.

The peers, as read (``git show HEAD:...`` of each snapshot; the packages' installed or downloaded source):

- SearXNG ``9fea412`` (searxng/searxng 9fea41204fdf, 2026-08-22), its defaults: ``safesearch`` 0, the locale
  ``all`` for no locale and ``de-DE`` for German in Germany; PR #6671 (bing, merged 2026-09-07, after the
  snapshot) as its description gives it;
- ddgs ``a97a4fc`` (deedy5/ddgs a97a4fcbad65, 2026-05-17);
- exa-mcp-server ``15ffb50`` (exa-labs/exa-mcp-server, 2026-08-20), the server behind mcp.exa.ai;
- the vendors' clients on PyPI: tavily-python 0.8.5, firecrawl-py 4.55.0, exa-py 2.27.0, mcp 2.3.0, and
  anysearch-py 0.2.0 (a third party's typed client: AnySearch publishes none);
- MediaWiki's API:Search reference (https://www.mediawiki.org/wiki/API:Search) for Wikipedia, whose full-text
  search neither peer uses.

Each ``Pin`` is data: the peer's request (method, scheme + host + path, parameters, form or JSON body, the
headers that matter, cookies) and ``ours``, every place our request deliberately differs, with a one-line
reason. The test builds our request for the same inputs and asks for the peer's fields with the peer's values,
nothing more than the peer sends unless ``ours`` names it, and no reason in ``ours`` that the request no longer
needs (a stale reason fails too). Nested bodies compare leaf by leaf (``json.contents.highlights...``).
Headers are compared as the plain transport puts them on the wire, its defaults included (Sec-Fetch-* of a
browser engine), case-insensitively, and only those listed.

No peer code is copied here: only the facts of the requests, as expected values.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from serpfuse.engines import get_engine, has_preflight, is_multi_step
from serpfuse.engines.base import EngineQuery, Reply, RequestSpec
from serpfuse.sources.request_headers import headers_for

QUERY = "rust async runtime"
KEY = "sk-TEST-SECRET-0123456789"
DE = {"language": "de", "region": "de-DE"}  # SearXNG's locale de-DE
DE_WEEK = {**DE, "time_range": "week"}
SINCE_WEEK = (dt.date.today() - dt.timedelta(weeks=1)).strftime(
    "%Y%m%d"
)  # SearXNG: now - relativedelta(weeks=1)


@dataclass(frozen=True)
class OneOf:
    """Any of the peer's values (a User-Agent picked at random from a list)."""

    values: tuple[str, ...]


@dataclass(frozen=True)
class Lang:
    """An Accept-Language whose first language is this one (peers spell the q-values their own way)."""

    language: str


ANY = object()  # sent, with a value that changes per call (a JSON-RPC id)

SEARXNG_NOKIA_UAS = OneOf(
    (
        "Nokia7610/2.0 (5.0509.0) SymbianOS/7.0s Series60/2.1 Profile/MIDP-2.0 Configuration/CLDC-1.0",
        "Nokia7610/2.0 (7.0642.0) SymbianOS/7.0s Series60/2.1 Profile/MIDP-2.0 Configuration/CLDC-1.0",
        "Nokia6230/2.0 (05.50) Profile/MIDP-2.0 Configuration/CLDC-1.1",
        "Nokia6230i/2.0 (03.80) Profile/MIDP-2.0 Configuration/CLDC-1.1",
        "Nokia6280/2.0 (03.60) Profile/MIDP-2.0 Configuration/CLDC-1.1",
        "NokiaN72/2.0617.1.0.3 Series60/2.8 Profile/MIDP-2.0 Configuration/CLDC-1.1",
    )
)
# DuckDuckGo answers with "Referrer-Policy: origin", so a browser's Referer is the origin alone, as SearXNG's
# own notes in duckduckgo.py say (its request() then overrides it with the form's URL).
DDG_REFERER = "the origin alone, as a browser sends it under DuckDuckGo's Referrer-Policy: origin"
NAVIGATION_SAME_ORIGIN = {
    "Sec-Fetch-Dest": "document",
    "Sec-Fetch-Mode": "navigate",
    "Sec-Fetch-Site": "same-origin",
    "Sec-Fetch-User": "?1",
}


def merge(base: Any, changes: Any) -> Any:
    if not isinstance(base, dict) or not isinstance(changes, dict):
        return changes
    return {**base, **{k: merge(base.get(k), v) for k, v in changes.items()}}


@dataclass(frozen=True)
class Pin:
    engine: str
    peer: str  # peer, commit, file and function
    query: dict[str, Any]  # our EngineQuery fields for the peer's inputs (text is QUERY)
    method: str
    url: str  # scheme, host and path
    params: dict[str, Any] = field(default_factory=dict)
    form: dict[str, Any] = field(default_factory=dict)
    json: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, Any] = field(default_factory=dict)
    cookies: dict[str, Any] = field(default_factory=dict)
    ours: dict[str, str] = field(default_factory=dict)  # "params.count" (or "url") -> why ours differs
    step: int = -1  # which request of a several-request engine: 0 its first page, -1 the search

    def but(self, **changes: Any) -> Pin:
        """This pin for another case of the same request: ``query`` replaced, every other table merged into
        (nested tables too), so a case states only what it changes."""
        merged = {k: v if k == "query" else merge(getattr(self, k), v) for k, v in changes.items()}
        return replace(self, **merged)

    def __str__(self) -> str:
        step = "" if self.step == -1 else f" step {self.step}"
        return f"{self.engine}{step} vs {self.peer}"


# SearXNG 9fea412 searx/engines/startpage.py request() (no abp since 323ce7600), locale de-DE, week,
# safesearch 0
STARTPAGE_DE = Pin(
    "startpage",
    "SearXNG 9fea412 searx/engines/startpage.py request()",
    DE_WEEK,
    "POST",
    "https://www.startpage.com/sp/search",
    form={
        "query": QUERY,
        "cat": "web",
        "t": "device",
        "sc": "Q7Mt5TRqowKB00",
        "with_date": "w",
        "abd": "1",
        "abe": "1",
        "qsr": "all",
        "qadf": "none",
        "language": "deutsch",
        "lui": "deutsch",
    },
    headers={"Origin": "https://www.startpage.com", "Referer": "https://www.startpage.com/"},
    cookies={
        "preferences": {
            "date_time": "world",
            "disable_family_filter": "none",
            "disable_open_in_new_window": "0",
            "enable_post_method": "1",
            "enable_proxy_safety_suggest": "1",
            "enable_stay_control": "1",
            "instant_answers": "1",
            "lang_homepage": "s/device/en/",
            "num_of_results": "10",
            "suggestions": "1",
            "wt_unit": "celsius",
            "language": "deutsch",
            "language_ui": "deutsch",
            "search_results_region": "de_DE",
        }
    },
    ours={
        "form.qadf": "moderate: the filter Startpage applies without settings, not none",
        "cookies.preferences.disable_family_filter": "moderate, as in the form's qadf",
    },
)


PINS: tuple[Pin, ...] = (
    # --- DuckDuckGo ------------------------------------------------------------------------------------------
    # SearXNG 9fea412 searx/engines/duckduckgo.py request(), locale all, page 1
    Pin(
        "ddg",
        "SearXNG 9fea412 searx/engines/duckduckgo.py request()",
        {},
        "POST",
        "https://html.duckduckgo.com/html/",
        form={"q": QUERY, "b": "", "kl": "wt-wt"},
        headers={
            **NAVIGATION_SAME_ORIGIN,
            "Referer": "https://html.duckduckgo.com/html/",
            "Accept-Language": Lang("en"),
        },
        ours={"headers.Referer": DDG_REFERER},
    ),
    # SearXNG 9fea412 searx/engines/duckduckgo.py request(), locale de-DE, time range week
    Pin(
        "ddg",
        "SearXNG 9fea412 searx/engines/duckduckgo.py request()",
        DE_WEEK,
        "POST",
        "https://html.duckduckgo.com/html/",
        form={"q": QUERY, "b": "", "kl": "de-de", "df": "w"},
        cookies={"kl": "de-de", "df": "w"},  # kl as a cookie only for a chosen region
        headers={
            **NAVIGATION_SAME_ORIGIN,
            "Referer": "https://html.duckduckgo.com/html/",
            "Accept-Language": Lang("de"),
        },
        ours={"headers.Referer": DDG_REFERER},
    ),
    # ddgs a97a4fc ddgs/engines/duckduckgo.py build_payload(), region wt-wt
    Pin(
        "ddg",
        "ddgs a97a4fc ddgs/engines/duckduckgo.py build_payload()",
        {},
        "POST",
        "https://html.duckduckgo.com/html/",
        form={"q": QUERY, "b": "", "l": "wt-wt"},
        ours={
            "form.l": "the form's region field is kl (DuckDuckGo's own form and SearXNG); l is ddgs' alone",
            "form.kl": "the form's region field, as the site's form and SearXNG send it",
        },
    ),
    # --- Bing ------------------------------------------------------------------------------------------------
    # free-search-mcp 0.16.0 (PyPI wheel, 2026-10) search_mcp/engines/bing.py: _warm_cookies() GETs the home page
    # of the www4 edge for its cookie jar, then build_url() asks ``www4.bing.com/search?q=…&form=QBRE`` with the
    # jar and no ``count`` (measured there 2026-09-21: with count, or without the jar, a first-word decoy).
    Pin(
        "bing",
        "free-search-mcp 0.16.0 search_mcp/engines/bing.py _warm_cookies()",
        {},
        "GET",
        "https://www4.bing.com/",
        step=0,
    ),
    Pin(
        "bing",
        "free-search-mcp 0.16.0 search_mcp/engines/bing.py build_url()",
        {},
        "GET",
        "https://www4.bing.com/search",
        params={"q": QUERY, "form": "QBRE"},
        cookies={"MUID": "0123ABCD", "SRCHD": "AF=NOFORM"},  # the jar the home page set
        ours={"params.setlang": "SearXNG PR #6671: without the language Bing answers from the first word"},
    ),
    # SearXNG PR #6671 (merged 2026-09-07, after 9fea412), from its description: setlang and cc, no cc for
    # us/cn/ru, no Accept-Language override (the values are Bing's language and country codes; the description
    # names the fields, not their values). 9fea412 itself sent mkt and adlt (searx/engines/bing.py request()).
    Pin(
        "bing",
        "SearXNG PR #6671 searx/engines/bing.py request()",
        DE,
        "GET",
        "https://www.bing.com/search",
        params={"q": QUERY, "setlang": "de", "cc": "de"},
        ours={
            "url": "the www4 edge, where free-search-mcp measured real (not decoy) answers on 2026-09-21",
            "params.form": "QBRE, as free-search-mcp 0.16.0 measured it: a query typed on the results page",
            "cookies.MUID": "the home page's cookie jar (free-search-mcp 0.16.0)",
            "cookies.SRCHD": "the home page's cookie jar (free-search-mcp 0.16.0)",
            "headers.Accept-Language": "the region's browser: Bing weighs it beside cc, and it costs nothing",
        },
    ),
    Pin(
        "bing",
        "SearXNG PR #6671 searx/engines/bing.py request()",
        {"language": "en", "region": "en-US"},
        "GET",
        "https://www.bing.com/search",
        params={"q": QUERY, "setlang": "en"},  # cc left out for us: it makes Bing answer garbage
        ours={
            "url": "the www4 edge, where free-search-mcp measured real (not decoy) answers on 2026-09-21",
            "params.form": "QBRE, as free-search-mcp 0.16.0 measured it: a query typed on the results page",
            "cookies.MUID": "the home page's cookie jar (free-search-mcp 0.16.0)",
            "cookies.SRCHD": "the home page's cookie jar (free-search-mcp 0.16.0)",
            "headers.Accept-Language": "the region's browser: Bing weighs it beside cc, and it costs nothing",
        },
    ),
    # dhole-mcp 17.3 (PyPI, 2026-10) asks cn.bing.com; SearXNG PR #6671 for zh-CN (cc left out for cn).
    Pin(
        "bing-cn",
        "SearXNG PR #6671 searx/engines/bing.py request()",
        {"language": "zh", "region": "zh-CN"},
        "GET",
        "https://www.bing.com/search",
        params={"q": QUERY, "setlang": ANY},
        ours={
            "url": "cn.bing.com is the host Bing serves its Chinese index from (dhole-mcp 17.3 asks it too)",
            "params.form": "QBRE, as free-search-mcp 0.16.0 measured it on Bing: a query typed on the results page",
            "cookies.MUID": "the home page's cookie jar, as for bing (free-search-mcp 0.16.0)",
            "cookies.SRCHD": "the home page's cookie jar, as for bing (free-search-mcp 0.16.0)",
            "headers.Accept-Language": "the region's browser: Bing weighs it beside cc, and it costs nothing",
        },
    ),
    Pin(
        "bing-cn",
        "free-search-mcp 0.16.0 search_mcp/engines/bing.py _warm_cookies() (its home page, on cn.bing.com)",
        {},
        "GET",
        "https://cn.bing.com/",
        headers={"Accept-Language": Lang("zh")},
        step=0,
    ),
    # --- the CJK tier ---------------------------------------------------------------------------------------------
    # dhole-mcp 17.3 (PyPI, 2026-10) search_metasearch.py Baidu.build_payload(), headers_update; week: gpc=stf
    Pin(
        "baidu",
        "dhole-mcp 17.3 search_metasearch.py Baidu.build_payload()",
        {},
        "GET",
        "https://www.baidu.com/s",
        params={"wd": QUERY, "ie": "utf-8"},
        headers={"Accept-Language": "zh-CN,zh;q=0.9"},
    ),
    # SearXNG 9fea412 searx/engines/baidu.py request() (b084194c0, 2026-06-26): the JSON form of the same page
    Pin(
        "baidu",
        "SearXNG 9fea412 searx/engines/baidu.py request()",
        {},
        "GET",
        "https://www.baidu.com/s",
        params={"wd": QUERY, "rn": 10, "pn": 0, "tn": "json"},
        ours={
            "params.tn": "the HTML page a browser gets (dhole 17.3), whose parser the AQL captures test",
            "params.rn": "ten rows is the page's own size",
            "params.pn": "the first page is asked without an offset, as a browser does",
            "params.ie": "dhole 17.3's: the query's encoding named",
        },
    ),
    # SearXNG 9fea412 searx/engines/sogou.py request() (9e25585ae 2026-07-14), week
    Pin(
        "sogou",
        "SearXNG 9fea412 searx/engines/sogou.py request()",
        {"time_range": "week"},
        "GET",
        "https://www.sogou.com/web",
        params={"query": QUERY, "page": 1, "s_from": "inttime_week", "tsn": "1"},
        ours={"params.page": "the first page is asked without one (dhole-mcp 17.3 Sogou.build_payload())"},
    ),
    Pin(
        "sogou",
        "dhole-mcp 17.3 search_metasearch.py Sogou.build_payload()",
        {},
        "GET",
        "https://www.sogou.com/web",
        params={"query": QUERY},
        headers={"Accept-Language": "zh-CN,zh;q=0.9"},
    ),
    # SearXNG 9fea412 searx/engines/360search.py request() (6c9dcd424 2026-06-14; cookie caching c57db4567), week;
    # its get_cookie() GETs the search URL itself for the Set-Cookie (step 0), then asks it again with the cookie
    Pin(
        "so360",
        "SearXNG 9fea412 searx/engines/360search.py request()",
        {"time_range": "week"},
        "GET",
        "https://www.so.com/s",
        params={"pn": 1, "q": QUERY, "adv_t": "w"},
        cookies={"QiHooGUID": "0123ABCD"},
        ours={
            "params.pn": "the first page is asked without one (dhole-mcp 17.3 So360.build_payload())",
            "headers.Referer": "the home page it comes from, as the search a person types there",
        },
    ),
    Pin(
        "so360",
        "SearXNG 9fea412 searx/engines/360search.py get_cookie()",
        {},
        "GET",
        "https://www.so.com/s",
        params={"pn": 1, "q": QUERY},
        ours={
            "url": "the cookie from the home page, as a browser gets it; not a first search sent to be thrown away",
            "params.pn": "no search in the first request",
            "params.q": "no search in the first request",
        },
        step=0,
    ),
    # SearXNG 9fea412 searx/engines/naver.py request() (28d388576 2026-06-28), general, week
    Pin(
        "naver",
        "SearXNG 9fea412 searx/engines/naver.py request()",
        {"time_range": "week"},
        "GET",
        "https://search.naver.com/search.naver",
        params={"query": QUERY, "start": "1", "where": "web", "nso": "p:1w"},
        ours={"headers.Accept-Language": "a Korean browser's, as the Chinese engines send a Chinese one"},
    ),
    # --- Yahoo -----------------------------------------------------------------------------------------------
    # SearXNG 9fea412 searx/engines/yahoo.py request(), locale de-DE, week, safesearch 0
    Pin(
        "yahoo",
        "SearXNG 9fea412 searx/engines/yahoo.py request()",
        DE_WEEK,
        "GET",
        "https://de.search.yahoo.com/search",
        params={"p": QUERY, "btf": "w", "iscqry": ""},
        cookies={"sB": "v=1&vm=p&fl=1&vl=lang_de&pn=10&rw=new&userset=1"},
        ours={
            "params.ei": "the query's encoding, as Yahoo's own search box URLs carry it (fr=yfp-t&ei=UTF-8)",
            "cookies.sB": "no vm (safe-search) field: Yahoo's own default filter applies, as on engines with none",
        },
    ),
    # ddgs a97a4fc ddgs/engines/yahoo.py build_payload(), week
    Pin(
        "yahoo",
        "ddgs a97a4fc ddgs/engines/yahoo.py build_payload()",
        {"time_range": "week"},
        "GET",
        "https://search.yahoo.com/search;_ylt=<24 random>;_ylu=<47 random>",
        params={"p": QUERY, "btf": "w"},
        ours={
            "url": "ddgs adds random ;_ylt=/;_ylu= path tokens; SearXNG and Yahoo's search box send none",
            "params.ei": "the query's encoding, as Yahoo's own search box URLs carry it (fr=yfp-t&ei=UTF-8)",
            "params.iscqry": "without it Yahoo answers one result (SearXNG sends it too)",
            "cookies.sB": "Yahoo's settings cookie as SearXNG sends it: the language filter and ten rows",
        },
    ),
    # --- Google CSE (the Custom Search Element) ----------------------------------------------------------------
    # SearXNG 9fea412 searx/engines/google_cse.py (#6364, 1cdf01a71 2026-07-04) _cse_token(): the loader script
    Pin(
        "google-cse",
        "SearXNG 9fea412 searx/engines/google_cse.py _cse_token()",
        {},
        "GET",
        "https://www.google.com/cse/cse.js",
        params={"cx": "partner-pub-8993703457585266:4862972284"},
        headers={"Referer": None},
        step=0,
    ),
    # ... request(), locale all, safesearch 0: the element's JSONP API with the script's token
    Pin(
        "google-cse",
        "SearXNG 9fea412 searx/engines/google_cse.py request()",
        {},
        "GET",
        "https://cse.google.com/cse/element/v1",
        params={
            "rsz": "filtered_cse",
            "num": "20",
            "hl": "en",
            "cselibv": "f71e4ed980f4c082",
            "cx": "partner-pub-8993703457585266:4862972284",
            "q": QUERY,
            "safe": "off",
            "cse_tok": "AKaTTZjH2mDn0bIuQxL6wz9y3s8v:1765000000000",
            "callback": "_",
            "rurl": "",
            "searchtype": "",
            "exp": "cc,csqr,4000000",
        },
        headers={"Referer": "https://cse.google.com/", "Accept": "*/*"},
        cookies={"CONSENT": "YES+"},
        ours={"params.num": "the rows a search asks each engine for (ten), not SearXNG's page of twenty"},
    ),
    # ... locale de-DE, week: gl, and sort by a date range of the last seven days
    Pin(
        "google-cse",
        "SearXNG 9fea412 searx/engines/google_cse.py request()",
        DE_WEEK,
        "GET",
        "https://cse.google.com/cse/element/v1",
        params={
            "rsz": "filtered_cse",
            "num": "20",
            "hl": "de",
            "cselibv": "f71e4ed980f4c082",
            "cx": "partner-pub-8993703457585266:4862972284",
            "q": QUERY,
            "safe": "off",
            "cse_tok": "AKaTTZjH2mDn0bIuQxL6wz9y3s8v:1765000000000",
            "callback": "_",
            "rurl": "",
            "searchtype": "",
            "exp": "cc,csqr,4000000",
            "gl": "DE",
            "sort": f"date:r:{SINCE_WEEK}:{dt.date.today():%Y%m%d}",
        },
        headers={"Referer": "https://cse.google.com/"},
        cookies={"CONSENT": "YES+"},
        ours={"params.num": "the rows a search asks each engine for (ten), not SearXNG's page of twenty"},
    ),
    # --- Google (feature-phone page) -------------------------------------------------------------------------
    # SearXNG 9fea412 searx/engines/google.py google_request() (#6546), locale all
    Pin(
        "google",
        "SearXNG 9fea412 searx/engines/google.py google_request()",
        {},
        "GET",
        "https://www.google.com/wml/search",
        params={"q": QUERY, "sca_esv": "1", "hl": "en", "lr": "", "cr": "", "ie": "utf8", "oe": "utf8"},
        headers={"User-Agent": SEARXNG_NOKIA_UAS, "Accept": "*/*"},  # */*: httpx's default there
        ours={
            "params.cr": "an empty country restriction is no restriction; left out",
            "cookies.CONSENT": "skips the consent page Google shows a client from the EU (SearXNG sent it until #6546)",
        },
    ),
    # SearXNG 9fea412, locale de-DE, week: lr=lang_de and cr=countryDE there
    Pin(
        "google",
        "SearXNG 9fea412 searx/engines/google.py google_request()",
        DE_WEEK,
        "GET",
        "https://www.google.com/wml/search",
        params={
            "q": QUERY,
            "sca_esv": "1",
            "hl": "de",
            "lr": "lang_de",
            "cr": "countryDE",
            "ie": "utf8",
            "oe": "utf8",
            "tbs": "qdr:w",
        },
        headers={"User-Agent": SEARXNG_NOKIA_UAS, "Accept": "*/*"},
        ours={
            "params.lr": "a non-empty lr makes the WML page answer no results (SearXNG #6684); kept empty",
            "params.cr": "restricts to pages from one country, which the caller did not ask; left out",
            "cookies.CONSENT": "skips the consent page Google shows a client from the EU (SearXNG sent it until #6546)",
        },
    ),
    # SearXNG 9fea412 searx/engines/google_news.py request(): use_locales=False drops lr and cr, no time range
    Pin(
        "google-news",
        "SearXNG 9fea412 searx/engines/google_news.py request()",
        DE,
        "GET",
        "https://www.google.com/wml/search",
        params={"q": QUERY, "sca_esv": "1", "hl": "de", "ie": "utf8", "oe": "utf8", "tbm": "nws"},
        headers={"User-Agent": SEARXNG_NOKIA_UAS, "Accept": "*/*"},
        ours={
            "cookies.CONSENT": "skips the consent page Google shows a client from the EU (SearXNG sent it until #6546)",
        },
    ),
    # --- Mojeek ----------------------------------------------------------------------------------------------
    # SearXNG 9fea412 searx/engines/mojeek.py request(), locale de-DE, week, safesearch 0
    Pin(
        "mojeek",
        "SearXNG 9fea412 searx/engines/mojeek.py request()",
        DE_WEEK,
        "GET",
        "https://www.mojeek.com/search",
        params={"q": QUERY, "safe": 0, "since": SINCE_WEEK},  # never s=0 on page 1: it trips the rate limit
        cookies={"lb": "de", "arc": "de"},
        ours={"params.safe": "safe=0 is Mojeek's default: the same search without the field"},
    ),
    # SearXNG 9fea412, locale all: lb="" and arc="none" there
    Pin(
        "mojeek",
        "SearXNG 9fea412 searx/engines/mojeek.py request()",
        {},
        "GET",
        "https://www.mojeek.com/search",
        params={"q": QUERY, "safe": 0},
        cookies={"lb": "", "arc": "none"},
        ours={
            "params.safe": "safe=0 is Mojeek's default: the same search without the field",
            "cookies.lb": "no language chosen: no cookie, as a browser that never opened the settings sends",
            "cookies.arc": "no region chosen: no cookie, as a browser that never opened the settings sends",
        },
    ),
    # ddgs a97a4fc ddgs/engines/mojeek.py build_payload(), region de-de, safesearch moderate
    Pin(
        "mojeek",
        "ddgs a97a4fc ddgs/engines/mojeek.py build_payload()",
        DE,
        "GET",
        "https://www.mojeek.com/search",
        params={"q": QUERY},
        cookies={"arc": "de", "lb": "de"},
    ),
    # --- Brave (its own pages) -------------------------------------------------------------------------------
    # SearXNG 9fea412 searx/engines/brave.py request(), brave_category search, locale de-DE, week, safesearch 0
    Pin(
        "brave-web",
        "SearXNG 9fea412 searx/engines/brave.py request()",
        DE_WEEK,
        "GET",
        "https://search.brave.com/search",
        params={"q": QUERY, "source": "web", "tf": "pw"},
        cookies={
            "safesearch": "off",
            "useLocation": "0",
            "summarizer": "0",
            "country": "de",
            "ui_lang": "de-de",
        },
        ours={
            "cookies.safesearch": "no filter setting: Brave's own default applies, as on engines with none",
            "cookies.ui_lang": "the page's interface language; the results do not depend on it",
            "headers.Referer": "a search typed into Brave's own page: a same-origin navigation, as a browser's",
        },
    ),
    # ddgs a97a4fc ddgs/engines/brave.py build_payload(), region wt-wt, week
    Pin(
        "brave-web",
        "ddgs a97a4fc ddgs/engines/brave.py build_payload()",
        {"time_range": "week"},
        "GET",
        "https://search.brave.com/search",
        params={"q": QUERY, "source": "web", "tf": "pw"},
        cookies={"useLocation": "0"},
        ours={
            "cookies.summarizer": "no AI summary in the page (SearXNG sends it)",
            "cookies.country": "the region, or all, as SearXNG sends it (ddgs puts the country in the cookie's name)",
            "headers.Referer": "a search typed into Brave's own page: a same-origin navigation, as a browser's",
        },
    ),
    # SearXNG 9fea412 searx/engines/brave.py request(), brave_category news (time range only on web search)
    Pin(
        "brave-news",
        "SearXNG 9fea412 searx/engines/brave.py request() brave_category=news",
        DE,
        "GET",
        "https://search.brave.com/news",
        params={"q": QUERY, "source": "web"},
        cookies={
            "safesearch": "off",
            "useLocation": "0",
            "summarizer": "0",
            "country": "de",
            "ui_lang": "de-de",
        },
        ours={
            "cookies.safesearch": "no filter setting: Brave's own default applies, as on engines with none",
            "cookies.ui_lang": "the page's interface language; the results do not depend on it",
            "headers.Referer": "a search typed into Brave's own page: a same-origin navigation, as a browser's",
        },
    ),
    # --- Startpage (home page, then the form's POST) ---------------------------------------------------------
    # SearXNG 9fea412 searx/engines/startpage.py get_sc_code(): GET the home page
    Pin(
        "startpage",
        "SearXNG 9fea412 searx/engines/startpage.py get_sc_code()",
        DE_WEEK,
        "GET",
        "https://www.startpage.com/",
        step=0,
    ),
    STARTPAGE_DE,
    # SearXNG 9fea412, locale all: its defaults fall back to the literal "en" (no Startpage language name)
    STARTPAGE_DE.but(
        query={},
        form={"with_date": "", "language": "en", "lui": "en"},
        cookies={"preferences": {"language": "en", "language_ui": "en", "search_results_region": "en-US"}},
        ours={
            "form.language": "no language asked: none sent (en is not one of Startpage's language names)",
            "form.lui": "the home page form's own value (english), as a browser posts it",
            "cookies.preferences.language": "no language asked: Accept-Language decides, as for a new visitor",
            "cookies.preferences.language_ui": "no language asked: Accept-Language decides, as for a new visitor",
            "cookies.preferences.search_results_region": "no region asked: none set (en-US is not a region code)",
        },
    ),
    # --- Yep, Mwmbl, Wikipedia -------------------------------------------------------------------------------
    # SearXNG 9fea412 searx/engines/yep.py request() (PR #6223), locale de-DE, safesearch 0
    Pin(
        "yep",
        "SearXNG 9fea412 searx/engines/yep.py request()",
        {**DE, "limit": 20},
        "GET",
        "https://api.yep.com/search",
        params={"query": QUERY, "safeSearch": "off", "limit": 20, "hl": "de"},
        headers={
            "Referer": "https://yep.com/",
            "Origin": "https://yep.com",
            "Sec-Fetch-Dest": "empty",
            "Sec-Fetch-Mode": "cors",
            "Sec-Fetch-Site": "same-site",
            "Accept": "*/*",  # httpx's default there; a fetch()'s too
        },
    ),
    # SearXNG 9fea412 searx/engines/mwmbl.py request()
    Pin(
        "mwmbl",
        "SearXNG 9fea412 searx/engines/mwmbl.py request()",
        DE_WEEK,
        "GET",
        "https://api.mwmbl.org/api/v1/search/",
        params={"s": QUERY},
    ),
    # MediaWiki API:Search (list=search); host and path as ddgs a97a4fc ddgs/engines/wikipedia.py asks
    Pin(
        "wikipedia",
        "MediaWiki API:Search; ddgs a97a4fc ddgs/engines/wikipedia.py (host, path)",
        {**DE, "contact": "ops@example.org"},
        "GET",
        "https://de.wikipedia.org/w/api.php",
        params={"action": "query", "list": "search", "srsearch": QUERY, "format": "json"},
        ours={
            "params.srprop": "the snippet and the last-edit time, the row's text and date",
            "params.srlimit": "the rows asked for",
            "params.formatversion": "version 2's plain JSON (booleans, no '*' keys)",
            "params.utf8": "non-ASCII text as is, not escaped",
            "headers.User-Agent": "Wikimedia's policy: the software and its operator's contact",
        },
    ),
    # --- News ------------------------------------------------------------------------------------------------
    # ddgs a97a4fc ddgs/engines/duckduckgo_news.py _get_vqd(): the results page that holds the vqd
    Pin(
        "ddg-news",
        "ddgs a97a4fc ddgs/engines/duckduckgo_news.py _get_vqd()",
        DE_WEEK,
        "GET",
        "https://duckduckgo.com/",
        params={"q": QUERY},
        ours={
            "params.iar": "the news tab's page, as a browser opens it (SearXNG asks with iar and t too)",
            "params.t": "the tab's source marker, as SearXNG sends it",
            "headers.Referer": "a navigation from DuckDuckGo's own page",
        },
        step=0,
    ),
    # ddgs a97a4fc ddgs/engines/duckduckgo_news.py build_payload(), region de-de, moderate, week
    Pin(
        "ddg-news",
        "ddgs a97a4fc ddgs/engines/duckduckgo_news.py build_payload()",
        DE_WEEK,
        "GET",
        "https://duckduckgo.com/news.js",
        params={
            "l": "de-de",
            "o": "json",
            "noamp": "1",
            "q": QUERY,
            "vqd": "4-1234567890",
            "p": "-1",
            "df": "w",
        },
        ours={
            "params.p": "moderate is DuckDuckGo's default: left out, as SearXNG leaves it for moderate",
            "headers.Referer": "the fetch comes from DuckDuckGo's own page (SearXNG sends it too)",
        },
    ),
    # SearXNG 9fea412 searx/engines/bing_news.py request() (ddgs a97a4fc bing_news.py asks the same path)
    Pin(
        "bing-news",
        "SearXNG 9fea412 searx/engines/bing_news.py request()",
        {**DE, "time_range": "month"},
        "GET",
        "https://www.bing.com/news/infinitescrollajax",
        params={
            "q": QUERY,
            "InfiniteScroll": 1,
            "first": 1,
            "SFX": 0,
            "form": "PTFTNR",
            "mkt": "de-de",
            "qft": 'interval="9"',
        },
        headers={"Accept-Language": Lang("de")},
        ours={
            "url": "the news search's RSS feed: every item carries its pubDate, which the ajax page does not",
            "params.InfiniteScroll": "paging of the ajax page; the feed has none",
            "params.first": "paging of the ajax page; the feed has none",
            "params.SFX": "paging of the ajax page; the feed has none",
            "params.form": "the ajax page's form code",
            "params.mkt": "setlang and cc instead, as Bing's web search now takes them (SearXNG PR #6671)",
            "params.format": "rss: the feed",
            "params.setlang": "the market as Bing's web search takes it (SearXNG PR #6671)",
            "params.cc": "the market as Bing's web search takes it (SearXNG PR #6671)",
        },
    ),
    # SearXNG 9fea412 bing_news.py, week: interval 7, which Bing's news filter calls the last 24 hours
    Pin(
        "bing-news",
        "SearXNG 9fea412 searx/engines/bing_news.py request()",
        {"time_range": "week"},
        "GET",
        "https://www.bing.com/news/infinitescrollajax",
        params={
            "q": QUERY,
            "InfiniteScroll": 1,
            "first": 1,
            "SFX": 0,
            "form": "PTFTNR",
            "qft": 'interval="7"',
        },
        ours={
            "url": "the news search's RSS feed: every item carries its pubDate, which the ajax page does not",
            "params.InfiniteScroll": "paging of the ajax page; the feed has none",
            "params.first": "paging of the ajax page; the feed has none",
            "params.SFX": "paging of the ajax page; the feed has none",
            "params.form": "the ajax page's form code",
            "params.qft": 'Bing\'s intervals: "7" is 24 hours, "8" seven days (the peers send 4, an hour, for a day)',
            "params.format": "rss: the feed",
            "params.setlang": "the market as Bing's web search takes it (SearXNG PR #6671)",
        },
    ),
    # --- keyed APIs ------------------------------------------------------------------------------------------
    # SearXNG 9fea412 searx/engines/braveapi.py request(), week, safesearch 0
    Pin(
        "brave",
        "SearXNG 9fea412 searx/engines/braveapi.py request()",
        {**DE_WEEK, "limit": 20, "api_key": KEY},
        "GET",
        "https://api.search.brave.com/res/v1/web/search",
        params={"q": QUERY, "count": 20, "offset": 0, "text_decorations": "False", "time_range": "past_week"},
        headers={"X-Subscription-Token": KEY},
        ours={
            "params.offset": "0 is the API's default: page one",
            "params.text_decorations": "false as Brave's API documents its booleans (Python's str(False) there)",
            "params.time_range": "freshness=pw instead: the parameter Brave's API reference documents",
            "params.freshness": "Brave's documented time filter (pd, pw, pm, py or a date range)",
            "params.country": "the caller's country in Brave's enum; the peer sends none",
            "params.search_lang": "the caller's language in Brave's enum; the peer sends none",
        },
    ),
    # exa-py 2.27.0 exa_py/api.py Exa.search(query, type="auto", num_results=10,
    # contents={"highlights": {"max_characters": 300}}, user_location="DE")
    Pin(
        "exa",
        "exa-py 2.27.0 exa_py/api.py Exa.search()",
        {**DE, "api_key": KEY},
        "POST",
        "https://api.exa.ai/search",
        json={
            "query": QUERY,
            "type": "auto",
            "numResults": 10,
            "contents": {"highlights": {"maxCharacters": 300}},
            "userLocation": "DE",
        },
        headers={"x-api-key": KEY, "Content-Type": "application/json"},
    ),
    # SearXNG 9fea412 searx/engines/exaapi.py request(), locale de-DE, safesearch 0
    Pin(
        "exa",
        "SearXNG 9fea412 searx/engines/exaapi.py request()",
        {**DE, "api_key": KEY},
        "POST",
        "https://api.exa.ai/search",
        json={
            "query": QUERY,
            "type": "auto",
            "numResults": 10,
            "contents": {"highlights": {"maxCharacters": 500}},
            "userLocation": "DE",
        },
        headers={"x-api-key": KEY},
        ours={
            "json.contents.highlights.maxCharacters": "300 characters make a snippet; Exa bills what it sends"
        },
    ),
    # tavily-python 0.8.5 tavily/tavily.py TavilyClient._search(query, search_depth="basic", max_results=10,
    # include_answer=False, include_raw_content=False, time_range="week")
    Pin(
        "tavily",
        "tavily-python 0.8.5 tavily/tavily.py TavilyClient._search()",
        {**DE_WEEK, "api_key": KEY},
        "POST",
        "https://api.tavily.com/search",
        json={
            "query": QUERY,
            "search_depth": "basic",
            "time_range": "week",
            "include_answer": False,
            "include_raw_content": False,
            "max_results": 10,
        },
        headers={
            "Authorization": f"Bearer {KEY}",
            "Content-Type": "application/json",
            "X-Client-Source": "tavily-python",
        },
        ours={"headers.X-Client-Source": "names the tavily-python package, which serpfuse is not"},
    ),
    # firecrawl-py 4.55.0 firecrawl/v1/client.py V1FirecrawlApp.search(query, limit=10, tbs="qdr:w", lang="de",
    # country="de")
    Pin(
        "firecrawl",
        "firecrawl-py 4.55.0 firecrawl/v1/client.py V1FirecrawlApp.search()",
        {**DE_WEEK, "api_key": KEY},
        "POST",
        "https://api.firecrawl.dev/v1/search",
        json={
            "query": QUERY,
            "limit": 10,
            "tbs": "qdr:w",
            "lang": "de",
            "country": "de",
            "timeout": 30000,
            "origin": "python-sdk@4.55.0",
        },
        headers={"Authorization": f"Bearer {KEY}"},
        ours={
            "json.timeout": "the SDK's own budget; serpfuse bounds the call itself",
            "json.origin": "names the Python SDK, which serpfuse is not",
        },
    ),
    # anysearch-py 0.2.0 anysearch_py/client.py Client.search(query, max_results=10, zone="intl")
    Pin(
        "anysearch",
        "anysearch-py 0.2.0 anysearch_py/client.py Client.search()",
        {"api_key": KEY},
        "POST",
        "https://api.anysearch.com/v1/search",
        json={"query": QUERY, "max_results": 10, "zone": "intl", "format": "json"},
        headers={
            "Accept": "application/json",
            "Content-Type": "application/json",
            "Authorization": f"Bearer {KEY}",
        },
    ),
    # anysearch-py 0.2.0 Client.search(query, max_results=10, zone="cn", language="zh")
    Pin(
        "anysearch",
        "anysearch-py 0.2.0 anysearch_py/client.py Client.search()",
        {"language": "zh", "region": "zh-CN"},
        "POST",
        "https://api.anysearch.com/v1/search",
        json={"query": QUERY, "max_results": 10, "zone": "cn", "language": "zh", "format": "json"},
        headers={"Accept": "application/json", "Content-Type": "application/json"},
    ),
    # SearXNG 9fea412 searx/webadapter.py: what its /search reads (q, format, time_range, language)
    Pin(
        "searxng",
        "SearXNG 9fea412 searx/webadapter.py get_search_query_from_webapp()",
        {**DE_WEEK, "base_url": "https://searx.example.org"},
        "GET",
        "https://searx.example.org/search",
        params={"q": QUERY, "format": "json", "time_range": "week", "language": "de-DE"},
    ),
    # --- Exa's keyless MCP endpoint: one session of three POSTs ----------------------------------------------
    # mcp 2.3.0 mcp/client/streamable_http.py (headers) and session.py initialize()
    Pin(
        "exa-free",
        "mcp 2.3.0 mcp/client/streamable_http.py, session.py initialize()",
        {},
        "POST",
        "https://mcp.exa.ai/mcp",
        json={
            "jsonrpc": "2.0",
            "id": ANY,
            "method": "initialize",
            "params": {"protocolVersion": "2025-11-25"},
        },
        headers={"Accept": "application/json, text/event-stream", "Content-Type": "application/json"},
        ours={
            "json.params.protocolVersion": "2025-03-26: its requests need no MCP-Protocol-Version header",
            "json.params.clientInfo.name": "names serpfuse",
            "json.params.clientInfo.version": "names serpfuse's client",
        },
        step=0,
    ),
    Pin(
        "exa-free",
        "mcp 2.3.0 mcp/client/streamable_http.py, session.py",
        {},
        "POST",
        "https://mcp.exa.ai/mcp",
        json={"jsonrpc": "2.0", "method": "notifications/initialized"},
        headers={
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "mcp-session-id": "s-1",
            "mcp-protocol-version": "2025-11-25",
        },
        ours={
            "headers.mcp-protocol-version": "the 2025-03-26 protocol has no such header; a server assumes it"
        },
        step=1,
    ),
    # exa-mcp-server 15ffb50 src/tools/webSearch.ts: tool web_search_exa {query, numResults}
    Pin(
        "exa-free",
        "exa-mcp-server 15ffb50 src/tools/webSearch.ts web_search_exa",
        {"limit": 8},
        "POST",
        "https://mcp.exa.ai/mcp",
        json={
            "jsonrpc": "2.0",
            "id": ANY,
            "method": "tools/call",
            "params": {"name": "web_search_exa", "arguments": {"query": QUERY, "numResults": 8}},
        },
        headers={"mcp-session-id": "s-1"},
        step=2,
    ),
    # --- Keenable's public endpoint ----------------------------------------------------------------------------
    # SearXNG 0be6f8780 (2026-07-15) searx/engines/keenable.py request(), no api_key
    Pin(
        "keenable",
        "SearXNG 0be6f8780 searx/engines/keenable.py request()",
        {},
        "POST",
        "https://api.keenable.ai/v1/search/public",
        json={"query": QUERY, "mode": "pro"},
        headers={"X-Keenable-Title": ANY, "Content-Type": "application/json"},
        ours={
            "headers.X-Keenable-Title": "an attribution header Keenable does not require; agent projects make "
            "it opt-in (hermes-agent#49758): not sent"
        },
    ),
    # ... with a key: /v1/search and X-API-KEY
    Pin(
        "keenable",
        "SearXNG 0be6f8780 searx/engines/keenable.py request()",
        {"api_key": KEY},
        "POST",
        "https://api.keenable.ai/v1/search",
        json={"query": QUERY, "mode": "pro"},
        headers={"X-API-KEY": KEY},
    ),
    # --- Parallel's free Search MCP: one session, tool web_search ----------------------------------------------
    # parallel-web/search-mcp 18b4f4f skills/parallel-search-setup/SKILL.md: anonymous https://search.parallel.ai/mcp,
    # "Run a web_search call with a simple query (for example, search_queries: [...])"
    Pin(
        "parallel",
        "parallel-web/search-mcp 18b4f4f SKILL.md; mcp 2.3.0 session.py initialize()",
        {},
        "POST",
        "https://search.parallel.ai/mcp",
        json={
            "jsonrpc": "2.0",
            "id": ANY,
            "method": "initialize",
            "params": {"protocolVersion": "2025-03-26"},
        },
        headers={"Accept": "application/json, text/event-stream", "Authorization": None},
        ours={
            "json.params.clientInfo.name": "names serpfuse",
            "json.params.clientInfo.version": "names serpfuse's client",
        },
        step=0,
    ),
    Pin(
        "parallel",
        "parallel-web/search-mcp 18b4f4f skills/parallel-search-setup/SKILL.md web_search",
        {},
        "POST",
        "https://search.parallel.ai/mcp",
        json={
            "jsonrpc": "2.0",
            "id": ANY,
            "method": "tools/call",
            "params": {"name": "web_search", "arguments": {"search_queries": [QUERY]}},
        },
        headers={"mcp-session-id": "s-1", "Authorization": None},
        ours={
            "json.params.arguments.objective": "the docs' natural-language objective (docs.parallel.ai Search "
            "MCP): the query is its own"
        },
        step=2,
    ),
    # --- Tavily's keyless mode ----------------------------------------------------------------------------------
    # docs.tavily.com/documentation/keyless (read 2026-12): curl -X POST https://api.tavily.com/search
    # -H "Content-Type: application/json" -H "X-Tavily-Access-Mode: keyless" -d '{"query": ..., "max_results": 3}'
    Pin(
        "tavily-free",
        "docs.tavily.com/documentation/keyless (Direct API curl)",
        {"limit": 3},
        "POST",
        "https://api.tavily.com/search",
        json={"query": QUERY, "max_results": 3},
        headers={
            "X-Tavily-Access-Mode": "keyless",
            "Content-Type": "application/json",
            "Authorization": None,
        },
        ours={
            "json.search_depth": "basic, as the keyed tavily asks (tavily-python 0.8.5's default)",
            "json.include_answer": "no generated answer: rows only, as the keyed tavily",
            "json.include_raw_content": "no page text: rows only, as the keyed tavily",
        },
    ),
    # --- You.com's free MCP profile: one session, tool you-search ----------------------------------------------
    # you.com "How to Set Up the You.com MCP Server" (?profile=free); arguments as free-search-mcp 0.16.0
    # engines/youcom.py _request() (2026-10) sends them, without its extraction/safesearch defaults
    Pin(
        "you-free",
        "free-search-mcp 0.16.0 search_mcp/engines/youcom.py _request()",
        {"time_range": "week"},
        "POST",
        "https://api.you.com/mcp",
        params={"profile": "free"},
        json={
            "jsonrpc": "2.0",
            "id": ANY,
            "method": "tools/call",
            "params": {
                "name": "you-search",
                "arguments": {
                    "query": QUERY,
                    "count": 10,
                    "extraction": "none",
                    "safesearch": "moderate",
                    "freshness": "week",
                },
                "_meta": {"com.you.com/search": {}},
            },
        },
        headers={"Authorization": None},
        ours={
            "json.params.arguments.extraction": "the tool's own default is no extraction; not sent",
            "json.params.arguments.safesearch": "the tool's own default; not sent",
            "params.profile": "in the URL itself (?profile=free), as You.com's documentation gives it",
        },
        step=2,
    ),
)


# --- what the test feeds the engines that need a first answer ------------------------------------------------

# Startpage's home page form as SearXNG's search_form_xpath documents it, abp input included.
STARTPAGE_HOME = b"""<html><body><form id="search" action="/sp/search" method="post">
<input type="text" name="query" value="">
<input type="hidden" name="t" value="device">
<input type="hidden" name="lui" value="english">
<input type="hidden" name="sc" value="Q7Mt5TRqowKB00">
<input type="hidden" name="cat" value="web">
<input type="hidden" class="abp" id="abp-input" name="abp" value="1">
</form></body></html>"""
# Bing's home page: what matters is the jar it sets (a Set-Cookie with an Expires date holding a comma).
BING_HOME: Reply = (
    200,
    {
        "content-type": "text/html",
        "set-cookie": "MUID=0123ABCD; domain=.bing.com; expires=Sat, 02 Jan 2027 00:00:00 GMT; path=/, "
        "SRCHD=AF=NOFORM; domain=.bing.com; path=/",
    },
    b'<html><body><form id="sb_form" action="/search"></form></body></html>',
)
FIRST_PAGES: dict[str, Reply] = {
    "so360": (
        200,
        {"content-type": "text/html", "set-cookie": "QiHooGUID=0123ABCD; path=/; domain=.so.com"},
        b"<html></html>",
    ),
    "google-cse": (
        200,
        {"content-type": "text/javascript"},
        (Path(__file__).parent / "fixtures" / "engines" / "google_cse_script_handmade.js").read_bytes(),
    ),
    "bing": BING_HOME,
    "bing-cn": BING_HOME,
    "startpage": (200, {"content-type": "text/html"}, STARTPAGE_HOME),
    "ddg-news": (
        200,
        {"content-type": "text/html"},
        b'<script>DDG.deep.initialize(); vqd="4-1234567890";</script>',
    ),
}


class RecordingClient:
    """Answers an MCP session's three steps the way mcp.exa.ai does, and keeps every request."""

    def __init__(self) -> None:
        self.sent: list[RequestSpec] = []

    async def send(self, spec: RequestSpec) -> Reply:
        self.sent.append(spec)
        method = (spec.json or {}).get("method")
        if method == "initialize":
            result = {
                "protocolVersion": "2025-03-26",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "exa"},
            }
            body = json.dumps({"jsonrpc": "2.0", "id": spec.json["id"], "result": result}).encode()
            return 200, {"content-type": "application/json", "mcp-session-id": "s-1"}, body
        if method == "notifications/initialized":
            return 202, {}, b""
        result = {"content": [{"type": "text", "text": "Title: T\nURL: https://example.org/"}]}
        return (
            200,
            {"content-type": "application/json"},
            json.dumps({"jsonrpc": "2.0", "id": 3, "result": result}).encode(),
        )


def requests_of(engine: str, query: dict[str, Any]) -> list[RequestSpec]:
    """Every request the engine sends for this query, in order."""
    module = get_engine(engine)
    q = EngineQuery(text=QUERY, **query)
    if is_multi_step(module):
        client = RecordingClient()
        asyncio.run(module.run(client, q))
        return client.sent
    if has_preflight(module):
        return [module.build_preflight(q), module.build_request(q, FIRST_PAGES[engine])]
    return [module.build_request(q)]


# --- comparing ------------------------------------------------------------------------------------------------


def startpage_preferences(value: str) -> dict[str, str]:
    """Startpage's settings cookie: "nameEEEvalue" pairs joined by "N1N"."""
    return dict(pair.split("EEE", 1) for pair in value.split("N1N"))


DECODERS = {("startpage", "preferences"): startpage_preferences}


def flat(section: str, value: Any, out: dict[str, Any]) -> dict[str, Any]:
    if isinstance(value, dict) and value:
        for key, inner in value.items():
            flat(f"{section}.{key}", inner, out)
    elif not isinstance(value, dict):
        out[section] = value
    return out


def ours_flat(pin: Pin, spec: RequestSpec) -> dict[str, Any]:
    cookies = {
        name: DECODERS[(pin.engine, name)](value) if (pin.engine, name) in DECODERS else value
        for name, value in (spec.cookies or {}).items()
    }
    out: dict[str, Any] = {}
    for section, value in (
        ("params", spec.params),
        ("form", spec.data),
        ("json", spec.json),
        ("cookies", cookies),
    ):
        flat(section, value or {}, out)
    return out


def peer_flat(pin: Pin) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for section, value in (
        ("params", pin.params),
        ("form", pin.form),
        ("json", pin.json),
        ("cookies", pin.cookies),
    ):
        flat(section, value, out)
    return out


def agrees(expected: Any, actual: Any) -> bool:
    if expected is ANY:
        return actual is not None
    if isinstance(expected, OneOf):
        return actual in expected.values
    if isinstance(expected, Lang):
        return (
            isinstance(actual, str)
            and actual.split(",")[0].split("-")[0].strip().lower() == expected.language
        )
    return expected == actual


def described(name: str, fields: dict[str, Any], headers: dict[str, Any]) -> Any:
    if name.startswith("headers."):
        wanted = name.split(".", 1)[1].lower()
        return next((v for k, v in headers.items() if k.lower() == wanted), None)
    return fields.get(name)


def wire_headers(engine: str, spec: RequestSpec) -> dict[str, str]:
    browser = get_engine(engine).INFO.transport == "browser"
    return {name.lower(): value for name, value in headers_for(spec, browser).items()}


@pytest.mark.parametrize("pin", PINS, ids=str)
def test_request_matches_the_peer(pin: Pin) -> None:
    spec = requests_of(pin.engine, pin.query)[pin.step]
    assert spec is not None, f"{pin.engine} sends nothing for {pin.query}"
    differs: set[str] = set()

    assert spec.method == pin.method
    url = urlsplit(spec.url)
    if f"{url.scheme}://{url.netloc}{url.path}" != pin.url:
        differs.add("url")

    ours, peer = ours_flat(pin, spec), peer_flat(pin)
    for name in peer.keys() | ours.keys():
        if name not in ours or name not in peer or not agrees(peer[name], ours[name]):
            differs.add(name)

    headers = wire_headers(pin.engine, spec)
    for name, value in pin.headers.items():
        if not agrees(value, headers.get(name.lower())):
            differs.add(f"headers.{name}")
    for name in pin.ours:
        header = name.split(".", 1)[1] if name.startswith("headers.") else None
        if header and header not in pin.headers and header.lower() in headers:
            differs.add(name)  # a header we add: present, as its reason says

    unexplained = sorted(d for d in differs if d not in pin.ours)
    stale = sorted(n for n in pin.ours if n not in differs)
    assert not unexplained, f"{pin}: differs without a reason: " + ", ".join(
        f"{d} (ours {described(d, ours, headers)!r}, peer {described(d, peer, pin.headers)!r})"
        for d in unexplained
    )
    assert not stale, f"{pin}: reasons for differences that are gone: {stale}"


def test_every_engine_is_pinned() -> None:
    from serpfuse.engines import ENGINES

    assert {pin.engine for pin in PINS} == set(ENGINES)


def test_startpage_never_posts_abp_even_when_the_home_page_form_has_it() -> None:
    assert b'name="abp"' in STARTPAGE_HOME
    for query in ({}, DE_WEEK):
        search = requests_of("startpage", query)[-1]
        assert "abp" not in (search.data or {}) and "abp" not in (search.params or {})


def test_ddg_sets_kl_as_a_cookie_only_for_a_chosen_region_and_names_no_origin_or_content_type() -> None:
    # SearXNG cf1410af8 (2026-06-15) sends no Origin; searxng#6596 (2026-08-30): an explicit Content-Type gets
    # DuckDuckGo's 202 "every single time". The client names the form's type itself.
    plain, german = requests_of("ddg", {})[0], requests_of("ddg", DE)[0]
    assert "kl" not in (plain.cookies or {}) and german.cookies["kl"] == "de-de"
    for spec in (plain, german):
        assert not {"origin", "content-type"} & set(wire_headers("ddg", spec))
