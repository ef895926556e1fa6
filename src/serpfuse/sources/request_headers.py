"""The headers an engine request carries: the transport's defaults (a browser's navigation, or an honest API
client) with the engine's own on top, one value each, and a URL's credentials as the Authorization header.

HTML engines send one Chrome release's navigation headers in Chrome's order when not impersonated; impersonated,
the release sends its own and only Sec-Fetch-Site and the engine's headers go on top. A request the engine
describes as a script's fetch drops what only a navigation carries. JSON APIs keep a library User-Agent.
"""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from serpfuse.engines.base import RequestSpec
from serpfuse.urls import registrable_domain
from serpfuse.version import __version__ as _version

API_USER_AGENT = f"serpfuse/{_version} (+https://pypi.org/project/serpfuse/)"
# The browser releases impersonated, newest first: ones whose curl_cffi profile sends a page navigation's
# headers (firefox153/155 send a fetch()'s "cors"/"empty", which no typed search looks like). Only those the
# installed curl_cffi knows are used (``browser_profiles``).
BROWSER_PROFILES = ("chrome152", "chrome151", "chrome150", "firefox154", "safari270")
# Without impersonation (``impersonate=False``) HTML engines still send one Chrome release's navigation headers,
# in Chrome's order; only the TLS fingerprint then gives the client away.
BROWSER_HEADERS = {
    "sec-ch-ua": '"Chromium";v="152", "Not?A_Brand";v="24", "Google Chrome";v="152"',
    "sec-ch-ua-mobile": "?0",
    "sec-ch-ua-platform": '"Windows"',
    "Upgrade-Insecure-Requests": "1",
    "User-Agent": (
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/152.0.0.0 Safari/537.36"
    ),
    "Accept": (
        "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,"
        "application/signed-exchange;v=b3;q=0.7"
    ),
    "Sec-Fetch-Site": "none",
    "Sec-Fetch-Mode": "navigate",
    "Sec-Fetch-User": "?1",
    "Sec-Fetch-Dest": "document",
    "Accept-Language": "en-US,en;q=0.9",
}
# What the plain client offers (httpx2's own default with brotli and zstandard installed): read_capped decodes all four.
ACCEPT_ENCODING = "gzip, deflate, br, zstd"
API_HEADERS = {"User-Agent": API_USER_AGENT, "Accept": "application/json"}


def browser_profiles() -> tuple[str, ...]:
    """The impersonation targets to rotate among: ``BROWSER_PROFILES`` the installed curl_cffi offers, else
    its own newest Chrome ("chrome")."""
    from curl_cffi.requests import BrowserType

    offered = {b.value for b in BrowserType}
    return tuple(p for p in BROWSER_PROFILES if p in offered) or ("chrome",)


# Headers a browser sends only when it navigates (a typed address, a link, a form): never on a fetch() or
# XMLHttpRequest, whose Sec-Fetch-Mode is "cors" (or "no-cors", "same-origin"). A fetch's priority is "u=1, i"
# (Chrome; Firefox's "u=4" is close enough to be replaced the same), a navigation's "u=0, i".
NAVIGATION_ONLY = ("Upgrade-Insecure-Requests", "Sec-Fetch-User", "Cache-Control")
FETCH_PRIORITY = "u=1, i"


def is_fetch(spec: RequestSpec) -> bool:
    """Whether the engine describes its request as a page's script fetching (``Sec-Fetch-Mode`` other than
    "navigate"): Yep's API and DuckDuckGo News' ``news.js`` are, the pages people open are not."""
    mode = next((v for k, v in (spec.headers or {}).items() if k.lower() == "sec-fetch-mode"), None)
    return mode is not None and mode.strip().lower() != "navigate"


def fetch_site(spec: RequestSpec) -> str:
    """Sec-Fetch-Site as a browser sets it for this navigation: "none" when typed (no Referer), else how the
    Referer's site relates to the target's (a form posted from the engine's own page is "same-origin")."""
    referer = next((v for k, v in (spec.headers or {}).items() if k.lower() == "referer"), None)
    if not referer:
        return "none"
    try:
        source, target = urlsplit(referer), urlsplit(spec.url)
    except ValueError:
        return "cross-site"
    if (source.scheme, source.hostname, source.port) == (target.scheme, target.hostname, target.port):
        return "same-origin"
    same_site = source.hostname and target.hostname
    if same_site and registrable_domain(source.hostname) == registrable_domain(target.hostname):
        return "same-site"
    return "cross-site"


def engine_headers(spec: RequestSpec) -> dict[str, str]:
    headers = dict(spec.headers or {})
    if spec.cookies:
        # httpx deprecates per-request cookies; a Cookie header keeps the shared client's jar out of it.
        headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in spec.cookies.items())
    return headers


def headers_for(spec: RequestSpec, browser: bool) -> dict[str, str]:
    """The defaults (browser or API) with the engine's own headers (``with_own``); a browser's fetch without
    the headers only a navigation carries."""
    if not browser:
        return with_own(API_HEADERS, engine_headers(spec))
    defaults = {**BROWSER_HEADERS, "Sec-Fetch-Site": fetch_site(spec)}
    if is_fetch(spec):
        defaults = {k: v for k, v in defaults.items() if k not in NAVIGATION_ONLY}
    return with_own(defaults, engine_headers(spec))


def impersonated_headers(spec: RequestSpec, profile: str) -> dict[str, str | None]:
    """What goes on top of an impersonated release's own headers: Sec-Fetch-Site, the engine's headers, and for
    a fetch the navigation-only headers taken off (None: curl drops the release's own) and a fetch's priority
    where the release sends one (Safari sends none)."""
    headers: dict[str, str | None] = dict(with_own({"Sec-Fetch-Site": fetch_site(spec)}, spec.headers or {}))
    if is_fetch(spec):
        own = {name.lower() for name in headers}
        for name in NAVIGATION_ONLY:
            if name.lower() not in own:
                headers[name] = None
        if "priority" not in own and not profile.startswith("safari"):
            headers["Priority"] = FETCH_PRIORITY
    return headers


def with_own(defaults: Mapping[str, str], own: Mapping[str, str]) -> dict[str, str]:
    """``defaults`` with an engine's own header (any case) taking a default's place, then the rest of its own."""
    own_names = {name.lower(): name for name in own}
    headers: dict[str, str] = {}
    for name, value in defaults.items():
        mine = own_names.pop(name.lower(), None)
        headers[mine or name] = own[mine] if mine else value
    headers.update({name: own[name] for name in own_names.values()})
    return headers


def credentials_in_header(spec: RequestSpec) -> RequestSpec:
    """A URL's ``user:password@`` moved into the Basic ``Authorization`` header it stands for, so no URL that
    a client logs, or quotes in an error, carries the password; every client then sends it the same way."""
    try:
        parts = urlsplit(spec.url)
        user, password = parts.username, parts.password
    except ValueError:
        return spec  # the client refuses it, with a message naming the host only
    if user is None and password is None:
        return spec
    host = parts.netloc.rpartition("@")[2]
    url = urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
    headers = dict(spec.headers or {})
    if not any(name.lower() == "authorization" for name in headers):
        pair = f"{unquote(user or '')}:{unquote(password or '')}".encode()
        headers["Authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
    return dataclasses.replace(spec, url=url, headers=headers)


def joined_headers(items: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in items:
        key = name.lower()
        out[key] = f"{out[key]}, {value}" if key in out else value
    return out
