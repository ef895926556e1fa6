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
import functools
import importlib.util
import random
import ssl
from collections.abc import AsyncIterator, Callable, Mapping
from functools import cache
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import urlsplit

from serpfuse.engines.base import EngineError, EngineTimeout, RequestSpec
from serpfuse.sources.capped_body import HttpResponse, read_capped
from serpfuse.sources.content_coding import UndecodableBody
from serpfuse.sources.request_headers import (
    ACCEPT_ENCODING,
    browser_profiles,
    credentials_in_header,
    headers_for,
    impersonated_headers,
    joined_headers,
)
from serpfuse.sources.transport_errors import (
    ImpersonationUnavailable,
    ResponseTooLarge,
    client_failure,
    host_of,
)
from serpfuse.sources.transport_limits import (
    DEFAULT_CONNECTIONS,
    DEFAULT_IDLE_CONNECTIONS,
    DEFAULT_KEEPALIVE_S,
    DEFAULT_MAX_BYTES,
)

if TYPE_CHECKING:  # imported where httpx2 sends (impersonation off): the default path never loads it
    import httpx2

DEFAULT_TIMEOUT_S = 15.0


def http2_available() -> bool:
    return importlib.util.find_spec("h2") is not None


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
        spec = credentials_in_header(spec)
        # A dead proxy fails every engine alike; saying so saves a user from blaming the engines.
        host = f"{host_of(spec.url)} via proxy" if self.proxy else host_of(spec.url)
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
            mapped = client_failure(exc, host, self.max_bytes)
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
            headers=headers_for(spec, browser),
            data=spec.data,
            json=spec.json,
            timeout=httpx2.Timeout(timeout_s),
            follow_redirects=follow_redirects,
        ) as response:
            headers = joined_headers(response.headers.multi_items())
            # The body as sent, decoded by read_capped within the size cap: httpx's own decoders give a whole
            # chunk's output at once, however large (a 64 KB deflate chunk can be 64 MB).
            return await read_capped(
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
            headers, cookies, accept_encoding = headers_for(spec, browser), None, ACCEPT_ENCODING
        else:
            # The impersonated browser sends its own headers in its own order (User-Agent, client hints, Accept,
            # Sec-Fetch-*); curl replaces a value in place, so only the engine's headers and the navigation's
            # Sec-Fetch-Site go on top. Cookies go through the client's jar, so one a site sets on the way
            # (Yahoo's YBV, on a redirect hop) rides along on the next hop and the next search, as in a browser.
            headers = impersonated_headers(spec, profile)
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

        return await read_capped(
            answer.status, joined_headers(answer.headers()), chunks, limit, read_error_body, encoded=True
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
