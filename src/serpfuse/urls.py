"""URL canonicalisation: unwrap engine redirectors, normalise for display, fold for dedup, registrable domains;
sending an engine's request to an operator's base URL; whether an address is public (the reader's fetches and the
redirects engines answer with are both held to it).

The heavy lifting (percent-encoding, query sort, IDNA of the host, dot segments) is w3lib's `canonicalize_url`;
the Public Suffix List is `publicsuffixlist`'s bundled copy, so nothing here touches the network.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import os
import re
import socket
from functools import cache, lru_cache
from types import ModuleType
from typing import TypeGuard
from urllib.parse import parse_qs, unquote, unquote_plus, urlsplit, urlunsplit

from publicsuffixlist import PublicSuffixList
from w3lib.url import canonicalize_url, url_query_cleaner

from serpfuse import data
from serpfuse.data.derived import derived_path, write_whole

_idna: ModuleType | None
try:  # IDNA 2008 with UTS 46 mapping when the package is present; the stdlib codec (IDNA 2003) otherwise
    import idna as _idna
except ImportError:  # pragma: no cover - idna comes with httpx in practice
    _idna = None

_HTTP_SCHEMES = ("http", "https")
_DEFAULT_PORTS = {"http": 80, "https": 443}
_YAHOO_RU = re.compile(r"/RU=([^/]+)/R[KS]=")
# "scheme:" not followed by "//" nor by a port number ("localhost:8080" is a host).
_OPAQUE_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:(?!//)(?!\d)", re.IGNORECASE)
_MAX_UNWRAP = 3  # a redirector may wrap another one (a Bing ck/a around a Google /url); never loop forever


def _load_tracking_params() -> tuple[frozenset[str], tuple[str, ...]]:
    names: set[str] = set()
    prefixes: list[str] = []
    for entry in data.lines("tracking_params.txt"):
        if entry.endswith("*"):
            prefixes.append(entry[:-1])
        else:
            names.add(entry)
    return frozenset(names), tuple(prefixes)


TRACKING_NAMES, TRACKING_PREFIXES = _load_tracking_params()


def is_tracking_param(name: str) -> bool:
    key = name.lower()
    return key in TRACKING_NAMES or key.startswith(TRACKING_PREFIXES)


# --- redirectors -------------------------------------------------------------------------------------------


def _first_param(query: str, *names: str) -> str | None:
    params = parse_qs(query, keep_blank_values=False)
    for name in names:
        for value in params.get(name, ()):
            if value:
                return value
    return None


def _looks_like_web_url(value: str | None) -> TypeGuard[str]:
    return value is not None and value.strip().lower().startswith(("http://", "https://"))


def _host_is(host: str, domain: str) -> bool:
    return host == domain or host.endswith("." + domain)


def _bing_target(query: str) -> str | None:
    # Bing's ck/a carries the target as "a1" + unpadded urlsafe base64 in `u`.
    encoded = _first_param(query, "u")
    if not encoded or not encoded.startswith("a1"):
        return None
    payload = encoded[2:]
    payload += "=" * (-len(payload) % 4)
    return base64.urlsafe_b64decode(payload).decode("utf-8")


def _unwrap_once(url: str) -> str | None:
    """The target of one redirector, or None when `url` is not a known redirector."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    path = parts.path
    if _host_is(host, "bing.com") and path.rstrip("/") == "/ck/a":
        return _bing_target(parts.query)
    # DuckDuckGo's HTML endpoint emits protocol-relative or even host-less links.
    if (_host_is(host, "duckduckgo.com") or not host) and path.rstrip("/") == "/l":
        return _first_param(parts.query, "uddg")
    if _host_is(host, "search.yahoo.com") and "/RU=" in url:
        match = _YAHOO_RU.search(url)
        return unquote(match.group(1)) if match else None
    if (not host or re.fullmatch(r"(www\.)?google\.[a-z.]+", host)) and path == "/url":
        return _first_param(parts.query, "q", "url")
    return None


def unwrap_redirect(url: str) -> str:
    """Unwrap Bing ck/a, DuckDuckGo l/?uddg=, Yahoo RU= and Google /url?q= redirectors; else unchanged.

    Only a target that is itself a web URL is accepted, so a garbled redirector comes back unchanged.
    Never raises.
    """
    current = url
    for _ in range(_MAX_UNWRAP):
        try:
            target = _unwrap_once(current.strip())
        except (ValueError, binascii.Error, UnicodeDecodeError):
            return current
        if not _looks_like_web_url(target):
            return current
        current = target.strip()
    return current


# --- canonical form ----------------------------------------------------------------------------------------


def _encode_host(host: str) -> str:
    """IDNA (punycode) form of a lowercase host; hosts the codecs reject are kept as given."""
    if host.isascii():
        return host
    try:
        return _encode_host_strict(host)
    except UnicodeError:  # idna.IDNAError is a UnicodeError too
        return host


_DNS_LABEL = re.compile(r"[a-z0-9_-]{1,63}")  # hyphens at the ends are kept: some real sites have them


def dns_host(host: str) -> str | None:
    """The form of a lowercase host name that DNS carries (IDNA for a non-ASCII name), or None when the name
    cannot be one: an empty label (``a..b``), a label over 63 or a name over 253 characters, a character no
    resolver encodes (U+2029, a space, ``%``)."""
    try:
        wire = host if host.isascii() else _encode_host_strict(host)
    except UnicodeError:
        return None
    if not wire or len(wire) > 253:
        return None
    return wire if all(_DNS_LABEL.fullmatch(label) for label in wire.split(".")) else None


def _encode_host_strict(host: str) -> str:
    if _idna is not None:
        return _idna.encode(host, uts46=True).decode("ascii")
    return host.encode("idna").decode("ascii")  # pragma: no cover - idna comes with httpx in practice


def _netloc(scheme: str, host: str, port: int | None) -> str:
    if ":" in host:  # an IPv6 literal needs its brackets back
        host = f"[{host}]"
    if port is None or port == _DEFAULT_PORTS[scheme]:
        return host
    return f"{host}:{port}"


def _strip_tracking(url: str) -> str:
    query = urlsplit(url).query
    if not query:
        return url
    tracked = {
        raw for raw in (p.partition("=")[0] for p in query.split("&")) if is_tracking_param(unquote_plus(raw))
    }
    if not tracked:
        return url
    # unique=False: a repeated real parameter (tag=a&tag=b) must survive the clean-up.
    return url_query_cleaner(url, sorted(tracked), remove=True, unique=False, keep_fragments=True)


def canonical_url(url: str) -> str | None:
    """The display URL, or None when `url` is not an http(s) address with a host.

    Redirectors unwrapped; scheme and host lowercased; host IDNA-encoded; default port and userinfo dropped;
    tracking parameters removed; query sorted and percent-encoding normalised by w3lib; fragment dropped.
    The path keeps its case, and http vs https and a leading www. are kept as given (see `dedup_key`).
    """
    if not isinstance(url, str):
        return None
    return _canonical(url)


# A URL that is already canonical: http(s), a lowercase ASCII host of plain labels (no punycode, no port, no
# userinfo), a path of unreserved characters only (nothing to percent-encode, no ";" parameters) and no query
# or fragment. Most result URLs are like this, and for them every step below gives the URL back unchanged, so
# they skip the parsing (tests/test_urls.py checks both ways agree on every URL of the crw56 recording).
_PLAIN_URL = re.compile(
    r"https?://(?!xn--)[a-z0-9-]{1,63}(?:\.(?!xn--)[a-z0-9-]{1,63})+"
    r"/(?:[A-Za-z0-9._~-]+(?:/[A-Za-z0-9._~-]+)*/?)?"
)
# ... unless a path holds a dot segment (resolved by w3lib) or is a redirector's (unwrapped).
_REDIRECTOR_PATHS = ("/ck/a", "/l", "/url")


def is_plain_url(url: str) -> bool:
    """True for ``scheme://host/path`` with a plain lowercase ASCII host and a path of unreserved characters
    only, nothing else (``_PLAIN_URL``): its host and path can be read off it without parsing."""
    return _PLAIN_URL.fullmatch(url) is not None


def _plain(url: str) -> bool:
    if _PLAIN_URL.fullmatch(url) is None or "/." in url:
        return False
    path = url[url.index("/", 8) :]
    return path.rstrip("/") not in _REDIRECTOR_PATHS


# The same pages come back in search after search (and in every engine's list of one search): each URL is
# canonicalised once per process while it keeps coming back.
@lru_cache(maxsize=16384)
def _canonical(url: str) -> str | None:
    if _plain(url):
        return url
    return _canonical_slow(url)


def _canonical_slow(url: str) -> str | None:
    try:
        parts = urlsplit(unwrap_redirect(url.strip()))
        scheme = parts.scheme.lower()
        host = (parts.hostname or "").rstrip(".")
        if scheme not in _HTTP_SCHEMES or not host:
            return None
        port = parts.port  # raises ValueError on a malformed or out-of-range port
        rebuilt = urlunsplit((scheme, _netloc(scheme, _encode_host(host), port), parts.path, parts.query, ""))
        return canonicalize_url(_strip_tracking(rebuilt))
    except (ValueError, UnicodeError):
        return None


def dedup_key(url: str) -> str:
    """Key under which two rows are the same page: `canonical_url` with http/https, a leading `www.` and a
    trailing `/` on the path folded (`https://www.a.com/x/` and `http://a.com/x` share `a.com/x`).

    The key has no scheme, so it is not a URL to show. An invalid URL keys as its stripped self.
    """
    canonical = canonical_url(url)
    if canonical is None:
        return url.strip() if isinstance(url, str) else ""
    return key_of_canonical(canonical)


@lru_cache(maxsize=16384)
def key_of_canonical(canonical: str) -> str:
    """`dedup_key` of a URL that is already `canonical_url`'s output: no second canonicalisation."""
    if _PLAIN_URL.fullmatch(canonical):  # scheme://host/path and nothing else: no parsing needed
        _, _, host, path = canonical.split("/", 3)
        return f"{_strip_www(host)}{('/' + path).rstrip('/')}"
    parts = urlsplit(canonical)
    netloc = _strip_www(parts.netloc)
    path = parts.path.rstrip("/")
    query = f"?{parts.query}" if parts.query else ""
    return f"{netloc}{path}{query}"


def _strip_www(host: str) -> str:
    # "www.com" stays: stripping would leave a bare suffix.
    if host.startswith("www.") and "." in host[4:]:
        return host[4:]
    return host


# --- hosts and domains -------------------------------------------------------------------------------------


def host_of(url: str) -> str:
    """Lowercase, IDNA-encoded host without port, userinfo or trailing dot ("" if none).

    Lenient on purpose: a bare host or a scheme-less "example.com/path" works too.
    """
    if not isinstance(url, str):
        return ""
    return _host(url)


@lru_cache(maxsize=16384)
def _host(url: str) -> str:
    if _PLAIN_URL.fullmatch(url):  # its host is as canonical as it gets (see _PLAIN_URL)
        return url.split("/", 3)[2]
    text = url.strip()
    if _OPAQUE_SCHEME.match(text):  # mailto:, javascript:, data: ... have no host
        return ""
    if "://" not in text and not text.startswith("//"):
        text = "//" + text
    try:
        host = urlsplit(text).hostname or ""
    except ValueError:
        return ""
    return _encode_host(host.rstrip("."))


@cache  # only paid when a domain is asked for (or a service starts)
def suffix_list() -> PublicSuffixList:
    """The bundled Public Suffix List. Parsing it converts each of its ~10,000 rules to punycode (50 ms quiet,
    a fifth of a one-shot search), so the parsed rules are kept in the user's cache directory and later
    processes parse those as they are (``accept_encoded_idn=False``: they already hold both spellings)."""
    import publicsuffixlist

    try:
        st = os.stat(publicsuffixlist.PSLFILE)
        stamp = f"{st.st_size}.{st.st_mtime_ns}"
    except (AttributeError, OSError):
        return PublicSuffixList()
    path = derived_path(f"psl-{stamp}.txt")
    try:
        return PublicSuffixList(path.read_text(encoding="utf-8"), accept_encoded_idn=False)
    except (OSError, UnicodeDecodeError):
        pass
    psl = PublicSuffixList()
    rules = getattr(psl, "_publicsuffix", None)  # the parsed rules; a version without them is not cached
    if isinstance(rules, frozenset):
        write_whole(path, "\n".join(sorted(rules)).encode())
    return psl


def _is_ip(host: str) -> bool:
    if ":" not in host and not host[-1:].isdigit():  # a host name: an IPv4 address ends in a digit
        return False
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


@lru_cache(maxsize=65536)
def registrable_domain(host_or_url: str) -> str:
    """Registrable domain by the Public Suffix List, private suffixes included (`foo.github.io` stays itself,
    `www.bbc.co.uk` -> `bbc.co.uk`). An IP address, a bare suffix or a single label returns the host itself."""
    host = host_of(host_or_url)
    if not host or _is_ip(host):
        return host
    return suffix_list().privatesuffix(host) or host


def domain_matches(host: str, domain: str) -> bool:
    """True when `host` is `domain` or a subdomain of it, ignoring a leading www. on either side.

    Both sides may also be URLs. `notexample.com` does not match `example.com`.
    """
    h = _strip_www(host_of(host))
    d = _strip_www(host_of(domain))
    if not h or not d:
        return False
    return h == d or h.endswith("." + d)


def favicon_url(url: str) -> str:
    """The site's conventional favicon address (not fetched: serpfuse never visits result pages for it)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}/favicon.ico"


# --- an operator's base URL ---------------------------------------------------------------------------------


def check_base_url(base: str) -> str:
    """``base`` stripped, when it is an absolute http(s) URL with a host and no query or fragment; else
    ``ValueError`` saying what a base URL looks like. A path is kept: it goes in front of the engine's own."""
    text = base.strip() if isinstance(base, str) else ""
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - a malformed port raises here
    except ValueError:
        parts = None
    if parts is None or parts.scheme.lower() not in _HTTP_SCHEMES or not parts.hostname:
        raise ValueError("must be an http(s) URL such as http://127.0.0.1:8080")
    if parts.query or parts.fragment:
        raise ValueError("must have no query or fragment: the engine's own parameters are kept")
    return text


def rebase_url(url: str, base: str) -> str:
    """``url`` sent to ``base``: base's scheme, host and port in place of url's, base's path (if any) in front of
    url's path, url's path and query kept. A URL already under ``base`` (a self-hosted engine builds its
    requests from it) is returned unchanged, so rebasing twice changes nothing."""
    target, root = urlsplit(url), urlsplit(check_base_url(base))
    prefix = root.path.rstrip("/")
    if (target.scheme.lower(), target.netloc.lower()) == (root.scheme.lower(), root.netloc.lower()) and (
        target.path == prefix or target.path.startswith(prefix + "/")
    ):
        return url
    return urlunsplit((root.scheme, root.netloc, prefix + (target.path or "/"), target.query, ""))


def same_origin(url: str, other: str) -> bool:
    """Whether two URLs share scheme, host and port (default ports filled in)."""
    try:
        a, b = urlsplit(url), urlsplit(other)
        ports = a.port or _DEFAULT_PORTS.get(a.scheme.lower()), b.port or _DEFAULT_PORTS.get(b.scheme.lower())
    except ValueError:
        return False
    hosts = (a.hostname or "").rstrip("."), (b.hostname or "").rstrip(".")
    return a.scheme.lower() == b.scheme.lower() and hosts[0] == hosts[1] and ports[0] == ports[1]


# --- public addresses -----------------------------------------------------------------------------------------

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")


def numeric_host(host: str) -> IPAddress | None:
    """The address a host spelled as a number stands for (IPv6 literal, dotted quad, or the C resolver's
    decimal/octal/hex/short IPv4 forms: ``2130706433``, ``0x7f000001``, ``0177.0.0.1`` and ``127.1`` are all
    127.0.0.1); None for a name."""
    bare = host.strip("[]")
    try:
        return ipaddress.ip_address(bare.split("%", 1)[0])
    except ValueError:
        pass
    if not bare or not all(c in "0123456789abcdefxABCDEFX." for c in bare) or not bare[0].isdigit():
        return None  # a name (inet_aton only ever accepts digits, hex digits, x and dots)
    try:
        return ipaddress.IPv4Address(socket.inet_aton(bare))
    except OSError:
        return None


def embedded_ipv4(ip: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (mapped, 6to4, NAT64, Teredo's client), if any."""
    if not isinstance(ip, ipaddress.IPv6Address):
        return None
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if ip in _NAT64 or ip in _NAT64_LOCAL:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def address_refusal(ip: IPAddress, *, allow_loopback: bool = False) -> str | None:
    """Why this address is no public unicast address one may fetch from, or None when it is one. Refused:
    private, loopback (unless allowed), link-local (cloud metadata at 169.254.169.254 and fd00:ec2::254),
    CGNAT, multicast, reserved, unspecified, documentation and benchmarking ranges, and the same inside IPv6."""
    inner = embedded_ipv4(ip)
    if inner is not None:
        why = address_refusal(inner, allow_loopback=allow_loopback)
        return f"{why} (inside {ip})" if why else None
    if ip.is_loopback:
        return None if allow_loopback else f"{ip} is a loopback address"
    if ip.is_unspecified:
        return f"{ip} is the unspecified address"
    if ip.is_multicast:
        return f"{ip} is a multicast address"
    if ip.is_link_local:
        return f"{ip} is a link-local address (cloud metadata lives there)"
    if ip.is_private:
        return f"{ip} is a private address"
    if ip.is_reserved:
        return f"{ip} is a reserved address"
    if not ip.is_global:  # CGNAT 100.64.0.0/10 and the other special-purpose ranges
        return f"{ip} is not a public address"
    return None
