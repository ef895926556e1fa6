"""Startpage (keyless): Google's results through Startpage's proxy, a second index beside Microsoft's.

Two requests, as a person using the site makes them. First the home page: its search form carries a hidden
``sc`` token (``form#search input[name=sc]``; newer pages also put it in their bootstrap JSON as
``search_sc``), and Startpage treats a search without a fresh one as a bot. Then the form's POST to
``/sp/search`` with ``query``, ``cat=web``, ``t=device``, ``sc``, ``with_date`` (d/w/m/y or empty) and the ``abp``
flags, plus the ``preferences`` cookie that asks for POST searches. Language and region are left to the
``Accept-Language`` header: Startpage's own names for them ("english", "en-US") need a table we do not have.

The results ride in the page's bootstrap call ``React.createElement(UIStartpage.AppSerpWeb, {...})``: the web
rows are the ``render.presenter.regions.mainline[]`` blocks whose ``display_type`` is ``web-google``, each row
``{clickUrl, title, description}`` with HTML in title and description; ads are other display types. Google's
snippets may start with their date ("2 Sep 2014 ... ", "5 days ago ... ").

A blocked client is redirected to ``/sp/captcha`` (or shown an Anubis proof-of-work page); the transport
follows redirects, so the block shows as a page with those markers and no results, on either request.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Mapping
from typing import Any

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
)

ROOT = "https://www.startpage.com"
SEARCH_PATH = "/sp/search"
TIME_RANGE = {"day": "d", "week": "w", "month": "m", "year": "y"}
# Startpage's settings cookie ("nameEEEvalue" pairs joined by "N1N"): POST searches, ten rows, the default family filter.
PREFERENCES = (
    ("date_time", "world"),
    ("disable_family_filter", "0"),
    ("disable_open_in_new_window", "0"),
    ("enable_post_method", "1"),
    ("enable_proxy_safety_suggest", "1"),
    ("enable_stay_control", "1"),
    ("instant_answers", "1"),
    ("num_of_results", "10"),
    ("suggestions", "1"),
    ("wt_unit", "celsius"),
)
NAVIGATE = {"Sec-Fetch-Dest": "document", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-User": "?1"}

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


def build_request(q: EngineQuery, preflight: Reply) -> RequestSpec | None:
    _, headers, body = preflight
    sc = token(body, headers)
    if sc is None:
        if shows_challenge(body, CHALLENGE_MARKERS):
            raise ChallengeDetected("Startpage CAPTCHA (home page)")
        raise ParseFailure("Startpage: no sc token on the home page (layout changed?)")
    form = {
        "query": q.text,
        "cat": "web",
        "t": "device",
        "sc": sc,
        "with_date": TIME_RANGE.get(q.time_range or "", ""),
        "abp": "1",
        "abd": "1",
        "abe": "1",
    }
    return RequestSpec(
        method="POST",
        url=ROOT + SEARCH_PATH,
        data=form,
        headers={**NAVIGATE, "Sec-Fetch-Site": "same-origin", "Origin": ROOT, "Referer": ROOT + "/"},
        cookies={"preferences": "N1N".join(f"{k}EEE{v}" for k, v in PREFERENCES)},
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
    render = data.get("render") if isinstance(data.get("render"), dict) else {}
    presenter = render.get("presenter") if isinstance(render.get("presenter"), dict) else {}
    regions = presenter.get("regions") if isinstance(presenter.get("regions"), dict) else {}
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
