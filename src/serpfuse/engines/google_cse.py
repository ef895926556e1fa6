"""Google through its Custom Search Element (keyless): a second path to Google's index beside the WML page.

As SearXNG asks it since #6364 (``searx/engines/google_cse.py``, 1cdf01a71, 2026-07-04; enabled by default in
its settings.yml at 9fea412, 2026-08-22, where the WML ``google`` is set inactive), and degoog's official
extension (degoog-org/official-extensions abfd270, 2026-08-01): the request a partner site's search box makes.

1. ``build_preflight``: the element's loader script, ``GET https://www.google.com/cse/cse.js?cx=CX``, as a page
   loads a script (``Sec-Fetch-Dest: script``, ``no-cors``, from the partner's site). Its last
   ``({...});`` call holds the options: ``cse_token``, ``cselibVersion`` and the ``exp`` experiment list. The
   token serves an hour (SearXNG caches it as long), so the live source keeps the script that long and
   fetches it anew after any failed search.
2. ``build_request``: the element's API, ``GET https://cse.google.com/cse/element/v1`` with ``rsz=filtered_cse``,
   ``num``, ``hl``, ``cselibv``, ``cx``, ``q``, ``safe=off``, ``cse_tok``, ``callback`` (JSONP), empty
   ``rurl`` and ``searchtype``, ``exp`` when the script named experiments, ``gl`` for a region's country and
   ``sort=date:r:FROM:TO`` for a time range; ``Referer: https://cse.google.com/`` and the ``CONSENT`` cookie.

The answer is JSONP (``/*O_o*/ _({...});``): the object between the first ``{`` and the last ``}``. Rows are
``results[]``'s ``unescapedUrl``, ``titleNoFormatting`` and ``contentNoFormatting``. An ``error`` object says
why nothing came: code 429 is a rate limit; any other is an error (a stale token: the script is fetched anew).

``CX`` is the partner engine SearXNG uses (blackle.com's, searching the whole web). SearXNG's PR says the element
"will be broken in 2027 due to google deprecating it"; the WML ``google`` engine stays beside it while peers keep
it. Same index as ``google`` and ``startpage``: one group, one voice in fusion.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from typing import Any

from serpfuse.engines.base import (
    ChallengeDetected,
    EngineError,
    EngineInfo,
    EngineQuery,
    ParseFailure,
    RateLimited,
    Reply,
    RequestSpec,
    check_status,
    clamp,
    shows_challenge,
)
from serpfuse.engines.bodies import decode_body
from serpfuse.engines.google import interface_language
from serpfuse.engines.locale import split_locale
from serpfuse.engines.rows import RowFields, rows_from_json_list
from serpfuse.models import EngineRow

INFO = EngineInfo(
    name="google-cse",
    website="https://cse.google.com",
    tier="primary",
    region="global",
    kind="json",
    needs_key=False,
    # A page's script loads both (a browser's TLS and headers, as a fetch, not a navigation).
    transport="browser",
    time_range_support=True,
    rows_per_request=20,
    group="google",
    preflight_reuse_s=3600.0,
    # Google's walls last hours (see google); asking sooner only extends them.
    challenge_cooldown_s=6 * 3600.0,
)

CX = "partner-pub-8993703457585266:4862972284"  # blackle.com's whole-web engine, SearXNG's CX
SCRIPT_URL = "https://www.google.com/cse/cse.js"
URL = "https://cse.google.com/cse/element/v1"
REFERER = "https://cse.google.com/"
CALLBACK = "_"
DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}
# The loader script, as a partner page's <script> tag asks for it.
SCRIPT_HEADERS = {
    "Accept": "*/*",
    "Sec-Fetch-Dest": "script",
    "Sec-Fetch-Mode": "no-cors",
    "Sec-Fetch-Site": "cross-site",
}
# The element's JSONP call, a <script> the element adds to the page it runs in.
API_HEADERS = {
    "Accept": "*/*",
    "Referer": REFERER,
    "Sec-Fetch-Dest": "script",
    "Sec-Fetch-Mode": "no-cors",
}
CHALLENGE_MARKERS = (b"/sorry/index", b"unusual traffic")


def build_preflight(q: EngineQuery) -> RequestSpec | None:
    if q.date_from or q.date_to:
        return None  # the element takes a date range only by the day count of a time range here
    return RequestSpec(method="GET", url=SCRIPT_URL, params={"cx": CX}, headers=dict(SCRIPT_HEADERS))


def script_options(body: bytes, headers: Mapping[str, str]) -> dict[str, Any]:
    """The options of the loader script's last ``({...});`` call: where the token rides."""
    text = decode_body(body, headers)
    start, end = text.rfind("({"), text.rfind("});")
    if start < 0 or end < start:
        raise ParseFailure("Google CSE: no options in cse.js (layout changed?)")
    try:
        options = json.loads(text[start + 1 : end + 1])
    except ValueError:
        raise ParseFailure("Google CSE: unreadable options in cse.js") from None
    if not isinstance(options, dict):
        raise ParseFailure("Google CSE: unreadable options in cse.js")
    return options


def build_request(q: EngineQuery, preflight: Reply) -> RequestSpec | None:
    _, headers, body = preflight
    if shows_challenge(body[:4096], CHALLENGE_MARKERS):
        raise ChallengeDetected("Google CSE: unusual-traffic page instead of cse.js")
    options = script_options(body, headers)
    token = options.get("cse_token")
    if not isinstance(token, str) or not token:
        raise ParseFailure("Google CSE: no cse_token in cse.js")
    params = {
        "rsz": "filtered_cse",
        "num": str(clamp(q.limit, 1, INFO.rows_per_request)),
        "hl": interface_language(q),
        "cselibv": str(options.get("cselibVersion") or ""),
        "cx": CX,
        "q": q.text,
        "safe": "off",
        "cse_tok": token,
        "callback": CALLBACK,
        "rurl": "",
        "searchtype": "",
    }
    if q.time_range:
        today = dt.date.today()
        since = today - dt.timedelta(days=DAYS[q.time_range])
        params["sort"] = f"date:r:{since:%Y%m%d}:{today:%Y%m%d}"
    country, _ = split_locale(q.region, q.language)
    if country:
        params["gl"] = country.upper()
    exp = options.get("exp")
    if isinstance(exp, list) and exp:
        params["exp"] = ",".join(str(e) for e in exp)
    return RequestSpec(
        method="GET", url=URL, params=params, headers=dict(API_HEADERS), cookies={"CONSENT": "YES+"}
    )


def jsonp_object(body: bytes, headers: Mapping[str, str]) -> dict[str, Any]:
    text = decode_body(body, headers)
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise ParseFailure("Google CSE: no JSON in the answer")
    try:
        data = json.loads(text[start : end + 1])
    except (ValueError, RecursionError):
        raise ParseFailure("Google CSE: unreadable JSON in the answer") from None
    if not isinstance(data, dict):
        raise ParseFailure("Google CSE: unreadable JSON in the answer")
    return data


def _pick(item: dict[str, Any]) -> RowFields | None:
    return item.get("unescapedUrl"), item.get("titleNoFormatting"), item.get("contentNoFormatting"), None


def parse(status: int, headers: Mapping[str, str], body: bytes, q: EngineQuery) -> list[EngineRow]:
    check_status(status, headers, body)
    data = jsonp_object(body, headers)
    error = data.get("error")
    if isinstance(error, dict):
        if error.get("code") == 429:
            raise RateLimited("Google CSE: rate limited")
        raise EngineError(f"Google CSE refused the search (code {error.get('code')!s:.5})")
    if "results" not in data:
        return []  # no results: the element leaves the list out
    return rows_from_json_list(INFO.name, data["results"], _pick, markup=False)
