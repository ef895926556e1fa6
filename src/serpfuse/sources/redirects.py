"""The hops of an engine's redirect, as a browser makes them: each target checked before anything is sent
there (a public http(s) address, or the operator's own base URL), the method and body a browser keeps, the
engine's cookies kept to its own host."""

from __future__ import annotations

import asyncio
import dataclasses
import ipaddress
import socket
from urllib.parse import urlencode, urlsplit

from serpfuse.engines.base import (
    EngineError,
    RequestSpec,
)
from serpfuse.urls import address_refusal, numeric_host, same_origin


def sent_url(spec: RequestSpec) -> str:
    """The URL a request went to, parameters included: what a relative Location is read against."""
    if not spec.params:
        return spec.url
    query = urlencode(spec.params, doseq=True)
    return f"{spec.url}{'&' if urlsplit(spec.url).query else '?'}{query}"


def redirected(spec: RequestSpec, status: int, target: str) -> RequestSpec:
    """The next hop as a browser makes it: a 303, or a 301/302 after a POST, becomes a GET without a body; a
    307/308 repeats the request. The engine's own cookies stay with its own host."""
    keep_body = status in (307, 308) or spec.method.upper() in ("GET", "HEAD")
    same_host = urlsplit(target).hostname == urlsplit(spec.url).hostname
    return dataclasses.replace(
        spec,
        url=target,
        method=spec.method if keep_body else "GET",
        params=None,
        data=spec.data if keep_body else None,
        json=spec.json if keep_body else None,
        cookies=spec.cookies if same_host else None,
    )


async def check_redirect(target: str, base_url: str | None) -> str | None:
    """Refuse a redirect to anything but a public http(s) address; the operator's base URL is allowed. Raises
    ``EngineError`` naming the host, before anything is sent there. Returns the address a name was checked at,
    for the hop to connect to (None for the base URL's host and a host written as an address)."""
    try:
        parts = urlsplit(target)
        port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
    except ValueError:
        raise EngineError("redirect to an invalid URL refused") from None
    host = (parts.hostname or "").rstrip(".")
    if parts.scheme.lower() not in ("http", "https") or not host:
        raise EngineError(
            f"redirect to a {parts.scheme or 'relative'}: URL refused (only http and https are followed)"
        )
    if base_url and same_origin(target, base_url):
        return None  # the operator's own choice of host, loopback included
    literal = numeric_host(host)
    if literal is not None:
        addresses: list[ipaddress.IPv4Address | ipaddress.IPv6Address] = [literal]
    else:
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError):
            raise EngineError(f"redirect to {host} refused: the name does not resolve") from None
        addresses = [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos]
    for address in addresses:
        if (why := address_refusal(address)) is not None:
            raise EngineError(f"redirect to {host} refused: {why}")
    return None if literal is not None else str(addresses[0])
