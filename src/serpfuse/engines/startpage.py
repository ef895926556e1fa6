"""Startpage (keyless): Google's results through Startpage's proxy, a second index beside Microsoft's.

Two requests, as a person using the site makes them. First the home page: its search form carries a hidden
``sc`` token (``form#search input[name=sc]``; newer pages also put it in their bootstrap JSON as
``search_sc``), and Startpage treats a search without one as a bot. A token stays good for a while, so the live
source reuses the home page for ``INFO.preflight_reuse_s`` (an hour, as SearXNG caches it) and fetches it again
after any failed search. Then the form's POST to ``/sp/search``, the form as the page holds it: its hidden inputs
(``t``, ``lui``, ``cat``, ``sc``...) except ``abp``, which Startpage no longer uses and answers with instant
blocks, then ``query``, ``with_date`` (d/w/m/y or empty), ``abd``/``abe``, ``qsr=all`` and the family filter
``qadf``. A language the caller names goes in ``language`` and ``lui`` by Startpage's own names ("deutsch",
data/startpage_locales.json); the ``preferences`` cookie asks for POST searches and repeats the family filter,
the language and the results region ("de_DE"). Without them Startpage reads the ``Accept-Language`` header.

The results ride in the page's bootstrap call ``React.createElement(UIStartpage.AppSerpWeb, {...})``: the web
rows are the ``render.presenter.regions.mainline[]`` blocks whose ``display_type`` is ``web-google``, each row
``{clickUrl, title, description}`` with HTML in title and description; ads are other display types. Google's
snippets may start with their date ("2 Sep 2014 ... ", "5 days ago ... ").

A blocked client is redirected to ``/sp/captcha`` (or shown an Anubis proof-of-work page); the live source
follows redirects, so the block shows as a page with those markers and no results, on either request.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Mapping
from functools import cache
from typing import Any

from serpfuse import data
from serpfuse.engines.base import (
    ChallengeDetected,
    EngineInfo,
    EngineQuery,
    ParseFailure,
    Reply,
    RequestSpec,
    check_status,
    shows_challenge,
)
from serpfuse.engines.bodies import decode_body, html_tree
from serpfuse.engines.dates import parse_published
from serpfuse.engines.locale import split_locale
from serpfuse.engines.rows import RowFields, clean, rows_from_items
from serpfuse.models import EngineRow

INFO = EngineInfo(
    name="startpage",
    website="https://www.startpage.com",
    tier="primary",
    region="global",
    kind="html",
    needs_key=False,
    transport="browser",
    time_range_support=True,
    rows_per_request=10,
    group="google",
    # Google's "unusual traffic" wall behind Startpage lasts hours, not minutes: asking again sooner only
    # extends it (SearXNG suspends a reCAPTCHA for 7 days).
    challenge_cooldown_s=6 * 3600.0,
    preflight_reuse_s=3600.0,  # a home page's sc token serves an hour of searches (SearXNG: sc_code_cache_sec)
)

ROOT = "https://www.startpage.com"
SEARCH_PATH = "/sp/search"
TIME_RANGE = {"day": "d", "week": "w", "month": "m", "year": "y"}
# The family filter in the form (qadf) and the cookie (disable_family_filter): none, moderate or heavy. Moderate
# is the default of the other engines serpfuse asks, and the filter Startpage applies without settings.
FAMILY_FILTER = "moderate"
# Fields the home page's form does not carry (its scripts set them) but every search from the page sends.
FORM_DEFAULTS = {"cat": "web", "t": "device", "abd": "1", "abe": "1"}
# "abp" marks a client Startpage now blocks at once; the others are this search's own.
NOT_COPIED = frozenset({"abp", "query", "with_date", "language", "qsr", "qadf"})
# Startpage's settings cookie ("nameEEEvalue" pairs joined by "N1N"), in the settings page's order.
PREFERENCES = (
    ("date_time", "world"),
    ("disable_family_filter", FAMILY_FILTER),
    ("disable_open_in_new_window", "0"),
    ("enable_post_method", "1"),
    ("enable_proxy_safety_suggest", "1"),
    ("enable_stay_control", "1"),
    ("instant_answers", "1"),
    ("lang_homepage", "s/device/en/"),
    ("num_of_results", "10"),
    ("suggestions", "1"),
    ("wt_unit", "celsius"),
)
TRADITIONAL_CHINESE = frozenset({"tw", "hk", "mo"})
NAVIGATE = {"Sec-Fetch-Dest": "document", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-User": "?1"}

FORM = "form#search"
TOKEN_INPUT = 'form#search input[name="sc"]'
_TOKEN_JSON = re.compile(r'"search_sc"\s*:\s*"([^"\\]+)"')
PAYLOAD_MARKER = "React.createElement(UIStartpage.AppSerpWeb,"
WEB_BLOCK = "web-google"
# Ads that slip into a web block, and links back into Startpage itself.
_NOT_ORGANIC = re.compile(r"^https?://(?:www\.)?(?:google\.[a-z.]+/aclk|startpage\.com/(?:do|sp)/)")
CHALLENGE_MARKERS = (
    b"/sp/captcha",
    b"anubis_challenge",
    b".within.website/x/cmd/anubis",
    b"g-recaptcha",
    b"h-captcha",
)
# "2 Sep 2014 ... text" and "5 days ago ... text": Google's date in front of a snippet.
_DATE_PREFIX = re.compile(
    r"^(?P<date>\d{1,2} [A-Z][a-z]{2} \d{4}|\d+ (?:minute|hour|day|week|month|year)s? ago) \.\.\. (?P<rest>.*)$",
    re.DOTALL,
)


def build_preflight(q: EngineQuery) -> RequestSpec | None:
    if q.date_from or q.date_to:
        return None  # with_date takes only d/w/m/y
    return RequestSpec(method="GET", url=ROOT + "/", headers={**NAVIGATE, "Sec-Fetch-Site": "none"})


def token(body: bytes, headers: Mapping[str, str]) -> str | None:
    """The ``sc`` token of a home page: the search form's hidden input, else the bootstrap JSON's."""
    node = html_tree(body, headers).css_first(TOKEN_INPUT)
    value = (node.attributes.get("value") or "").strip() if node is not None else ""
    if value:
        return value
    match = _TOKEN_JSON.search(decode_body(body, headers))
    return match.group(1) if match else None


def hidden_inputs(body: bytes, headers: Mapping[str, str]) -> dict[str, str]:
    """The search form's hidden inputs (name -> value), in page order; empty when the page has no form."""
    form = html_tree(body, headers).css_first(FORM)
    if form is None:
        return {}
    fields = {}
    for node in form.css('input[type="hidden"]'):
        name = (node.attributes.get("name") or "").strip()
        if name:
            fields[name] = node.attributes.get("value") or ""
    return fields


@cache
def _locales() -> tuple[dict[str, str], dict[str, str]]:
    table = data.json("startpage_locales.json")
    return dict(table["languages"]), dict(table["regions"])


def locale(q: EngineQuery) -> tuple[str | None, str | None]:
    """(Startpage's name for the language, its results region) the caller asked for; None for either that
    was not asked or that Startpage does not list."""
    country, lang = split_locale(q.region, q.language)
    languages, regions = _locales()
    lang = "nb" if lang == "no" else lang  # Norwegian Bokmål is what Startpage calls "norsk"
    name = None
    if lang:
        script = "zh-hant" if lang == "zh" and country in TRADITIONAL_CHINESE else None
        name = next((languages[k] for k in (script, f"{lang}-{country}", lang) if k in languages), None)
    region = None
    if country:
        wanted = f"{lang}-{country}" if lang else None
        region = regions.get(wanted or "") or next(
            (v for k, v in regions.items() if k.endswith(f"-{country}")), None
        )
    return name, region


def build_request(q: EngineQuery, preflight: Reply) -> RequestSpec | None:
    _, headers, body = preflight
    sc = token(body, headers)
    if sc is None:
        if shows_challenge(body, CHALLENGE_MARKERS):
            raise ChallengeDetected("Startpage CAPTCHA (home page)")
        raise ParseFailure("Startpage: no sc token on the home page (layout changed?)")
    language, region = locale(q)
    # In the form's own order, as a browser posts it; the token where the form holds it.
    form = {"query": q.text}
    for name, value in hidden_inputs(body, headers).items():
        if name not in NOT_COPIED:
            form[name] = sc if name == "sc" else value
    form.setdefault("sc", sc)
    for name, value in FORM_DEFAULTS.items():
        form.setdefault(name, value)
    form.update(with_date=TIME_RANGE.get(q.time_range or "", ""), qsr="all", qadf=FAMILY_FILTER)
    preferences = list(PREFERENCES)
    if language:
        form["language"] = form["lui"] = language
        preferences += [("language", language), ("language_ui", language)]
    if region:
        preferences.append(("search_results_region", region))
    return RequestSpec(
        method="POST",
        url=ROOT + SEARCH_PATH,
        data=form,
        headers={**NAVIGATE, "Sec-Fetch-Site": "same-origin", "Origin": ROOT, "Referer": ROOT + "/"},
        cookies={"preferences": "N1N".join(f"{k}EEE{v}" for k, v in preferences)},
    )


def payload(text: str) -> dict[str, Any] | None:
    """The object handed to ``UIStartpage.AppSerpWeb``, or None when the page has none (or a broken one)."""
    start = text.find(PAYLOAD_MARKER)
    brace = text.find("{", start + len(PAYLOAD_MARKER)) if start >= 0 else -1
    if brace < 0:
        return None
    try:
        # raw_decode stops at the object's end, so "})" inside a title cannot cut it short.
        data, _ = json.JSONDecoder().raw_decode(text, brace)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def web_results(data: dict[str, Any]) -> list[Any]:
    """The organic rows, in page order: every ``web-google`` block of the main column."""
    render = found if isinstance(found := data.get("render"), dict) else {}
    presenter = found if isinstance(found := render.get("presenter"), dict) else {}
    regions = found if isinstance(found := presenter.get("regions"), dict) else {}
    mainline = regions.get("mainline")
    if not isinstance(mainline, list):
        raise ParseFailure("Startpage: no result column in the page data")
    items: list[Any] = []
    for block in mainline:
        if isinstance(block, dict) and block.get("display_type") == WEB_BLOCK:
            items.extend(block.get("results") or [])
    return [
        i for i in items if not (isinstance(i, dict) and _NOT_ORGANIC.match(str(i.get("clickUrl") or "")))
    ]


def dated_snippet(text: str) -> tuple[str, dt.datetime | None]:
    """(snippet without its leading date, the date) when Google put one in front, else (text, None)."""
    match = _DATE_PREFIX.match(text)
    if match is None:
        return text, None
    return match.group("rest"), parse_published(match.group("date"))


def _pick(item: Any) -> RowFields | None:
    if not isinstance(item, dict):
        return None
    # Title and description are HTML; cleaned here once, so the rows are built as plain text.
    snippet, published = dated_snippet(clean(item.get("description")))
    return item.get("clickUrl"), clean(item.get("title")), snippet, published


def parse(status: int, headers: Mapping[str, str], body: bytes, q: EngineQuery) -> list[EngineRow]:
    check_status(status, headers, body)
    data = payload(decode_body(body, headers))
    if data is None:
        if shows_challenge(body, CHALLENGE_MARKERS):
            raise ChallengeDetected("Startpage CAPTCHA")
        raise ParseFailure("Startpage: no result data on the page (layout changed?)")
    return rows_from_items(INFO.name, web_results(data), _pick, markup=False)
