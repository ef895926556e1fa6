"""Which URLs and addresses the reader may fetch: the SSRF policy as pure functions, decided before any socket.

A URL passes when its scheme is http or https, it carries no user:password, its port is one the deployment
allows (80 and 443 unless configured), and every address its host resolves to is a public unicast address.
Refused: private, loopback, link-local (cloud metadata at 169.254.169.254 and fd00:ec2::254 included), CGNAT
(100.64.0.0/10), multicast, reserved, unspecified (0.0.0.0, ::), documentation and benchmarking ranges, and
the same inside IPv6 (IPv4-mapped, 6to4, NAT64 and Teredo forms carry an IPv4 address that is checked too).
A host written as a number is read the way the C resolver reads it (``2130706433``, ``0x7f000001``,
``0177.0.0.1`` and ``127.1`` are all 127.0.0.1), so no spelling slips past as a "name".

A URL that is no absolute http(s) URL at all (not text, empty, over ``MAX_URL_CHARS``, holding a control
character, without a scheme or a host, with a host DNS cannot carry, a malformed port) is ``InvalidURL``, "not
a valid URL: why"; one the policy refuses is ``Refused``, of which ``InvalidURL`` is a kind, so a caller may
tell them apart or not. Both are decided before any resolution.

Loopback is allowed only when the caller's ``Policy`` says so (tests and a local deployment's own settings);
the HTTP API builds its policy without it whatever a request says.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from serpfuse.reader.models import CallerError
from serpfuse.urls import IPAddress, _encode_host, numeric_host
from serpfuse.urls import address_refusal as public_address_refusal

DEFAULT_PORTS = frozenset({80, 443})
SCHEMES = ("http", "https")


MAX_URL_CHARS = 8192  # far past any real page's address; servers refuse longer request lines anyway
MAX_HOST_CHARS = 253  # DNS
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# A label as resolvers carry it (underscores, and hyphens at the ends, occur in real names), in IDNA form.
_LABEL = re.compile(r"[a-z0-9_-]{1,63}")


class Refused(CallerError):
    """The URL or one of its addresses is not fetchable under the policy. One line naming why."""


class InvalidURL(Refused):
    """Not an absolute http(s) URL at all: the caller's input is malformed, whatever the policy."""

    def __init__(self, why: str) -> None:
        super().__init__(f"not a valid URL: {why}")


@dataclass(frozen=True)
class Policy:
    allow_loopback: bool = False
    ports: frozenset[int] = DEFAULT_PORTS
    max_redirects: int = 5


@dataclass(frozen=True)
class Target:
    """A URL taken apart for fetching: what to resolve, where to connect, what TLS and Host should say."""

    url: str
    scheme: str
    host: str  # the name as written (lowercase), or the canonical text of an IP literal
    port: int
    literal: IPAddress | None  # the host was an address, in any spelling


def address_refusal(ip: IPAddress, policy: Policy) -> str | None:
    """Why this address may not be fetched, or None when it may (``urls.address_refusal`` under the policy)."""
    return public_address_refusal(ip, allow_loopback=policy.allow_loopback)


def check_address(ip: IPAddress, policy: Policy) -> None:
    why = address_refusal(ip, policy)
    if why:
        raise Refused(f"refused: {why}")


def parse_target(url: str, policy: Policy) -> Target:
    """Scheme, credentials, host and port checks on a URL; address checks come after resolution. Raises
    ``InvalidURL`` for what is no URL, ``Refused`` for what the policy does not read."""
    if not isinstance(url, str):
        raise InvalidURL(f"it is not text but {type(url).__name__}")
    url = url.strip()
    if not url:
        raise InvalidURL("it is empty")
    if len(url) > MAX_URL_CHARS:
        raise InvalidURL(f"it is longer than {MAX_URL_CHARS:,} characters")
    if _CONTROL.search(url):
        raise InvalidURL("it holds a control character")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise InvalidURL(str(exc)) from None
    scheme = parts.scheme.lower()
    if not scheme:
        raise InvalidURL("it has no scheme (only http and https URLs are read)")
    if scheme not in SCHEMES:
        raise Refused(f"only http and https URLs are read, not {scheme}")
    if parts.username is not None or parts.password is not None:
        raise Refused("URLs with a user name or password are not read")
    host = (parts.hostname or "").rstrip(".").lower()
    if not host:
        raise InvalidURL("it has no host")
    port = port if port is not None else (443 if scheme == "https" else 80)
    if port not in policy.ports:
        allowed = ", ".join(str(p) for p in sorted(policy.ports))
        raise Refused(f"refused: port {port} (allowed: {allowed})")
    literal = numeric_host(host)
    if literal is not None:
        check_address(literal, policy)
        host = str(literal)
    else:
        host = _encode_host(host)  # the form the HTTP client puts on the wire (IDNA), so the pin matches it
        if len(host) > MAX_HOST_CHARS or not all(_LABEL.fullmatch(label) for label in host.split(".")):
            raise InvalidURL("its host is not a domain name")
    return Target(url=url, scheme=scheme, host=host, port=port, literal=literal)
