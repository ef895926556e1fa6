"""DuckDuckGo's no-JavaScript HTML endpoint (keyless).

POST https://html.duckduckgo.com/html/ with form fields ``q``, ``b`` (empty), ``kl`` (region, ``wt-wt`` for
none) and ``df`` (d/w/m/y). A 202 status, or a page with no results that carries the anomaly/challenge
markers, means the bot blocker answered.
"""

from __future__ import annotations

from collections.abc import Mapping

from selectolax.lexbor import LexborNode

from ..models import EngineRow
from .base import (
    ChallengeDetected,
    EngineInfo,
    EngineQuery,
    Picked,
    RequestSpec,
    check_status,
    html_tree,
    node_text,
    rows_from_items,
    shows_challenge,
    split_locale,
)

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
TIME_RANGE = {"day": "d", "week": "w", "month": "m", "year": "y"}
NO_REGION = "wt-wt"

# The bot blocker: a 202, an anomaly modal (with its script), or a challenge form.
CHALLENGE_STATUS = 202
CHALLENGE_MARKERS = (b"anomaly-modal", b"anomaly.js", b"challenge-form")

RESULTS = "div#links div.result"
# Ads and the "No results." placeholder sit in the list but are not organic rows: they use up no rank.
NON_ORGANIC = ("result--ad", "result--no-result")
TITLE_LINK = "h2 a.result__a, a.result__a"
SNIPPET = ".result__snippet"


def _kl(q: EngineQuery) -> str:
    country, lang = split_locale(q.region, q.language)
    if country and lang:
        return f"{country}-{lang}"
    return NO_REGION


def build_request(q: EngineQuery) -> RequestSpec | None:
    if q.date_from or q.date_to:
        return None  # df takes only d/w/m/y here
    form = {"q": q.text, "b": "", "kl": _kl(q)}
    cookies = {"kl": form["kl"]}
    if q.time_range:
        form["df"] = cookies["df"] = TIME_RANGE[q.time_range]
    return RequestSpec(
        method="POST",
        url=q.base_url or URL,
        data=form,
        headers={"Referer": "https://html.duckduckgo.com/"},
        cookies=cookies,
    )


def _non_organic(item: LexborNode) -> bool:
    classes = (item.attributes.get("class") or "").split()
    return any(name in classes for name in NON_ORGANIC)


def _pick(item: LexborNode) -> Picked | None:
    link = item.css_first(TITLE_LINK)
    if link is None:
        return None
    return link.attributes.get("href"), node_text(link), node_text(item.css_first(SNIPPET)), None


def parse(status: int, headers: Mapping[str, str], body: bytes, q: EngineQuery) -> list[EngineRow]:
    if status == CHALLENGE_STATUS:
        raise ChallengeDetected("DuckDuckGo bot challenge (HTTP 202)")
    check_status(status, headers, body)
    organic = [item for item in html_tree(body, headers).css(RESULTS) if not _non_organic(item)]
    rows = rows_from_items(INFO.name, organic, _pick, markup=False)
    if not rows and shows_challenge(body, CHALLENGE_MARKERS):
        raise ChallengeDetected("DuckDuckGo bot challenge")
    return rows
