"""The guard in front of every HTTP route (the API's and the MCP endpoint's): bearer token, per-client rate
limit, body size, and the request count and latency for /metrics.

The rate limit protects an exposed server, not a local user: callers on loopback are not limited unless the
server listens beyond loopback or holds a token (a reverse proxy on the same host forwards every outside caller
from loopback), or ``rate_limit_loopback`` says otherwise. Each refused client is logged once a minute with the
settings that refused it, so a 429 is never a mystery to whoever runs the server.

A wrong token spends from the caller's address bucket before the 401, so guessing tokens is rate limited like
anything else (even where requests are not: the MCP endpoint). The body limit holds for every body, chunked or
form, because it is counted as the body is received, not read from Content-Length.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import logging
import math
import time
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from serpfuse.serve.errors import ApiError, error_response
from serpfuse.settings import Settings, is_loopback
from serpfuse.state.ratelimit import Buckets, TokenBuckets

log = logging.getLogger(__name__)

OPEN_ROUTES = {"healthz"}  # probes need no token; they reveal nothing
UNLIMITED_ROUTES = {"healthz", "metrics"}  # probes and scrapers are not rate limited
REFUSAL_LOG_INTERVAL_S = 60.0  # one log line per refused client per minute, however many 429s it earns
REFUSAL_LOG_CLIENTS = 10_000  # clients remembered for that; a flood of addresses cannot grow it without bound


def limits_loopback(settings: Settings) -> bool:
    """Whether callers on loopback are rate limited: the setting when given, else only when the server is
    reachable beyond this machine (a non-loopback bind) or holds a token."""
    if settings.rate_limit_loopback is not None:
        return settings.rate_limit_loopback
    return not is_loopback(settings.host) or settings.token() is not None


def _loopback_address(address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    mapped = getattr(
        ip, "ipv4_mapped", None
    )  # ::ffff:127.0.0.1, as a dual-stack socket reports an IPv4 caller
    return (mapped or ip).is_loopback


def _header(scope: Scope, name: bytes) -> str | None:
    """The first value of a request header (ASGI names are lower-case bytes)."""
    return next((v.decode("latin-1") for n, v in scope.get("headers", []) if n == name), None)


def _bearer(scope: Scope) -> str | None:
    text = (_header(scope, b"authorization") or "").strip()
    return text[7:].strip() if text[:7].lower() == "bearer " else None


def _same(presented: str | None, token: str) -> bool:
    return presented is not None and hmac.compare_digest(presented.encode(), token.encode())


def _content_length(scope: Scope) -> int | None:
    try:
        return int(_header(scope, b"content-length") or "")
    except ValueError:
        return None


class Guard:
    """ASGI middleware in front of every route. ``routes`` maps a path to its label (metrics, error shape,
    which checks apply); any other path is "other"."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        settings: Settings,
        metrics: Any,
        routes: dict[str, str],
        limit_rate: bool = True,
        client_buckets: Buckets | None = None,
    ) -> None:
        self.app = app
        self.limit_rate = limit_rate
        self.routes = routes
        self.token = settings.token()
        self.max_body = settings.max_body_bytes
        self.metrics = metrics
        self.buckets = client_buckets or TokenBuckets(
            settings.rate_limit_per_min / 60.0, settings.rate_limit_burst
        )
        self.limit_loopback = limits_loopback(settings)
        self.limit_text = f"rate_limit_per_min={settings.rate_limit_per_min:g}, rate_limit_burst={settings.rate_limit_burst}"
        self.loopback_text = self._loopback_reason(settings)
        self._refusals: dict[str, tuple[float, int]] = {}  # client -> (when last logged, 429s since)

    @staticmethod
    def _loopback_reason(settings: Settings) -> str:
        """Why loopback callers are limited, as the log line says it (the setting to change)."""
        if settings.rate_limit_loopback is not None:
            return f"rate_limit_loopback={str(settings.rate_limit_loopback).lower()}"
        if not is_loopback(settings.host):
            return f"loopback callers limited too: listening on {settings.host} (rate_limit_loopback unset)"
        return "loopback callers limited too: a token is set (rate_limit_loopback unset)"

    def _client(self, scope: Scope, presented: str | None) -> str:
        if presented:  # a token names its holder better than an address behind a proxy does
            return "token:" + hashlib.sha256(presented.encode()).hexdigest()[:16]
        client = scope.get("client")
        return "ip:" + (client[0] if client else "unknown")

    @staticmethod
    def _on_loopback(scope: Scope) -> bool:
        client = scope.get("client")
        return client is not None and _loopback_address(client[0])

    def _exempt(self, scope: Scope) -> bool:
        """A caller on this machine, where loopback callers are not limited."""
        return not self.limit_loopback and self._on_loopback(scope)

    def _note_refusal(self, client: str, why: str) -> None:
        now = time.monotonic()
        last, since = self._refusals.get(client, (-math.inf, 0))
        if now - last < REFUSAL_LOG_INTERVAL_S:
            self._refusals[client] = (last, since + 1)
            return
        if len(self._refusals) >= REFUSAL_LOG_CLIENTS:  # forget the quiet ones, or everyone if none is quiet
            quiet = [c for c, (t, _) in self._refusals.items() if now - t >= REFUSAL_LOG_INTERVAL_S]
            for c in quiet or list(self._refusals):
                del self._refusals[c]
        self._refusals[client] = (now, 0)
        more = f"; {since} more refused since its last line" if since else ""
        log.warning("429 for client %s: %s%s (logged once a minute per client)", client, why, more)

    async def _limited(self, client: str, why: str) -> ApiError | None:
        wait_s = await self.buckets.take(client)
        if wait_s <= 0:
            return None
        self._note_refusal(client, why)
        retry = max(1, math.ceil(wait_s))
        return ApiError(429, f"rate limit exceeded; retry in {retry} s", {"Retry-After": str(retry)})

    async def check(self, scope: Scope, route: str) -> ApiError | None:
        presented = _bearer(scope)
        if self.token and route not in OPEN_ROUTES and not _same(presented, self.token):
            # Token guesses spend from the address's bucket wherever they come from, loopback too.
            why = f"too many wrong or missing tokens ({self.limit_text})"
            if (limited := await self._limited(self._client(scope, None), why)) is not None:
                return limited
            message = "missing or wrong bearer token (send 'Authorization: Bearer <token>')"
            return ApiError(401, message, {"WWW-Authenticate": 'Bearer realm="serpfuse"'})
        if self.limit_rate and route not in UNLIMITED_ROUTES and not self._exempt(scope):
            client = self._client(scope, presented if self.token else None)
            why = f"{self.limit_text}; {self.loopback_text}" if self._on_loopback(scope) else self.limit_text
            if (limited := await self._limited(client, why)) is not None:
                return limited
        length = _content_length(scope)
        if length is not None and length > self.max_body:
            return ApiError(413, f"request body is {length} bytes; the limit is {self.max_body}")
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        route = self.routes.get(scope["path"], "other")
        started = time.perf_counter()
        status = [500]
        responded = [False]

        async def send_and_note(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0], responded[0] = message["status"], True
            await send(message)

        received = [0]
        dropped = [False]  # the client went away before its whole body came
        body_done = [False]

        async def receive_counted() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                received[0] += len(message.get("body", b""))
                if received[0] > self.max_body:
                    raise ApiError(413, f"request body is over the limit of {self.max_body} bytes")
                body_done[0] = body_done[0] or not message.get("more_body", False)
            elif message["type"] == "http.disconnect" and not body_done[0]:
                dropped[0] = True
            return message

        try:
            problem = await self.check(scope, route)
            if problem is not None:
                response = error_response(route, problem.http_status, problem.message, problem.headers)
                await response(scope, receive, send_and_note)
            else:
                try:
                    await self.app(scope, receive_counted, send_and_note)
                except ApiError as exc:  # the body limit, raised through an app that is not ours (MCP)
                    if responded[0]:
                        raise
                    await error_response(route, exc.http_status, exc.message)(scope, receive, send_and_note)
                except Exception:
                    if not dropped[0]:
                        raise
                    # whatever the app raised on reading a body that never came: the drop's one line below
                if dropped[0]:
                    status[0] = 499  # as nginx counts a client that closed first
                    client = scope.get("client")
                    log.warning(
                        "client %s closed the connection during %s %s's body (%d bytes received)",
                        client[0] if client else "unknown", scope.get("method"), scope["path"], received[0],
                    )  # fmt: skip
        finally:
            self.metrics.observe_request(route, status[0], time.perf_counter() - started)
