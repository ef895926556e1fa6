"""DuckDuckGo's no-JavaScript HTML endpoint (keyless; Microsoft's index under DuckDuckGo's ranking).

POST https://html.duckduckgo.com/html/ as the site's own search form sends it: ``q``, ``b`` (empty), ``kl``
(region, ``wt-wt`` for none) and ``df`` (d/w/m/y); ``df`` repeated as a cookie, and ``kl`` too when a region is
chosen (a ``kl=wt-wt`` cookie is a setting nobody saves); ``Referer`` the site itself, as a form posted from its
page carries it (so Sec-Fetch-Site says "same-origin"). No ``Origin`` and no ``Content-Type`` of the engine's
own: the impersonated browser's headers keep their browser's order, and a header the engine adds can only go
after them, where no browser puts Origin or Content-Type (a browser's form POST has them right after the client
hints). searxng#6596 (2026-08-30, zhechenzhu): with an explicit Content-Type "202 every single time", without it
"200 every single time"; SearXNG's working request (duckduckgo.py cf1410af8, 2026-06-15) sends no Origin. The
client names the form's type itself, last, as httpx and libcurl do for SearXNG. ``kl`` takes DuckDuckGo's own region
codes (data/ddg_regions.json: ``uk-en``, ``jp-jp``, ``tw-tzh``...), not country-language pairs; the region's
language and country go in ``Accept-Language`` too, from which the page guesses its language.

A word starting with ``!`` would be read as a bang and send the search to another site; such words go
quoted. DuckDuckGo refuses queries of 500 characters or more: the engine is skipped with that reason (never
a truncated query, which would answer another question). Ads (``result--ad``, links through ``y.js``) are
never rows and use up no rank.

A 202 status, or a page with no results that carries the anomaly/challenge markers, means the bot blocker
answered; it is per request, so the engine's challenge cooldown is short.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache

from selectolax.lexbor import LexborNode

from serpfuse import data
from serpfuse.engines.base import (
    ChallengeDetected,
    EngineInfo,
    EngineQuery,
    QueryNotServed,
    RequestSpec,
    check_status,
    shows_challenge,
)
from serpfuse.engines.bodies import html_tree, node_text, results_page_without_rows
from serpfuse.engines.locale import accept_language_for, split_locale
from serpfuse.engines.rows import RowFields, is_ad_click, rows_from_items
from serpfuse.models import EngineRow

INFO = EngineInfo(
    name="ddg",
    website="https://duckduckgo.com",
    tier="primary",
    region="global",
    kind="html",
    needs_key=False,
    transport="browser",
    time_range_support=True,
    rows_per_request=10,
    group="bing",
    # The challenge form is per request and usually gone on the next one (SearXNG suspends ddg 0 s); a short
    # pause only keeps a burst of queries from walking into it again and again.
    challenge_cooldown_s=30.0,
)

URL = "https://html.duckduckgo.com/html/"
ORIGIN = "https://html.duckduckgo.com"
REFERER = ORIGIN + "/"
TIME_RANGE = {"day": "d", "week": "w", "month": "m", "year": "y"}
NO_REGION = "wt-wt"
MAX_QUERY_CHARS = 499  # DuckDuckGo answers nothing for 500 or more

# The bot blocker: a 202, an anomaly modal (with its script), or a challenge form.
CHALLENGE_STATUS = 202
CHALLENGE_MARKERS = (b"anomaly-modal", b"anomaly.js", b"challenge-form")

RESULTS = "div#links div.result"
RESULTS_PAGE = "div#links"  # on every results page, with or without results (the AQL captures)
# Ads and the "No results." placeholder sit in the list but are not organic rows: they use up no rank.
NON_ORGANIC = ("result--ad", "result--no-result")
TITLE_LINK = "h2 a.result__a, a.result__a"
SNIPPET = ".result__snippet"
BANG = re.compile(r"^!\w")


Place = tuple[str | None, str | None]  # (ISO country, language) a region code serves


@cache
def _regions() -> tuple[dict[str, Place], dict[tuple[str, str], str], dict[str, str], dict[str, str]]:
    """(code -> (country, language), (country, language) -> code, country -> default code, country aliases)
    from the data table."""
    table = data.json("ddg_regions.json")
    codes = {code: (country, language) for code, (country, language) in table["regions"].items()}
    by_pair: dict[tuple[str, str], str] = {}
    by_country: dict[str, str] = {}
    for code, (country, language) in table["regions"].items():
        if country is None:
            continue
        by_pair.setdefault((country, language), code)
        by_country.setdefault(country, code)
    return codes, by_pair, by_country, dict(table["country_aliases"])


def region_code(region: str | None, language: str | None) -> str:
    """DuckDuckGo's ``kl`` for a region ("gb", "en-GB", or DDG's own "uk-en") and language; ``wt-wt`` when
    the region is unknown to DuckDuckGo or none is given."""
    codes, by_pair, by_country, aliases = _regions()
    own = (region or "").strip().lower().replace("_", "-")
    if own in codes or own == NO_REGION:
        return own
    country, lang = split_locale(region, language)
    if not country:
        return NO_REGION
    country = aliases.get(country, country)
    return by_pair.get((country, lang or ""), by_country.get(country, NO_REGION))


def quote_bangs(query: str) -> str:
    """Every word DuckDuckGo could read as a bang ("!w", "!gh") in quotes: quoting a word that is no bang
    costs nothing, a bang left bare sends the search to another site."""
    return " ".join(f"'{word}'" if BANG.match(word) else word for word in query.split())


def _accept_language(kl: str, language: str | None) -> str | None:
    # DuckDuckGo's HTML page guesses the language from Accept-Language (it has no language field): the
    # caller's language, else the one the region code serves, in the region code's country. The region is
    # read through its code only: DuckDuckGo's "uk-en" is English in the United Kingdom, not Ukrainian.
    _, lang = split_locale(None, language)
    country, region_lang = _regions()[0].get(kl, (None, None))
    return accept_language_for(country, lang or region_lang)


def build_request(q: EngineQuery) -> RequestSpec | None:
    if q.date_from or q.date_to:
        return None  # df takes only d/w/m/y here
    if len(q.text) > MAX_QUERY_CHARS:
        raise QueryNotServed(f"query is {len(q.text)} characters; DuckDuckGo takes at most {MAX_QUERY_CHARS}")
    kl = region_code(q.region, q.language)
    form = {"q": quote_bangs(q.text), "b": "", "kl": kl}
    cookies = {"kl": kl} if kl != NO_REGION else {}
    if q.time_range:
        form["df"] = cookies["df"] = TIME_RANGE[q.time_range]
    headers = {"Referer": REFERER}
    if language := _accept_language(kl, q.language):
        headers["Accept-Language"] = language
    return RequestSpec(method="POST", url=URL, data=form, headers=headers, cookies=cookies or None)


def _non_organic(item: LexborNode) -> bool:
    classes = (item.attributes.get("class") or "").split()
    if any(name in classes for name in NON_ORGANIC):
        return True
    link = item.css_first(TITLE_LINK)
    return link is not None and is_ad_click(link.attributes.get("href"))


def _pick(item: LexborNode) -> RowFields | None:
    link = item.css_first(TITLE_LINK)
    if link is None:
        return None
    return link.attributes.get("href"), node_text(link), node_text(item.css_first(SNIPPET)), None


def parse(status: int, headers: Mapping[str, str], body: bytes, q: EngineQuery) -> list[EngineRow]:
    if status == CHALLENGE_STATUS:
        raise ChallengeDetected("DuckDuckGo bot challenge (HTTP 202)")
    check_status(status, headers, body)
    tree = html_tree(body, headers)
    organic = [item for item in tree.css(RESULTS) if not _non_organic(item)]
    rows = rows_from_items(INFO.name, organic, _pick, markup=False)
    if rows:
        return rows
    if shows_challenge(body, CHALLENGE_MARKERS):
        raise ChallengeDetected("DuckDuckGo bot challenge")
    return results_page_without_rows(tree, RESULTS_PAGE, "DuckDuckGo")
