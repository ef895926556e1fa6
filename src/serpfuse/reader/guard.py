"""Which URLs and addresses the reader may fetch: the SSRF policy as pure functions, decided before any socket.

A URL passes when its scheme is http or https, it carries no user:password, its port is one the deployment
allows (80 and 443 unless configured), and every address its host resolves to is a public unicast address.
Refused: private, loopback, link-local (cloud metadata at 169.254.169.254 and fd00:ec2::254 included), CGNAT
(100.64.0.0/10), multicast, reserved, unspecified (0.0.0.0, ::), documentation and benchmarking ranges, and
the same inside IPv6 (IPv4-mapped, 6to4, NAT64 and Teredo forms carry an IPv4 address that is checked too).
A host written as a number is read the way the C resolver reads it (``2130706433``, ``0x7f000001``,
``0177.0.0.1`` and ``127.1`` are all 127.0.0.1), so no spelling slips past as a "name".

Loopback is allowed only when the caller's ``Policy`` says so (tests and a local deployment's own settings);
the HTTP API builds its policy without it whatever a request says.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from serpfuse.reader.models import CallerError
from serpfuse.urls import IPAddress, dns_host, numeric_host
from serpfuse.urls import address_refusal as public_address_refusal

DEFAULT_PORTS = frozenset({80, 443})
SCHEMES = ("http", "https")


class Refused(CallerError):
    """The URL or one of its addresses is not fetchable under the policy. One line naming why."""


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
    """Scheme, credentials, host and port checks on a URL; address checks come after resolution."""
    if any(c < " " or c == "\x7f" for c in url.strip()):  # no HTTP client sends these; say so first
        raise Refused("not a valid URL: it holds a control character")
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise Refused(f"not a valid URL: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        raise Refused(f"only http and https URLs are read, not {scheme or 'a URL without a scheme'}")
    if parts.username is not None or parts.password is not None:
        raise Refused("URLs with a user name or password are not read")
    host = (parts.hostname or "").rstrip(".").lower()
    if not host:
        raise Refused("the URL has no host")
    port = port if port is not None else (443 if scheme == "https" else 80)
    if port not in policy.ports:
        allowed = ", ".join(str(p) for p in sorted(policy.ports))
        raise Refused(f"refused: port {port} (allowed: {allowed})")
    literal = numeric_host(host)
    if literal is not None:
        check_address(literal, policy)
        host = str(literal)
    else:
        wire = dns_host(host)  # the form the HTTP client puts on the wire (IDNA), so the pin matches it
        if wire is None:  # refused here: the resolver and the HTTP client would fail on it less clearly
            raise Refused("not a valid URL: its host is not a domain name")
        host = wire
    return Target(url=url.strip(), scheme=scheme, host=host, port=port, literal=literal)
