"""Sending one engine request: shared pooled clients, a whole-call deadline, a body size cap, safe errors.

One ``Transport`` per process (or session) owns its clients (libcurl's, below; httpx2's with impersonation
off), so connections and TLS sessions are pooled across engines and queries. ``send`` never raises anything
but ``EngineError`` for network trouble, and its messages are fixed strings naming at most the host: a URL's
query string or a header can hold an API key, and error text ends up in answers, logs and recordings.

The per-engine timeout covers the whole call (connect, headers and every body chunk), not only each read, so a
server that drips one byte a second cannot hold an engine past its budget. Cancellation (the fan-out's overall
deadline) closes the stream on the way out, which returns the connection to the pool or drops it.

HTML engines (``EngineInfo.transport == "browser"``) go through a browser-impersonating client by default:
curl_cffi, which speaks a real browser's TLS and HTTP/2 fingerprint and sends that browser's headers (its
User-Agent, client hints and Sec-Fetch-* in the browser's own order). Bot walls (DuckDuckGo's 202, Yahoo's
dropped connections) answer a plain Python client's fingerprint, not its User-Agent. Each request picks one of
a few current browser releases at random; each release has its own client, so one connection never changes
its fingerprint, and a multi-step engine's calls (``bind``) keep one release throughout. Each keeps the
cookies sites set (Yahoo's YBV on a redirect hop), as that browser would. JSON APIs keep an honest library
User-Agent, through a plain (un-impersonated, cookieless) client: under a fan-out it costs under a third of
httpx2's CPU per request, and its C pool does not slow as it grows. Both drive libcurl directly (``curl_client``),
not through curl_cffi's session. httpx2 carries everything only with impersonation off.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import functools
import importlib.util
import random
import ssl
from collections.abc import AsyncIterator, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import unquote, urlsplit, urlunsplit

from serpfuse.engines.base import EngineError, EngineTimeout, InvalidRequest, ParseFailure, RequestSpec
from serpfuse.errors import ConfigError
from serpfuse.sources.content_coding import Identity, OverBudget, UndecodableBody, decoder_for
from serpfuse.sources.transport_limits import (
    DEFAULT_CONNECTIONS,
    DEFAULT_IDLE_CONNECTIONS,
    DEFAULT_KEEPALIVE_S,
    DEFAULT_MAX_BYTES,
)
from serpfuse.urls import registrable_domain
from serpfuse.version import __version__ as _version

if TYPE_CHECKING:  # imported where httpx2 sends (impersonation off): the default path never loads it
    import httpx2

DEFAULT_TIMEOUT_S = 15.0

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
# What the plain client offers (httpx2's own default with brotli and zstandard installed): _read_capped decodes all four.
ACCEPT_ENCODING = "gzip, deflate, br, zstd"
API_HEADERS = {"User-Agent": API_USER_AGENT, "Accept": "application/json"}
IMPERSONATE_HINT = (
    "browser impersonation needs curl_cffi (a serpfuse dependency): pip install 'curl_cffi>=0.17'"
)


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


class HttpResponse(NamedTuple):
    status: int
    headers: dict[str, str]  # lowercase names; repeated headers joined with ", "
    body: bytes


class ResponseTooLarge(ParseFailure):
    default_message = "response too large"


class ImpersonationUnavailable(ConfigError, RuntimeError):
    """``impersonate=True`` without curl_cffi installed."""

    def __init__(self) -> None:
        super().__init__(IMPERSONATE_HINT)


def http2_available() -> bool:
    return importlib.util.find_spec("h2") is not None


def _host(url: str) -> str:
    try:
        return urlsplit(url).hostname or "?"
    except ValueError:
        return "?"


def _engine_headers(spec: RequestSpec) -> dict[str, str]:
    headers = dict(spec.headers or {})
    if spec.cookies:
        # httpx deprecates per-request cookies; a Cookie header keeps the shared client's jar out of it.
        headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in spec.cookies.items())
    return headers


def _headers_for(spec: RequestSpec, browser: bool) -> dict[str, str]:
    """The defaults (browser or API) with the engine's own headers (``_with_own``); a browser's fetch without
    the headers only a navigation carries."""
    if not browser:
        return _with_own(API_HEADERS, _engine_headers(spec))
    defaults = {**BROWSER_HEADERS, "Sec-Fetch-Site": fetch_site(spec)}
    if is_fetch(spec):
        defaults = {k: v for k, v in defaults.items() if k not in NAVIGATION_ONLY}
    return _with_own(defaults, _engine_headers(spec))


def _impersonated_headers(spec: RequestSpec, profile: str) -> dict[str, str | None]:
    """What goes on top of an impersonated release's own headers: Sec-Fetch-Site, the engine's headers, and for
    a fetch the navigation-only headers taken off (None: curl drops the release's own) and a fetch's priority
    where the release sends one (Safari sends none)."""
    headers: dict[str, str | None] = dict(_with_own({"Sec-Fetch-Site": fetch_site(spec)}, spec.headers or {}))
    if is_fetch(spec):
        own = {name.lower() for name in headers}
        for name in NAVIGATION_ONLY:
            if name.lower() not in own:
                headers[name] = None
        if "priority" not in own and not profile.startswith("safari"):
            headers["Priority"] = FETCH_PRIORITY
    return headers


def _with_own(defaults: Mapping[str, str], own: Mapping[str, str]) -> dict[str, str]:
    """``defaults`` with an engine's own header (any case) taking a default's place, then the rest of its own."""
    own_names = {name.lower(): name for name in own}
    headers: dict[str, str] = {}
    for name, value in defaults.items():
        mine = own_names.pop(name.lower(), None)
        headers[mine or name] = own[mine] if mine else value
    headers.update({name: own[name] for name in own_names.values()})
    return headers


def _credentials_in_header(spec: RequestSpec) -> RequestSpec:
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


def _joined_headers(items: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in items:
        key = name.lower()
        out[key] = f"{out[key]}, {value}" if key in out else value
    return out


def _map_httpx_error(exc: httpx2.HTTPError, host: str) -> EngineError:
    """A fixed, key-free message per failure kind. Never ``str(exc)``: it can quote the URL."""
    import httpx2

    if isinstance(exc, httpx2.ConnectTimeout):
        return EngineTimeout(f"connect timed out ({host})")
    if isinstance(exc, httpx2.TimeoutException):
        return EngineTimeout(f"timed out ({host})")
    if isinstance(exc, httpx2.ProxyError):
        return EngineError("proxy error")
    if isinstance(exc, httpx2.ConnectError):
        return EngineError(f"connection failed ({host})")
    if isinstance(exc, httpx2.RemoteProtocolError | httpx2.ReadError | httpx2.WriteError):
        return EngineError(f"connection reset or closed early ({host})")
    if isinstance(exc, httpx2.TooManyRedirects):
        return EngineError(f"too many redirects ({host})")
    if isinstance(exc, httpx2.DecodingError):
        return EngineError(f"undecodable response body ({host})")
    return EngineError(f"HTTP transport error: {type(exc).__name__} ({host})")


def _map_curl_error(exc: Exception, host: str, limit: int) -> EngineError:
    """libcurl's failures, by error code, onto the httpx path's messages, so callers (cooldowns, answers,
    recordings) see one vocabulary whichever client sent the request. Never ``str(exc)``: it quotes the URL."""
    from curl_cffi.const import CurlECode as E  # only reached when curl_cffi raised, so it is installed

    code = getattr(exc, "code", None)
    try:
        name = E(code).name if isinstance(code, int) else ""
    except ValueError:
        name = ""
    if code == E.OPERATION_TIMEDOUT:
        return EngineTimeout(f"timed out ({host})")
    # The request was broken before it left (by the caller's input, say): no cooldown, as on the httpx2 path.
    if code in (E.URL_MALFORMAT, E.UNSUPPORTED_PROTOCOL):
        return InvalidRequest(f"invalid request: {name} ({host})")
    connect_failed = (E.COULDNT_RESOLVE_PROXY, E.COULDNT_RESOLVE_HOST, E.COULDNT_CONNECT)
    if code in connect_failed or name.startswith("SSL") or code == E.PEER_FAILED_VERIFICATION:
        return EngineError(f"connection failed ({host})")
    if code == E.PROXY:  # the proxy was reached but refused the tunnel
        return EngineError("proxy error")
    closed_early = (
        E.GOT_NOTHING,
        E.RECV_ERROR,
        E.SEND_ERROR,
        E.PARTIAL_FILE,
        E.WEIRD_SERVER_REPLY,
        E.HTTP2,
        E.HTTP2_STREAM,
    )
    if code in closed_early:
        return EngineError(f"connection reset or closed early ({host})")
    if code == E.TOO_MANY_REDIRECTS:
        return EngineError(f"too many redirects ({host})")
    if code == E.BAD_CONTENT_ENCODING:
        return EngineError(f"undecodable response body ({host})")
    if code == E.FILESIZE_EXCEEDED:  # MAXFILESIZE_LARGE: the transport's own cap, enforced in C
        return ResponseTooLarge(f"response too large (over {limit} bytes)")
    return EngineError(f"HTTP transport error: {name or type(exc).__name__} ({host})")


def _client_failure(exc: Exception, host: str, limit: int) -> EngineError | None:
    """What a client's exception means for the engine, by the client that raised it; None for anything else
    (a bug, raised as it is)."""
    if type(exc).__module__.startswith("httpx2"):  # only raised where httpx2 sent, so it is imported
        import httpx2

        if isinstance(exc, httpx2.HTTPError):
            return _map_httpx_error(exc, host)
        if isinstance(exc, httpx2.InvalidURL):
            return InvalidRequest(f"invalid request: {type(exc).__name__} ({host})")
    if isinstance(exc, ValueError):  # a URL or parameter no client could send (curl_cffi's InvalidURL too)
        return InvalidRequest(f"invalid request: {type(exc).__name__} ({host})")
    if type(exc).__module__.startswith("curl_cffi"):
        return _map_curl_error(exc, host, limit)
    return None


def _too_large(declared: str | None, limit: int) -> bool:
    return bool(declared and declared.strip().isdigit() and int(declared) > limit)


@cache
def _decoding() -> ThreadPoolExecutor:
    """The threads that inflate bodies: two, so a burst of bombs queues here rather than contending for the
    GIL with the event loop in as many threads as there are engines."""
    return ThreadPoolExecutor(max_workers=2, thread_name_prefix="serpfuse-inflate")


async def _read_capped(
    status: int,
    headers: dict[str, str],
    chunks: Callable[[], AsyncIterator[bytes]],
    limit: int,
    read_error_body: bool,
    encoded: bool = False,
) -> HttpResponse:
    """The response with its body read chunk by chunk, ``ResponseTooLarge`` past ``limit`` bytes (declared,
    received, or decoded); a non-2xx body is left unread when ``read_error_body`` is False. ``encoded``: the
    chunks are the body as sent, to be decoded here by its Content-Encoding. Both clients' paths end here."""
    if not read_error_body and not 200 <= status < 300:
        return HttpResponse(status, headers, b"")
    too_large = ResponseTooLarge(f"response too large (over {limit} bytes)")
    if _too_large(headers.get("content-length"), limit):
        raise too_large
    decoder = decoder_for(headers.get("content-encoding")) if encoded else Identity()
    # Inflating is CPU work: one 16 KB chunk of a bomb is megabytes of output before the budget stops it, and
    # eleven engines' at once stalled the event loop (and /healthz) for 300 ms. zlib, brotli and zstd release
    # the GIL while they inflate, so a thread keeps the loop answering; a plain body needs no thread.
    threaded = not isinstance(decoder, Identity)
    body = bytearray()
    received = 0
    try:
        async for chunk in chunks():
            received += len(chunk)
            if received > limit:
                raise too_large
            room = limit - len(body)
            if threaded:
                body += await asyncio.get_running_loop().run_in_executor(
                    _decoding(), decoder.decode, chunk, room
                )
            else:
                body += decoder.decode(chunk, room)
        body += decoder.flush(limit - len(body))
    except OverBudget:
        raise too_large from None
    if len(body) > limit:
        raise too_large
    return HttpResponse(status, headers, bytes(body))


@cache
def _ssl_context(trust_env: bool) -> ssl.SSLContext:
    """Loading the CA bundle costs 25-90 ms: once per process, not once per client (nor inside a search)."""
    import httpx2

    return httpx2.create_ssl_context(trust_env=trust_env)


class PoolLimits(NamedTuple):
    """The engine clients' connections (httpx2's ``Limits`` names, which its client is given as they are)."""

    max_connections: int
    max_keepalive_connections: int
    keepalive_expiry: float


class Transport:
    """The process's HTTP client. Use as ``async with Transport() as t`` or call ``aclose`` yourself."""

    def __init__(
        self,
        *,
        proxy: str | None = None,
        trust_env: bool = True,
        impersonate: bool = True,
        max_bytes: int = DEFAULT_MAX_BYTES,
        verify: bool = True,
        mock: httpx2.AsyncBaseTransport | None = None,
        connections: int = DEFAULT_CONNECTIONS,
        idle_connections: int = DEFAULT_IDLE_CONNECTIONS,
        keepalive_s: float = DEFAULT_KEEPALIVE_S,
    ) -> None:
        if impersonate and importlib.util.find_spec("curl_cffi") is None:
            raise ImpersonationUnavailable()
        self.proxy = proxy
        self.trust_env = trust_env
        self.impersonate = impersonate
        self.max_bytes = max_bytes
        self._verify = verify
        self._mock = mock
        self.limits = PoolLimits(connections, idle_connections, keepalive_s)
        self._curl: dict[str, Any] = {}  # one curl client per impersonated browser release, "" the plain one
        # The loop the clients send on, bound on the first send.
        self._loop: asyncio.AbstractEventLoop | None = None
        # Where httpx2 sends, its client is built now, so the fan-out's first engine task does not build it while
        # the others wait; where libcurl sends everything, never (its import and CA bundle are ~9 MB).
        self._client: httpx2.AsyncClient | None = None if impersonate and mock is None else self._new_client()

    def __repr__(self) -> str:
        # The proxy URL can carry a password; show only whether there is one.
        return f"Transport(proxy={'set' if self.proxy else None}, impersonate={self.impersonate})"

    async def __aenter__(self) -> Transport:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def _new_client(self) -> httpx2.AsyncClient:
        import httpx2

        return httpx2.AsyncClient(
            http2=http2_available(),
            proxy=self.proxy,
            trust_env=self.trust_env,
            verify=_ssl_context(self.trust_env) if self._verify else False,
            transport=self._mock,
            timeout=httpx2.Timeout(DEFAULT_TIMEOUT_S),
            limits=httpx2.Limits(**self.limits._asdict()),
        )

    @property
    def client(self) -> httpx2.AsyncClient:
        if self._client is None:  # first used, or used again after aclose()
            self._client = self._new_client()
        return self._client

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()
        await self._close_curl_clients()

    async def _close_curl_clients(self) -> None:
        clients, self._curl = self._curl, {}
        for curl_client in clients.values():
            await curl_client.close()

    async def _on_running_loop(self) -> None:
        """Clients for the running loop. One source may serve several ``asyncio.run`` calls (each
        ``serpfuse.search`` is one); clients made on a loop that has ended would send nothing (every engine
        timed out, then cooled down), so they are closed and made anew."""
        loop, ended = asyncio.get_running_loop(), self._loop
        if loop is ended:
            return
        if ended is not None and not ended.is_closed():
            raise RuntimeError("this transport is in use on another event loop: open one source per loop")
        self._loop = loop
        if ended is None:
            return
        await self._close_curl_clients()
        if self._client is not None:
            # Its connections belong to the ended loop and cannot be closed from this one; they go with it.
            self._client = self._new_client()

    @functools.cached_property
    def profiles(self) -> tuple[str, ...]:
        """The releases to rotate among, looked up on first use: importing curl_cffi takes most of a second,
        which a command that sends nothing (``serpfuse engines``) should not pay."""
        return browser_profiles() if self.impersonate else ()

    def pick_profile(self) -> str | None:
        """A browser release to impersonate for one request (or one multi-step call); None without impersonation."""
        return random.choice(self.profiles) if self.profiles else None

    async def send(
        self,
        spec: RequestSpec,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        max_bytes: int | None = None,
        read_error_body: bool = True,
        browser: bool = False,
        follow_redirects: bool = False,
        profile: str | None = None,
        connect_to: str | None = None,
    ) -> HttpResponse:
        """Send ``spec``; the body of a non-2xx answer is left unread when ``read_error_body`` is False.

        ``browser`` marks an HTML engine: browser headers, and the impersonating client when enabled, as
        ``profile`` (a curl_cffi target) or a release picked at random.
        Redirects are followed only when asked: httpx keeps custom key headers on a cross-host redirect.
        Raises ``EngineError`` (``EngineTimeout``, ``ResponseTooLarge``...) and nothing else for network trouble.
        ``max_bytes`` narrows the transport's own cap for this call; it cannot widen it (curl holds every
        transfer to the transport's). ``connect_to``: the address the URL's host was checked at (a redirect
        hop); the connection goes there, never to a second resolution of the name (``sources.pinning``).
        """
        if max_bytes is not None and max_bytes > self.max_bytes:
            raise ValueError(f"max_bytes {max_bytes} is over the transport's cap ({self.max_bytes})")
        limit = self.max_bytes if max_bytes is None else max_bytes
        spec = _credentials_in_header(spec)
        # A dead proxy fails every engine alike; saying so saves a user from blaming the engines.
        host = f"{_host(spec.url)} via proxy" if self.proxy else _host(spec.url)
        await self._on_running_loop()
        failure: EngineError | None = None
        try:
            async with asyncio.timeout(timeout_s):
                if browser and self.impersonate:
                    # The first pick imports curl_cffi: in a thread, so the other engines' calls go on meanwhile.
                    return await self._send_curl(
                        spec,
                        profile or await asyncio.to_thread(self.pick_profile),
                        timeout_s,
                        limit,
                        read_error_body,
                        follow_redirects,
                        connect_to=connect_to,
                    )
                if self.impersonate:
                    # curl_cffi is installed: plain requests go through libcurl too, un-impersonated: under a
                    # third of httpx2's CPU per request under a fan-out (BENCHMARKS.md "Performance").
                    return await self._send_curl(
                        spec, None, timeout_s, limit, read_error_body, follow_redirects, browser, connect_to
                    )
                return await self._send_httpx(
                    spec, timeout_s, limit, read_error_body, browser, follow_redirects, connect_to
                )
        except TimeoutError:
            failure = EngineTimeout(f"no complete answer within {timeout_s:g} s ({host})")
        except UndecodableBody:
            failure = EngineError(f"undecodable response body ({host})")
        except EngineError:
            raise
        except Exception as exc:
            mapped = _client_failure(exc, host, self.max_bytes)
            if mapped is None:
                raise
            failure = mapped
        # Raised outside the except blocks, so the original exception (which quotes the URL) is not chained.
        raise failure

    async def _send_httpx(
        self,
        spec: RequestSpec,
        timeout_s: float,
        limit: int,
        read_error_body: bool,
        browser: bool,
        follow_redirects: bool,
        connect_to: str | None = None,
    ) -> HttpResponse:

        if connect_to is not None and self._mock is None and not self.proxy:  # a proxy resolves for itself
            async with self._pinned_client(spec.url, connect_to) as client:
                return await self._stream_httpx(
                    client, spec, timeout_s, limit, read_error_body, browser, follow_redirects
                )
        return await self._stream_httpx(
            self.client, spec, timeout_s, limit, read_error_body, browser, follow_redirects
        )

    def _pinned_client(self, url: str, address: str) -> httpx2.AsyncClient:
        """A client for one hop whose connection goes to ``address`` alone (TLS and Host still by name)."""
        import ipaddress

        import httpx2

        from serpfuse.sources.pinning import PinnedBackend, PinnedTransport

        host = (urlsplit(url).hostname or "").lower()
        context = _ssl_context(self.trust_env) if self._verify else httpx2.create_ssl_context(verify=False)
        backend = PinnedBackend(host, ipaddress.ip_address(address))
        return httpx2.AsyncClient(transport=PinnedTransport(backend, context), proxy=None, trust_env=False)

    async def _stream_httpx(
        self,
        client: httpx2.AsyncClient,
        spec: RequestSpec,
        timeout_s: float,
        limit: int,
        read_error_body: bool,
        browser: bool,
        follow_redirects: bool,
    ) -> HttpResponse:
        import httpx2

        async with client.stream(
            spec.method.upper(),
            spec.url,
            params=spec.params,
            headers=_headers_for(spec, browser),
            data=spec.data,
            json=spec.json,
            timeout=httpx2.Timeout(timeout_s),
            follow_redirects=follow_redirects,
        ) as response:
            headers = _joined_headers(response.headers.multi_items())
            # The body as sent, decoded by _read_capped within the size cap: httpx's own decoders give a whole
            # chunk's output at once, however large (a 64 KB deflate chunk can be 64 MB).
            return await _read_capped(
                response.status_code, headers, response.aiter_raw, limit, read_error_body, encoded=True
            )

    def _curl_client(self, profile: str | None) -> Any:
        """The client of one impersonated release, or (``None``) the plain one that sends only our headers."""
        key = profile or ""
        client = self._curl.get(key)
        if client is None:
            from serpfuse.sources.curl_client import (
                CurlClient,  # on first use: a run sending nothing never loads it
            )

            client = self._curl[key] = CurlClient(
                profile=profile,
                proxy=self.proxy,
                env_proxies=_uppercase_http_proxy() if self.trust_env and not self.proxy else None,
                trust_env=self.trust_env,
                verify=self._verify,
                # Transfers at once; more wait for a handle. Idle connections kept: curl's cache, in C, costs
                # nothing per request however many it holds, unlike httpcore's pool.
                max_transfers=self.limits.max_connections or DEFAULT_CONNECTIONS,
                idle_connections=self.limits.max_keepalive_connections or 1,
                keepalive_s=self.limits.keepalive_expiry or 1,
                max_bytes=self.max_bytes,
            )
        return client

    async def _send_curl(
        self,
        spec: RequestSpec,
        profile: str | None,
        timeout_s: float,
        limit: int,
        read_error_body: bool,
        follow_redirects: bool,
        browser: bool = True,
        connect_to: str | None = None,
    ) -> HttpResponse:
        from serpfuse.sources.curl_client import BodyTooLarge

        client = self._curl_client(profile)
        headers: Mapping[str, str | None]
        if profile is None:
            # The plain client: our own headers, cookies in a header as on the httpx2 path.
            headers, cookies, accept_encoding = _headers_for(spec, browser), None, ACCEPT_ENCODING
        else:
            # The impersonated browser sends its own headers in its own order (User-Agent, client hints, Accept,
            # Sec-Fetch-*); curl replaces a value in place, so only the engine's headers and the navigation's
            # Sec-Fetch-Site go on top. Cookies go through the client's jar, so one a site sets on the way
            # (Yahoo's YBV, on a redirect hop) rides along on the next hop and the next search, as in a browser.
            headers = _impersonated_headers(spec, profile)
            cookies, accept_encoding = spec.cookies, "gzip, deflate, br"  # the browser's own replaces it
        too_large = False
        try:
            answer = await client.request(
                spec.method,
                spec.url,
                params=spec.params,
                headers=headers,
                cookies=cookies,
                data=spec.data,
                json_body=spec.json,
                timeout_s=timeout_s,
                limit=limit,
                read_error_body=read_error_body,
                follow_redirects=follow_redirects,
                accept_encoding=accept_encoding,
                connect_to=connect_to,
            )
        except BodyTooLarge:
            too_large = True
        if too_large:
            raise ResponseTooLarge(f"response too large (over {limit} bytes)")
        body = answer.body

        async def chunks() -> AsyncIterator[bytes]:
            if body:
                yield body

        return await _read_capped(
            answer.status, _joined_headers(answer.headers()), chunks, limit, read_error_body, encoded=True
        )

    def bind(
        self, *, on_response: Callable[[HttpResponse], None] | None = None, **options: Any
    ) -> BoundClient:
        """An ``EngineClient`` for a multi-step engine's ``run``, with this call's send options fixed;
        ``on_response`` sees every response it receives. A browser call keeps one impersonated release for
        all its steps, as one browser would (a token from the first page is tied to its fingerprint)."""
        if options.get("browser") and self.impersonate and not options.get("profile"):
            options["profile"] = self.pick_profile()
        return BoundClient(self, options, on_response)


def _uppercase_http_proxy() -> dict[str, str] | None:
    """``HTTP_PROXY`` for plain-http URLs, which libcurl ignores (it reads only ``http_proxy``, against
    httpoxy) and httpx2 honours: a proxy set that way keeps carrying the requests it carried before."""
    import os

    upper = os.environ.get("HTTP_PROXY")
    return {"http": upper} if upper and not os.environ.get("http_proxy") else None


class BoundClient:
    """``send(spec) -> (status, headers, body)`` with fixed options; the ``EngineClient`` of engines.base."""

    def __init__(
        self,
        transport: Transport,
        options: Mapping[str, Any],
        on_response: Callable[[HttpResponse], None] | None = None,
    ) -> None:
        self._transport = transport
        self._options = dict(options)
        self._on_response = on_response

    async def send(self, spec: RequestSpec) -> tuple[int, Mapping[str, str], bytes]:
        response = await self._transport.send(spec, **self._options)
        if self._on_response is not None:
            self._on_response(response)
        return response
