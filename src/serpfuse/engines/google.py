"""Google web search, keyless, from the page Google serves feature phones (``/wml/search``).

Google's desktop results page needs JavaScript to show results; the page it serves a feature phone does not.
So the request is what an old Nokia sends: GET https://www.google.com/wml/search with ``q``, ``hl`` (interface
language; the language goes nowhere else), ``lr`` present and empty (no language restriction, as SearXNG #6684
has it), ``ie``/``oe`` utf8, ``tbs=qdr:d|w|m|y`` for a time range, a Nokia User-Agent, ``Accept: */*`` and
the ``CONSENT`` cookie that skips the consent interstitial; ``sca_esv=1`` rides along, as on every such request
SearXNG's google engine has sent since PR #6546 (2026-08).

It goes through the plain library client, not the browser one: a feature phone's User-Agent over a desktop
Chrome's TLS fingerprint and client hints would be a contradiction no phone makes (SearXNG sends it over
httpx).

Each result is a ``div.zMzFAb`` block: the title is ``a.fuLhoc``'s ``span.CVA68e`` and the link Google's
``/url?q=TARGET&sa=U...`` redirector (``unwrap_redirect`` opens it); the snippet is ``div.taTFJ span.FrIlee``,
led by its date when Google shows one ("3 days ago · ..."). Blocks without such a title are other sections
(related searches, "people also ask") and take no rank; ads (``/aclk``) neither. Google renames these classes
now and then, so a page without any such block is read from its ``/url?q=`` links, one row per target.

Google's bot wall is its "sorry" page: a redirect to ``/sorry/index``, a 429, or a short page pointing there.
It lasts hours and asking again extends it, so a challenge suspends the engine for long.
"""

from __future__ import annotations

import datetime as dt
import random
import re
from collections.abc import Mapping
from urllib.parse import urlsplit

from selectolax.lexbor import LexborNode

from serpfuse.engines.base import (
    BODY_HEAD_BYTES,
    ChallengeDetected,
    EngineError,
    EngineInfo,
    EngineQuery,
    RequestSpec,
    classify_http,
    header,
    shows_challenge,
)
from serpfuse.engines.bodies import html_tree, node_text, results_page_without_rows
from serpfuse.engines.dates import leading_date
from serpfuse.engines.locale import split_locale
from serpfuse.engines.rows import RowFields, rows_from_items
from serpfuse.models import EngineRow
from serpfuse.urls import unwrap_redirect

INFO = EngineInfo(
    name="google",
    website="https://www.google.com",
    tier="primary",
    region="global",
    kind="html",
    needs_key=False,
    # The feature-phone page is asked for by a plain client: see the module docstring.
    transport="api",
    time_range_support=True,
    rows_per_request=10,
    group="google",
    # The "sorry" wall lasts hours; asking sooner only extends it (SearXNG suspends a reCAPTCHA for days).
    challenge_cooldown_s=6 * 3600.0,
)

URL = "https://www.google.com/wml/search"
# Feature phones Google serves the JavaScript-free page to; one is picked per request.
USER_AGENTS = (
    "Nokia6230i/2.0 (03.80) Profile/MIDP-2.0 Configuration/CLDC-1.1",
    "Nokia6280/2.0 (03.60) Profile/MIDP-2.0 Configuration/CLDC-1.1",
    "Nokia7610/2.0 (5.0509.0) SymbianOS/7.0s Series60/2.1 Profile/MIDP-2.0 Configuration/CLDC-1.0",
    "NokiaN72/2.0617.1.0.3 Series60/2.8 Profile/MIDP-2.0 Configuration/CLDC-1.1",
)
TIME_RANGE = {"day": "d", "week": "w", "month": "m", "year": "y"}
DEFAULT_LANGUAGE = "en"
TRADITIONAL_CHINESE = frozenset({"tw", "hk", "mo"})

RESULT_BLOCK = "div.zMzFAb"
TITLE_LINK = "a.fuLhoc"
TITLE = "span.CVA68e"
SNIPPET = "div.taTFJ span.FrIlee"
REDIRECT_LINKS = 'a[href^="/url?q="]'  # the fallback when no result block is found
MORE_SEARCHES = "/search"  # a block titled with a link to another Google search is "related searches"
AD_LINK = re.compile(r"^(?:https?://(?:www\.)?google\.[a-z.]+)?/aclk\b|googleadservices\.com")
# Google's own pages (its help, policies, accounts, more searches), never results; books.google.* and
# scholar.google.* are.
GOOGLE_CHROME_HOST = re.compile(r"^(?:(?:www|support|policies|accounts|myaccount)\.)?google\.[a-z.]+$")
# Every results page carries the search box holding the query, with or without results.
RESULTS_PAGE = 'input[name="q"]'

# The "sorry" page: a CAPTCHA form under /sorry/, with Google's own wording.
SORRY_PATH = "/sorry"
SORRY_STUB_BYTES = 2000  # a page this short pointing at /sorry/ is a redirect in HTML
CHALLENGE_MARKERS = (
    b"/sorry/index",
    b'id="captcha-form"',
    b"g-recaptcha",
    b"unusual traffic from your computer network",
)
# "3 days ago · text", "Mar 5, 2024 — text": the date Google puts in front of a snippet.
_DATE_PREFIX = re.compile(
    r"^(?P<date>[A-Za-z0-9 ,.]{3,30}?)\s+[\u00b7\u2014\u2013-]\s+(?P<rest>.*)$", re.DOTALL
)


def interface_language(q: EngineQuery) -> str:
    """Google's ``hl``: the query's language ("de", "zh-CN"), English when none is given."""
    country, lang = split_locale(q.region if q.language else None, q.language)
    if not lang:
        return DEFAULT_LANGUAGE
    if lang == "zh":
        return "zh-TW" if country in TRADITIONAL_CHINESE else "zh-CN"
    return lang


def request_params(q: EngineQuery) -> dict[str, str]:
    """The query string every feature-phone page request carries (web and news)."""
    return {"q": q.text, "sca_esv": "1", "hl": interface_language(q), "lr": "", "ie": "utf8", "oe": "utf8"}


def request_headers() -> dict[str, str]:
    return {"User-Agent": random.choice(USER_AGENTS), "Accept": "*/*"}


CONSENT_COOKIE = {"CONSENT": "YES+"}


def build_request(q: EngineQuery) -> RequestSpec | None:
    if q.date_from or q.date_to:
        return None  # tbs=qdr takes relative ranges only here
    params = request_params(q)
    if q.time_range:
        params["tbs"] = "qdr:" + TIME_RANGE[q.time_range]
    return RequestSpec(
        method="GET",
        url=URL,
        params=params,
        headers=request_headers(),
        cookies=dict(CONSENT_COOKIE),
    )


def classify(status: int, headers: Mapping[str, str], body_head: bytes) -> EngineError | None:
    """The central mapper, except that every way Google shows its "sorry" page is a challenge (its 429 too:
    it is the CAPTCHA, not a rate a client could keep to)."""
    location = header(headers, "location") or ""
    if 300 <= status < 400 and (SORRY_PATH in urlsplit(location).path or "sorry.google." in location):
        return ChallengeDetected("Google 'unusual traffic' page (redirect to /sorry/)")
    if status == 429:
        return ChallengeDetected("Google 'unusual traffic' page (HTTP 429)")
    if 200 <= status < 300 and len(body_head) < SORRY_STUB_BYTES and b"/sorry/" in body_head:
        return ChallengeDetected("Google 'unusual traffic' page")
    return classify_http(status, headers, body_head)


def check_google_status(status: int, headers: Mapping[str, str], body: bytes) -> None:
    error = classify(status, headers, body[:BODY_HEAD_BYTES])
    if error is not None:
        raise error


def dated_snippet(text: str) -> tuple[str, dt.datetime | None]:
    return leading_date(text, _DATE_PREFIX)


def is_ad(href: str | None) -> bool:
    return bool(href and AD_LINK.search(href))


def _block_pick(block: LexborNode) -> RowFields | None:
    link = block.css_first(TITLE_LINK)
    if link is None:
        return None
    title = node_text(link.css_first(TITLE) or link)
    snippet, published = dated_snippet(" ".join(node_text(n) for n in block.css(SNIPPET)))
    return link.attributes.get("href"), title, snippet, published


def _link_pick(link: LexborNode) -> RowFields | None:
    return link.attributes.get("href"), node_text(link), "", None


def _host(url: str) -> str:
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


def redirect_links(tree) -> list[LexborNode]:
    """The fallback rows: each ``/url?q=`` link with text, once per target, none to Google's own pages (its
    help and policies sit in the footer, more searches under the results)."""
    seen: set[str] = set()
    links = []
    for link in tree.css(REDIRECT_LINKS):
        target = unwrap_redirect(link.attributes.get("href") or "")
        if not node_text(link) or target in seen or GOOGLE_CHROME_HOST.match(_host(target)):
            continue
        seen.add(target)
        links.append(link)
    return links


def organic_blocks(tree) -> list[LexborNode]:
    """The result blocks that are results: a title link that is no ad and no further Google search."""
    blocks = []
    for block in tree.css(RESULT_BLOCK):
        link = block.css_first(TITLE_LINK)
        if link is None:
            continue
        href = link.attributes.get("href") or ""
        if not is_ad(href) and not href.startswith(MORE_SEARCHES):
            blocks.append(block)
    return blocks


def parse(status: int, headers: Mapping[str, str], body: bytes, q: EngineQuery) -> list[EngineRow]:
    check_google_status(status, headers, body)
    tree = html_tree(body, headers)
    blocks = organic_blocks(tree)
    if blocks:
        rows = rows_from_items(INFO.name, blocks, _block_pick, markup=False)
    else:
        rows = rows_from_items(INFO.name, redirect_links(tree), _link_pick, markup=False)
    if rows:
        return rows
    if shows_challenge(body, CHALLENGE_MARKERS):
        raise ChallengeDetected("Google 'unusual traffic' page")
    return results_page_without_rows(tree, RESULTS_PAGE, "Google")
