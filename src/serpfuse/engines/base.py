"""The engine contract: what an engine module declares, the request it describes, the errors it raises.

An engine module is pure description, SearXNG style: it never sends anything. It defines

- ``INFO: EngineInfo``: static metadata (tier, region, key, capabilities, limits);
- ``build_request(q: EngineQuery) -> RequestSpec | None``: the HTTP request to send, or None for "nothing to
  send" (the transport then reports the engine as skipped);
- ``parse(status, headers, body, q) -> list[EngineRow]``: the rows of one response. It raises
  ``ChallengeDetected`` on a CAPTCHA/challenge page, ``ParseFailure`` on a body it cannot read, and returns
  ``[]`` for a genuine no-results page. Each row keeps the engine's own 1-based rank, counted *before*
  malformed rows are dropped, so a bad row never promotes the rows below it (``engines.rows``'
  ``rows_from_items``, or ``rows_from_json_list`` for a JSON list, does the counting).

The transport maps each response's status first, with the engine's own ``classify`` when the module defines
one (``engines.classifier(module)``), else ``classify_http``, and hands 2xx responses to ``parse``. Every
``parse`` re-checks the status itself (``check_status``), so handing it any response is safe; DuckDuckGo's 202
challenge is a 2xx that only the engine recognises. An engine whose ``INFO.read_error_body`` is False
(AnySearch) asks the transport never to read a non-2xx body at all.

An engine whose request needs something only a first page holds (Startpage's ``sc`` token on its home page)
declares that page: ``build_preflight(q) -> RequestSpec`` names the request, and ``build_request(q, preflight)``
receives its answer as a ``Reply`` (status, headers, body) that has passed the status mapper. It raises
``ChallengeDetected`` or ``ParseFailure`` when that page is a block page or lacks what it needs. Only the second
answer goes to ``parse``, so a recorded answer re-parses like any single-request engine's. An engine whose first
page stays good for a while says so in ``INFO.preflight_reuse_s``: the live source then keeps the page that long.

A multi-step engine (one that needs several round trips, like Exa's keyless MCP endpoint) instead defines
``async def run(client: EngineClient, q: EngineQuery) -> Reply``. ``client.send(spec)`` sends one request and
returns ``(status, headers, body)`` unclassified; it raises ``EngineError`` (e.g. ``EngineTimeout``) for
transport failures. ``run`` classifies each step itself with ``classify_http`` and returns the last reply,
which ``parse`` reads like any engine's answer (off the event loop, under the parse budget); what ``run``
reads itself on the loop it keeps small.

Every engine builds its requests for its own site. An operator's base URL for it (``[engines.NAME] base_url``)
replaces the scheme, host and port of each one in the live source, paths, parameters and headers kept, so a
module never looks at ``EngineQuery.base_url`` unless it has no site of its own (SearXNG).

What parsers share lives beside this module: ``engines.rows`` (row building), ``engines.bodies`` (decoding,
HTML tree, JSON), ``engines.dates`` (published dates, time ranges), ``engines.locale`` (region and language).
"""

from __future__ import annotations

import datetime as dt
import email.utils
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from serpfuse.errors import SerpfuseError
from serpfuse.models import Category

Tier = Literal["primary", "fallback"]
Region = Literal["cjk", "global", "both"]
Kind = Literal["html", "json", "mcp", "xml"]  # what ``parse`` reads; "xml": an RSS feed
# "browser": a scraped page, asked for the way a browser asks (impersonated TLS/HTTP2 fingerprint and headers);
# "api": a JSON/MCP endpoint, asked by an honest library client (httpx2).
TransportKind = Literal["browser", "api"]
TimeRange = Literal["day", "week", "month", "year"]
ErrorStatus = Literal["error", "rate-limited", "challenge", "timeout", "parse-timeout"]

# Default cooldowns (seconds); plain errors back off in the transport (5 s x failures).
RATE_LIMIT_COOLDOWN_S = 180.0
ACCESS_DENIED_COOLDOWN_S = 180.0
CHALLENGE_COOLDOWN_S = 3600.0  # an engine's INFO.challenge_cooldown_s replaces it (cooldown.fit_to_engine)
FIREWALL_COOLDOWN_S = 86400.0  # Cloudflare 1020: a firewall rule, not a passing mood
PARSE_OVERRUN_COOLDOWN_S = 300.0  # a page too costly to read: give the engine time to serve another
MIN_RETRY_AFTER_S = 10.0  # "Retry-After: 0" still means "you were too fast": never retry at once


@dataclass(frozen=True)
class EngineInfo:
    """Static metadata of one engine. Ranking weights and groups live in data/engine_weights.json."""

    name: str
    website: str
    tier: Tier
    region: Region
    kind: Kind
    needs_key: bool
    transport: TransportKind = "api"
    key_envs: tuple[str, ...] = ()  # first one set wins, e.g. ("SERPFUSE_BRAVE_API_KEY", "BRAVE_API_KEY")
    time_range_support: bool = False  # day/week/month/year; without it the engine is skipped, not unfiltered
    date_range_support: bool = False  # explicit date_from/date_to
    rows_per_request: int = 10  # the most rows one request can return
    timeout_s: float = 15.0
    min_interval_s: float = 0.0  # per-engine rate limit: calls queue to keep this gap (Brave free: 1 req/s)
    group: str | None = None  # informational (correlated index); ranking groups are data
    # False for a router that answers from other engines' indexes (AnySearch): one voter however many sources
    # it asks, and its group is never an index of its own (``serpfuse engines`` says so).
    own_index: bool = True
    accepts_key: bool = False  # keyless engine that also uses a key when one is configured (anysearch)
    needs_base_url: bool = False  # self-hosted (searxng): unusable without a base URL
    base_url_envs: tuple[str, ...] = ()  # older variables that also set it (SERPFUSE_SEARXNG_URL)
    read_error_body: bool = (
        True  # False: a non-2xx body is never downloaded (AnySearch's 402 can hold credentials)
    )
    # How long a challenge/CAPTCHA suspends this engine: how long its blocks last, not one number for all
    # (DuckDuckGo's form is per request, SearXNG suspends it 0 s; Google's "sorry" wall lasts hours).
    challenge_cooldown_s: float = CHALLENGE_COOLDOWN_S
    # What the engine searches: the web, or news articles (a news endpoint is its own engine module). A search
    # asks only the engines of its category.
    category: Category = "general"
    # The engine's usage policy asks for the operator's contact in the User-Agent (Wikimedia's): the live source
    # hands it the one configured ([engines.NAME] contact) in EngineQuery.contact.
    user_agent_contact: bool = False
    # How long a preflight page may serve later calls (Startpage's sc token); 0: fetched for every call. The
    # live source drops it when a search built from it fails, and sends the search as the browser that got it.
    preflight_reuse_s: float = 0.0
    # A keyless tier's published allowance, short ("1,000 an hour per IP"; the module says whose words): shown by
    # ``serpfuse engines`` beside a ready engine. Its rate limits themselves are cooldowns (RateLimited).
    quota: str | None = None


@dataclass
class EngineQuery:
    """What one engine call asks for (one query variant, already cleaned)."""

    text: str
    limit: int = 10
    time_range: TimeRange | None = None
    date_from: dt.date | None = None
    date_to: dt.date | None = None
    region: str | None = None  # country ("us", "CN") or locale ("en-US", "us-en")
    language: str | None = None  # "en", "zh", "zh-CN"...
    include_domains: tuple[str, ...] = ()
    exclude_domains: tuple[str, ...] = ()
    api_key: str | None = field(default=None, repr=False)
    # The operator's base URL for this engine. The live source rebases every request onto it (urls.rebase_url),
    # so only a self-hosted engine, which has no address of its own (searxng), reads it.
    base_url: str | None = None
    contact: str | None = (
        None  # the operator's contact, for an engine whose INFO.user_agent_contact asks for it
    )


# Header and body field names whose values are secrets: masked in RequestSpec's repr.
_SECRET_NAMES = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "x-subscription-token",
        "api_key",
        "apikey",
        "api-key",
        "key",
        "token",
        "access_token",
    }
)
MASK = "***"


def _masked(mapping: Any) -> Any:
    if not isinstance(mapping, Mapping):
        return mapping
    return {k: (MASK if str(k).lower() in _SECRET_NAMES else v) for k, v in mapping.items()}


@dataclass
class RequestSpec:
    """One HTTP request, described. The transport adds User-Agent and the other defaults."""

    method: str
    url: str
    params: dict[str, Any] | None = None
    headers: dict[str, str] | None = None
    data: dict[str, Any] | None = None  # form body
    json: Any = None  # JSON body
    cookies: dict[str, str] | None = None

    def __repr__(self) -> str:
        # Keys sit in headers (or, for some APIs, the body): never let a log line or a traceback show them.
        parts = [f"method={self.method!r}", f"url={self.url!r}"]
        for name in ("params", "headers", "data", "json", "cookies"):
            value = getattr(self, name)
            if value is not None:
                parts.append(f"{name}={_masked(value)!r}")
        return f"RequestSpec({', '.join(parts)})"

    __str__ = __repr__


# One response as engines see it: (status, headers with lowercase names, body).
Reply = tuple[int, Mapping[str, str], bytes]


class EngineClient(Protocol):
    """What a multi-step engine's ``run`` may use: one request in, one unclassified response out."""

    async def send(self, spec: RequestSpec) -> Reply: ...


# --- errors ------------------------------------------------------------------------------------------------


class EngineError(SerpfuseError):
    """An engine call failed. The message is a fixed, safe string: never a response body, never a key.

    ``cooldown_s`` is the suspension this failure asks for; None lets the transport's ladder decide.
    """

    status: ErrorStatus = "error"
    default_message = "engine error"

    def __init__(self, message: str | None = None, *, cooldown_s: float | None = None) -> None:
        self.message = message or self.default_message
        self.cooldown_s = cooldown_s
        super().__init__(self.message)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, cooldown_s={self.cooldown_s!r})"


class ChallengeDetected(EngineError):
    """A challenge/CAPTCHA page. Without ``cooldown_s`` the engine's ``INFO.challenge_cooldown_s`` applies
    (``cooldown.fit_to_engine``), and ``CHALLENGE_COOLDOWN_S`` where no engine is known."""

    status: ErrorStatus = "challenge"
    default_message = "challenge or CAPTCHA page"


class RateLimited(EngineError):
    status: ErrorStatus = "rate-limited"
    default_message = "rate limited (HTTP 429)"

    def __init__(self, message: str | None = None, *, retry_after_s: float | None = None) -> None:
        self.retry_after_s = retry_after_s
        cooldown_s = RATE_LIMIT_COOLDOWN_S if retry_after_s is None else max(MIN_RETRY_AFTER_S, retry_after_s)
        super().__init__(message, cooldown_s=cooldown_s)


class AccessDenied(EngineError):
    default_message = "access denied"

    def __init__(
        self, message: str | None = None, *, cooldown_s: float | None = ACCESS_DENIED_COOLDOWN_S
    ) -> None:
        super().__init__(message, cooldown_s=cooldown_s)


class QueryNotServed(SerpfuseError):
    """Raised by ``build_request`` when the engine cannot take this query as asked (DuckDuckGo's 499-character
    cap): the engine is skipped with this message as the reason, and no cooldown. Not an ``EngineError``: the
    engine did nothing wrong. Returning None says the same without the why."""


class ParseFailure(EngineError):
    default_message = "response could not be parsed"


class EngineTimeout(EngineError):
    status: ErrorStatus = "timeout"
    default_message = "timed out"


class InvalidRequest(EngineError):
    """The request built from the caller's input cannot be sent (say, a region no host name can hold): the
    caller's mistake, so it never counts against the engine."""

    default_message = "invalid request"


class ParseOverrun(EngineError):
    """The engine's answer took longer to parse than its CPU budget: abandoned, and the engine cools down
    (a page that costs seconds to read will cost them again on the next search)."""

    status: ErrorStatus = "parse-timeout"
    default_message = "parsing the answer took too long; abandoned"

    def __init__(self, message: str | None = None, *, cooldown_s: float | None = PARSE_OVERRUN_COOLDOWN_S):
        super().__init__(message, cooldown_s=cooldown_s)


# --- the central status mapper -----------------------------------------------------------------------------


def header(headers: Mapping[str, str], name: str) -> str | None:
    """Case-insensitive header lookup that works on plain dicts too."""
    value = headers.get(name)
    if value is not None:
        return value
    lowered = name.lower()
    for key, val in headers.items():
        if key.lower() == lowered:
            return val
    return None


def retry_after_seconds(value: str | None, now: dt.datetime | None = None) -> float | None:
    """Retry-After as seconds: delta-seconds or an HTTP-date. None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    now = now or dt.datetime.now(dt.UTC)
    return max(0.0, (when - now).total_seconds())


BODY_HEAD_BYTES = 16 * 1024  # how much of a body the status mapper may search for challenge markers
_CF_CHALLENGE = (b"__cf_chl_jschl_tk__=", b"__cf_chl_captcha_tk__=", b"/cdn-cgi/challenge-platform/")
_CF_FIREWALL = re.compile(rb'<span class="cf-error-code">\s*1020\s*</span>')
_RECAPTCHA = b'"https://www.google.com/recaptcha/'


def check_status(status: int, headers: Mapping[str, str], body: bytes) -> None:
    """Raise what ``classify_http`` finds; parsers call it first so a non-2xx never parses as "no results"."""
    error = classify_http(status, headers, body[:BODY_HEAD_BYTES])
    if error is not None:
        raise error


# One cookie of a ``Set-Cookie`` header: its name=value, before the first ";". The transport joins repeated
# headers with ", ", and an Expires date holds a comma too ("Thu, 01 Jan 2026"): a new cookie starts where a
# ", " is followed by a name and "=", which no date's "01 Jan" is.
_NEXT_COOKIE = re.compile(r",\s*(?=[^\s;,=]+=)")


def set_cookies(headers: Mapping[str, str]) -> dict[str, str]:
    """The cookies a response sets (name -> value), from its ``Set-Cookie`` header(s), attributes left out; a
    cookie set empty (a deletion) is left out too."""
    value = header(headers, "set-cookie") or ""
    out: dict[str, str] = {}
    for part in _NEXT_COOKIE.split(value):
        pair = part.split(";", 1)[0].strip()
        name, sep, val = pair.partition("=")
        name, val = name.strip(), val.strip()
        if sep and name and val:
            out[name] = val
    return out


def shows_challenge(body: bytes, markers: tuple[bytes, ...]) -> bool:
    """Whether a page carries one of an engine's block markers. Parsers ask only when a page gave no rows, so
    a result that merely mentions "challenge-form" in its snippet cannot pass for a block page."""
    return any(marker in body for marker in markers)


def classify_http(status: int, headers: Mapping[str, str], body_head: bytes) -> EngineError | None:
    """Map a response to the error it stands for, or None for a 2xx the engine should parse.

    ``body_head`` is the first few KB of the body, only searched for fixed markers.
    """
    is_cloudflare = (header(headers, "server") or "").lower().startswith("cloudflare")
    if (header(headers, "cf-mitigated") or "").lower() == "challenge":
        return ChallengeDetected("Cloudflare challenge")
    if is_cloudflare and status in (403, 429, 503) and any(m in body_head for m in _CF_CHALLENGE):
        return ChallengeDetected("Cloudflare challenge")
    if is_cloudflare and status == 403 and _CF_FIREWALL.search(body_head):
        return AccessDenied("blocked by a Cloudflare firewall rule", cooldown_s=FIREWALL_COOLDOWN_S)
    if status in (403, 503) and _RECAPTCHA in body_head:
        return ChallengeDetected("reCAPTCHA challenge")
    if status == 429:
        return RateLimited(retry_after_s=retry_after_seconds(header(headers, "retry-after")))
    if status in (401, 402, 403):
        return AccessDenied(f"access denied (HTTP {status})")
    if status >= 400:
        return EngineError(f"HTTP {status}")
    if 300 <= status < 400:
        return EngineError(f"unexpected redirect (HTTP {status})")
    if status < 200:
        return EngineError(f"unexpected HTTP {status}")
    return None


def clamp(value: int, low: int, high: int) -> int:
    """``value`` within [low, high]: a caller's limit fitted to what an engine accepts per request."""
    return max(low, min(high, value))
