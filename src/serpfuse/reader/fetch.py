"""The guarded fetcher: one GET that cannot be turned against the machine it runs on.

Each hop: ``guard.parse_target`` checks scheme, credentials and port; the host is resolved once and every
address checked (``guard.check_address``); the connection then goes to that checked address and nowhere else:
the client's network backend is pinned to it, so no second resolution happens (DNS rebinding has nothing to
rebind), while TLS SNI, certificate checks and the Host header still use the name. Redirects are followed by
hand, each hop checked the same way, up to ``Policy.max_redirects``.

The whole call (every hop, headers and body) runs under one deadline, so a server that drips a byte a second
cannot hold it. Bodies are read raw and decompressed here with a bound on the output, so a gzip bomb stops at
``max_bytes`` after decompressing that much and no more. The media type is checked before the body is read.
"""

from __future__ import annotations

import asyncio
import re
import socket
import ssl
import zlib
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from functools import cache
from typing import Protocol
from urllib.parse import urljoin

import httpx2

from serpfuse.reader.guard import IPAddress, Policy, Refused, Target, check_address, parse_target
from serpfuse.reader.models import ReadError, Unsupported
from serpfuse.sources.pinning import Dial, PinnedBackend, PinnedTransport, direct
from serpfuse.version import __version__

USER_AGENT = f"serpfuse/{__version__} (page reader; +https://pypi.org/project/serpfuse/)"
ROBOTS_AGENT = "serpfuse"
DEFAULT_MAX_BYTES = 5 * 1024 * 1024
DEFAULT_TIMEOUT_S = 15.0
REDIRECTS = frozenset({301, 302, 303, 307, 308})
# What the reader reads. Anything else is refused before its body is downloaded.
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
TEXT_TYPES = frozenset({"text/plain", "text/markdown", "text/x-markdown"})
PDF_TYPES = frozenset({"application/pdf", "application/x-pdf"})
READABLE_TYPES = HTML_TYPES | TEXT_TYPES | PDF_TYPES
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)


@dataclass(frozen=True)
class Limits:
    max_bytes: int = DEFAULT_MAX_BYTES  # after decompression
    timeout_s: float = DEFAULT_TIMEOUT_S  # the whole fetch, every hop


@dataclass(frozen=True)
class Fetched:
    url: str  # the last hop's URL
    status: int
    content_type: str  # media type, lowercase, no parameters ("" when the server sent none)
    charset: str | None
    body: bytes


class Resolver(Protocol):
    async def resolve(self, host: str, port: int) -> list[IPAddress]: ...


class SystemResolver:
    """The operating system's resolver (getaddrinfo), off the event loop."""

    async def resolve(self, host: str, port: int) -> list[IPAddress]:
        import ipaddress

        try:
            infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except socket.gaierror:
            raise ReadError(f"cannot resolve {host}") from None
        return list(dict.fromkeys(ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos))


class FetchTooLarge(ReadError):
    pass


class HttpStatusError(ReadError):
    def __init__(self, host: str, status: int) -> None:
        super().__init__(f"{host} answered HTTP {status}")
        self.page_status = status  # the page's answer; ours is 502 (http_status)


@cache
def _ssl_context() -> ssl.SSLContext:
    return httpx2.create_ssl_context()


# --- one fetch ----------------------------------------------------------------------------------------------


async def resolve_checked(target: Target, resolver: Resolver, policy: Policy) -> IPAddress:
    """Resolve once; refuse when any answer is not fetchable (a name must not mix public and private)."""
    if target.literal is not None:
        return target.literal
    addresses = await resolver.resolve(target.host, target.port)
    if not addresses:
        raise ReadError(f"cannot resolve {target.host}")
    for address in addresses:
        try:
            check_address(address, policy)
        except Refused as exc:
            raise Refused(f"{exc} ({target.host} resolves to it)") from None
    return addresses[0]


def media_type(header: str | None) -> tuple[str, str | None]:
    """``text/html; charset=ISO-8859-1`` -> ("text/html", "iso-8859-1")."""
    if not header:
        return "", None
    kind, _, params = header.partition(";")
    charset = None
    for param in params.split(";"):
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip("\"'").lower()
    return kind.strip().lower(), charset


class _Decoder:
    """gzip/deflate/identity decoding with a hard bound on what comes out."""

    def __init__(self, encoding: str, limit: int):
        self.limit = limit
        self.size = 0
        encoding = encoding.strip().lower()
        if encoding in ("", "identity"):
            self._z = None
        elif encoding in ("gzip", "x-gzip"):
            self._z = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif encoding == "deflate":
            self._z = zlib.decompressobj(32 + zlib.MAX_WBITS)  # zlib-wrapped (what servers send)
        else:
            raise ReadError(f"unsupported content encoding {encoding!r}")

    def feed(self, chunk: bytes) -> bytes:
        if self._z is None:
            out = chunk
        else:
            try:
                # never more than one byte past the limit, however small the chunk that asked for it
                out = self._z.decompress(chunk, self.limit - self.size + 1)
            except zlib.error:
                raise ReadError("the page's compressed body is corrupt") from None
        self.size += len(out)
        if self.size > self.limit:
            raise FetchTooLarge(f"the page is larger than {self.limit:,} bytes (after decompression)")
        return out


async def _get_once(
    target: Target,
    address: IPAddress,
    limits: Limits,
    accept: frozenset[str],
    dial: Dial,
) -> tuple[Fetched, str | None]:
    """One request to the checked address. Returns the response and, for a redirect, its Location."""
    backend = PinnedBackend(target.host, address, dial)
    headers = {
        "User-Agent": USER_AGENT,
        "Accept": "text/html,application/xhtml+xml,application/pdf;q=0.9,text/plain;q=0.8,*/*;q=0.1",
        "Accept-Encoding": "gzip, deflate",
    }
    async with httpx2.AsyncClient(
        transport=PinnedTransport(backend, _ssl_context()),
        follow_redirects=False,
        trust_env=False,
        timeout=None,
    ) as client:
        try:
            async with client.stream("GET", target.url, headers=headers) as response:
                if response.status_code in REDIRECTS and response.headers.get("location"):
                    return Fetched(target.url, response.status_code, "", None, b""), response.headers[
                        "location"
                    ]
                if response.status_code >= 400:
                    raise HttpStatusError(target.host, response.status_code)
                kind, charset = media_type(response.headers.get("content-type"))
                if kind and kind not in accept:
                    raise Unsupported(
                        f"unsupported content type {kind} (the reader reads HTML, PDF and plain text)"
                    )
                declared = response.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > limits.max_bytes:
                    raise FetchTooLarge(f"the page is larger than {limits.max_bytes:,} bytes")
                decoder = _Decoder(response.headers.get("content-encoding", ""), limits.max_bytes)
                body = bytearray()
                async for chunk in response.aiter_raw():
                    body += decoder.feed(chunk)
                return Fetched(str(response.url), response.status_code, kind, charset, bytes(body)), None
        except httpx2.TimeoutException:
            raise ReadError(f"{target.host} timed out") from None
        except httpx2.HTTPError as exc:
            raise ReadError(f"cannot reach {target.host}: {type(exc).__name__}") from None


async def fetch(
    url: str,
    *,
    policy: Policy,
    resolver: Resolver | None = None,
    limits: Limits = Limits(),
    accept: Iterable[str] = READABLE_TYPES,
    dial: Dial = direct,
    before_hop: Callable[[Target], Awaitable[None]] | None = None,
) -> Fetched:
    """GET ``url`` under the policy, following checked redirects. Raises ``ReadError`` (``Refused`` for the
    policy) with a one-line message; never connects to an address it has not checked."""
    resolver = resolver or SystemResolver()
    accepted = frozenset(accept)
    try:
        async with asyncio.timeout(limits.timeout_s):
            for _ in range(policy.max_redirects + 1):
                target = parse_target(url, policy)
                if before_hop:
                    await before_hop(target)
                address = await resolve_checked(target, resolver, policy)
                fetched, location = await _get_once(target, address, limits, accepted, dial)
                if location is None:
                    return fetched
                url = urljoin(target.url, location)
    except TimeoutError:
        raise ReadError(f"the page took longer than {limits.timeout_s:g} s") from None
    raise ReadError(f"more than {policy.max_redirects} redirects")


def decode(fetched: Fetched) -> str:
    """The body as text: the header's charset, else the page's <meta charset>, else detected."""
    from charset_normalizer import from_bytes

    body = fetched.body
    for charset in (fetched.charset, _meta_charset(body)):
        if charset:
            try:
                return body.decode(charset)
            except (LookupError, UnicodeDecodeError):
                continue
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        best = from_bytes(body[:200_000]).best()
        return body.decode(best.encoding if best else "utf-8", errors="replace")


def _meta_charset(body: bytes) -> str | None:
    m = _META_CHARSET.search(body[:4096])
    return m.group(1).decode("ascii", "replace").lower() if m else None
