"""libcurl driven directly (curl_cffi's easy handles on its asyncio multi), for the transport's engine requests.

Why not curl_cffi's ``AsyncSession`` (measured 2026-12-06 on curl_cffi 0.17, ``python -m benchmarks.client_cost``):
the session now costs the same CPU per request (0.37-0.39 ms against 0.37-0.42 ms here, 500 at once), but it
cannot stop what an engine request must stop. A call cancelled before the answer's headers (the fan-out's
deadline, every slow engine) leaves the session's transfer running until its own timeout; an error answer's body
(which may quote credentials) is downloaded whole before its status can be acted on; a capped body is read to its
end by the stream's close. Here a request sets the options it needs, the header callback sees the status first,
the body callback refuses an error body and stops at the call's cap, and cancellation takes the handle out of the
multi at once.

What this relies on in curl_cffi (pinned to its minor in pyproject.toml): ``Curl.setopt(HTTPHEADER)`` appends to
the handle's own header list, which only ``clean_handles_and_buffers()`` frees (``reset()`` keeps it), so a
handle is emptied with both before reuse, as curl_cffi's own session does; a handle once reused without it sent
every earlier request's headers, API keys included, to the next host. tests/test_wire.py and
test_transport_impersonate.py's reused-handle test check it.

One ``CurlClient`` per impersonated browser release (or one plain, un-impersonated). A browser client keeps the
cookies sites set, as that browser would; the plain one is stateless, as an API client should be.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.cookiejar
import json
import math
import urllib.request
from collections.abc import Mapping
from email.message import Message
from typing import Any
from urllib.parse import urlencode, urlsplit

from curl_cffi import Curl, CurlInfo, CurlOpt
from curl_cffi.aio import AsyncCurl
from curl_cffi.const import CurlMOpt
from curl_cffi.curl import CURL_WRITEFUNC_ERROR
from curl_cffi.requests.impersonate import resolve_latest_browser_type
from curl_cffi.requests.utils import requote_uri, update_url_params

from serpfuse.errors import SerpfuseError

MAX_REDIRECTS = 30  # only when a call asks curl to follow (live engines follow hop by hop themselves)


class BodyTooLarge(SerpfuseError):
    """The body passed the call's cap; the transfer was stopped there."""


class Answer:
    """What one transfer brought back: the last response's status, its header lines, the body read."""

    __slots__ = ("body", "header_lines", "skipped_body", "status")

    def __init__(self, status: int, header_lines: list[bytes], body: bytes, skipped_body: bool) -> None:
        self.status, self.header_lines, self.body, self.skipped_body = (
            status,
            header_lines,
            body,
            skipped_body,
        )

    def headers(self) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        for raw in self.header_lines:
            line = raw.decode("utf-8", "replace")
            if line[:1] in " \t" and out:  # an obsolete folded continuation
                name, value = out[-1]
                out[-1] = (name, f"{value} {line.strip()}")
                continue
            name, sep, value = line.partition(":")
            if sep:
                out.append((name.strip(), value.strip()))
        return out


class _Transfer:
    """One request's callbacks: the header lines of the last response, its body up to ``limit`` bytes."""

    __slots__ = ("blocks", "body", "limit", "read_error_body", "received", "skipped", "status", "too_large")

    def __init__(self, limit: int, read_error_body: bool) -> None:
        self.limit, self.read_error_body = limit, read_error_body
        self.blocks: list[list[bytes]] = []  # one list of header lines per response (redirect hops included)
        self.body: list[bytes] = []
        self.received, self.status = 0, 0
        self.skipped = self.too_large = False

    def on_header(self, line: bytes) -> int:
        if line.startswith(b"HTTP/"):
            self.blocks.append([])
            try:
                self.status = int(line.split(None, 2)[1])
            except (IndexError, ValueError):
                self.status = 0
        elif line.strip() and self.blocks:
            self.blocks[-1].append(line.rstrip(b"\r\n"))
        return len(line)

    def on_body(self, chunk: bytes) -> int:
        if not self.read_error_body and not 200 <= self.status < 300:
            self.skipped = True  # the body of an error answer may quote credentials: not read at all
            return CURL_WRITEFUNC_ERROR
        self.received += len(chunk)
        if self.received > self.limit:
            self.too_large = True
            return CURL_WRITEFUNC_ERROR
        self.body.append(chunk)
        return len(chunk)


class _Response:
    """Just enough of a urllib response for ``CookieJar.extract_cookies``."""

    def __init__(self, set_cookies: list[str]) -> None:
        self._message = Message()
        for value in set_cookies:
            self._message["Set-Cookie"] = value

    def info(self) -> Message:
        return self._message


class CurlClient:
    """Requests through libcurl's multi on the running loop: at most ``max_transfers`` at once (more wait),
    ``idle_connections`` kept alive in curl's cache for ``keepalive_s``."""

    def __init__(
        self,
        *,
        profile: str | None,
        proxy: str | None,
        env_proxies: Mapping[str, str] | None,
        trust_env: bool,
        verify: bool,
        max_transfers: int,
        idle_connections: int,
        keepalive_s: float,
        max_bytes: int,
    ) -> None:
        self.profile = resolve_latest_browser_type(profile) if profile else None
        self._proxy, self._env_proxies, self._trust_env = proxy, env_proxies or {}, trust_env
        self._verify, self._max_bytes = verify, max_bytes
        self._keepalive_s = max(1, round(keepalive_s or 1))
        self._idle_connections = idle_connections or 1
        self._slots = asyncio.Semaphore(max_transfers)
        self._handles: list[Curl] = []
        self._multi: AsyncCurl | None = None
        self.jar = http.cookiejar.CookieJar() if profile else None
        self.closed = False

    def _acurl(self) -> AsyncCurl:
        if self._multi is None:
            self._multi = AsyncCurl()
            self._multi.setopt(CurlMOpt.MAXCONNECTS, self._idle_connections)
        return self._multi

    async def close(self) -> None:
        self.closed = True
        multi, self._multi = self._multi, None
        if multi is not None:
            if multi.loop.is_closed():
                # Its loop has ended (another asyncio.run): closed from this one, whose clean-up of timers and
                # readers finds nothing of the multi's to remove, where the closed loop would refuse the calls.
                multi.loop = asyncio.get_running_loop()
            await multi.close()
        handles, self._handles = self._handles, []
        for handle in handles:
            handle.close()

    async def request(
        self,
        method: str,
        url: str,
        *,
        params: Mapping[str, Any] | None,
        headers: Mapping[str, str | None],
        cookies: Mapping[str, str] | None,
        data: Mapping[str, Any] | None,
        json_body: Any,
        timeout_s: float,
        limit: int,
        read_error_body: bool,
        follow_redirects: bool,
        accept_encoding: str | None,
        connect_to: str | None = None,
    ) -> Answer:
        """One transfer; raises ``BodyTooLarge`` past ``limit`` bytes, curl_cffi's ``CurlError`` for the
        network's failures. Cancellation stops the transfer at once."""
        if params:
            url = update_url_params(url, dict(params))
        url = requote_uri(url)  # what curl_cffi's session sends, so engines see the same URLs
        async with self._slots:
            curl = self._handles.pop() if self._handles else Curl()
            transfer = _Transfer(limit, read_error_body)
            try:
                self._set_options(curl, transfer, method, url, headers, cookies, data, json_body, timeout_s)
                if follow_redirects:
                    curl.setopt(CurlOpt.FOLLOWLOCATION, 1)
                    curl.setopt(CurlOpt.MAXREDIRS, MAX_REDIRECTS)
                if accept_encoding is not None:
                    curl.setopt(CurlOpt.ACCEPT_ENCODING, accept_encoding.encode())
                if connect_to is not None:  # the checked address, never a second resolution of the name
                    curl.setopt(CurlOpt.RESOLVE, [_resolve_entry(url, connect_to)])
                if self.profile is not None:
                    curl.impersonate(self.profile, default_headers=True)
                acurl = self._acurl()
                future = acurl.add_handle(curl)
                try:
                    await future
                except BaseException:
                    with contextlib.suppress(Exception):  # a finished transfer was already taken out
                        acurl.remove_handle(curl)
                    if not (transfer.skipped or transfer.too_large):
                        raise
                if transfer.too_large:  # raised out here, so curl's error (it quotes the URL) is not chained
                    raise BodyTooLarge()
                if transfer.skipped:
                    return Answer(transfer.status, _last(transfer.blocks), b"", True)
                status = int(curl.getinfo(CurlInfo.RESPONSE_CODE))  # type: ignore[arg-type]
                answer = Answer(status, _last(transfer.blocks), b"".join(transfer.body), False)
                if self.jar is not None:
                    self._keep_cookies(url, transfer.blocks)
                return answer
            finally:
                # A handle is reused, so nothing of this request may stay on it: curl_cffi appends each
                # HTTPHEADER to the handle's own header list, which only clean_handles_and_buffers() frees
                # (reset() leaves it; a kept list sent every earlier request's headers, keys included, to
                # the next host). curl_cffi's own session releases a handle the same way.
                curl.clean_handles_and_buffers()
                curl.reset()
                self._handles.append(curl)

    def _set_options(
        self,
        curl: Curl,
        transfer: _Transfer,
        method: str,
        url: str,
        headers: Mapping[str, str | None],
        cookies: Mapping[str, str] | None,
        data: Mapping[str, Any] | None,
        json_body: Any,
        timeout_s: float,
    ) -> None:
        method = method.upper()
        # "Name:" drops a header the impersonated release would send (None), "Name;" sends it empty ("").
        lines = [
            f"{name}:" if value is None else f"{name}: {value}" if value else f"{name};"
            for name, value in headers.items()
        ]
        typed = any(name.lower() == "content-type" for name in headers)
        body: bytes | None = None
        if json_body is not None:
            body = json.dumps(json_body, separators=(",", ":")).encode()
            lines += [] if typed else ["Content-Type: application/json"]
        elif data is not None:
            body = urlencode(data, doseq=True).encode()
            if method != "POST" and not typed:  # curl names a POST's form itself
                lines.append("Content-Type: application/x-www-form-urlencoded")
        if method == "POST":
            curl.setopt(CurlOpt.POST, 1)
        elif method != "GET":
            curl.setopt(CurlOpt.CUSTOMREQUEST, method.encode())
        if body is not None or method in ("POST", "PUT", "PATCH"):
            curl.setopt(CurlOpt.POSTFIELDS, body or b"")
            curl.setopt(CurlOpt.POSTFIELDSIZE, len(body or b""))
        lines.append("Expect:")  # never wait for a 100-continue
        curl.setopt(CurlOpt.URL, url.encode())
        curl.setopt(CurlOpt.HTTPHEADER, [line.encode() for line in lines])
        curl.setopt(CurlOpt.HEADERFUNCTION, transfer.on_header)
        curl.setopt(CurlOpt.WRITEFUNCTION, transfer.on_body)
        curl.setopt(CurlOpt.TIMEOUT_MS, max(1, math.ceil(timeout_s * 1000)))
        # The body as sent, decoded by the transport within its cap: curl's own decoder inflates a whole read at
        # once (a 1.6 KB brotli bomb is 1 GiB in one go) before anyone can count it.
        curl.setopt(CurlOpt.HTTP_CONTENT_DECODING, 0)
        # libcurl ends a body past the transport's cap itself, in C, before Python sees its bytes.
        curl.setopt(CurlOpt.MAXFILESIZE_LARGE, self._max_bytes)
        curl.setopt(CurlOpt.MAXAGE_CONN, self._keepalive_s)
        if not self._verify:
            curl.setopt(CurlOpt.SSL_VERIFYPEER, 0)
            curl.setopt(CurlOpt.SSL_VERIFYHOST, 0)
        self._set_proxy(curl, url)
        if self.jar is not None:
            # A browser's jar: curl's cookie engine carries a cookie set on a redirect hop to the next hop; the
            # jar (cleared from the handle first: it is shared by every host) carries it into later calls.
            curl.setopt(CurlOpt.COOKIEFILE, b"")
            curl.setopt(CurlOpt.COOKIELIST, b"ALL")
            sent = {**self._jar_cookies(url), **(cookies or {})}  # the engine's own cookies win
            if sent:
                curl.setopt(CurlOpt.COOKIE, "; ".join(f"{k}={v}" for k, v in sent.items()).encode())

    def _set_proxy(self, curl: Curl, url: str) -> None:
        scheme = urlsplit(url).scheme
        proxy = self._proxy or self._env_proxies.get(scheme)
        if proxy:
            # A new connection when the proxy's credentials change, and no TLS session carried across proxies.
            curl.setopt(CurlOpt.PROXY_CREDENTIAL_NO_REUSE, 1)
            curl.setopt(CurlOpt.PROXY, proxy.encode())
            if scheme == "https" and not proxy.startswith("socks"):
                curl.setopt(CurlOpt.HTTPPROXYTUNNEL, 1)
        if not self._trust_env:
            # libcurl reads http_proxy, https_proxy, all_proxy and no_proxy itself unless told otherwise.
            if not proxy:
                curl.setopt(CurlOpt.PROXY, b"")
            curl.setopt(CurlOpt.NOPROXY, b"")

    def _jar_cookies(self, url: str) -> dict[str, str]:
        assert self.jar is not None
        request = urllib.request.Request(url)
        self.jar.add_cookie_header(request)
        header = request.get_header("Cookie") or ""
        return dict(part.split("=", 1) for part in header.split("; ") if "=" in part)

    def _keep_cookies(self, url: str, blocks: list[list[bytes]]) -> None:
        assert self.jar is not None
        set_cookies = [
            line.split(b":", 1)[1].strip().decode("latin-1")
            for block in blocks
            for line in block
            if line[:11].lower() == b"set-cookie:"
        ]
        if set_cookies:
            self.jar.extract_cookies(_Response(set_cookies), urllib.request.Request(url))  # type: ignore[arg-type]


def _resolve_entry(url: str, address: str) -> str:
    """``host:port:address`` as libcurl's RESOLVE reads it (an IPv6 address in brackets)."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
    return f"{parts.hostname}:{port}:{f'[{address}]' if ':' in address else address}"


def _last(blocks: list[list[bytes]]) -> list[bytes]:
    return blocks[-1] if blocks else []
