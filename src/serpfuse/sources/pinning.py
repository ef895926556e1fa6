"""A connection pinned to the address that was checked: resolved once, dialled there and nowhere else.

A name checked against private addresses and then resolved again by the client can answer differently the
second time (DNS rebinding). Pinned, the client's network backend connects to the checked address whatever the
name now resolves to, while TLS SNI, certificate checks and the Host header still use the name. The page reader
pins every hop; the live source pins each redirect hop an engine's answer leads to (libcurl pins with its own
``RESOLVE`` list, httpx2 with the backend here).
"""

from __future__ import annotations

import ipaddress
import ssl
from collections.abc import Callable

import httpcore2
import httpx2

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Where a checked address is actually dialled: itself. Tests swap in a map from a pretend public address to their
# loopback server, so redirect tricks can be played against a guard that allows no loopback at all.
Dial = Callable[[IPAddress, int], tuple[str, int]]


def direct(address: IPAddress, port: int) -> tuple[str, int]:
    return str(address), port


class PinnedBackend(httpcore2.AsyncNetworkBackend):
    """Connects to one checked address whatever host the pool asks for; refuses to connect for another name."""

    def __init__(self, host: str, address: IPAddress, dial: Dial = direct):
        self.host = host
        self.address = address
        self.dial = dial
        self._inner = httpcore2.AnyIOBackend()

    async def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        if host.strip("[]").lower() != self.host:  # the pool only ever serves this hop's origin
            raise httpcore2.ConnectError(f"pinned connection asked for another host: {host}")
        ip, port = self.dial(self.address, port)
        return await self._inner.connect_tcp(ip, port, timeout, local_address, socket_options)

    async def connect_unix_socket(self, path, timeout=None, socket_options=None):
        raise httpcore2.ConnectError("unix sockets are never used by a pinned connection")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class PinnedTransport(httpx2.AsyncHTTPTransport):
    """httpx2's own transport (request/response mapping, TLS with SNI and verification by name) over a pool
    whose network backend is pinned to the checked address."""

    def __init__(self, backend: PinnedBackend, ssl_context: ssl.SSLContext):
        super().__init__(verify=ssl_context, trust_env=False)
        self._pool = httpcore2.AsyncConnectionPool(
            ssl_context=ssl_context, max_connections=1, http1=True, http2=False, network_backend=backend
        )
