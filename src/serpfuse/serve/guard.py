"""The guard in front of every HTTP route (the API's and the MCP endpoint's): bearer token, per-client rate
limit, body size, and the request count and latency for /metrics.

A wrong token spends from the caller's address bucket before the 401, so guessing tokens is rate limited like
anything else (even where requests are not: the MCP endpoint). The body limit holds for every body, chunked or
form, because it is counted as the body is received, not read from Content-Length.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import time
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from serpfuse.serve.errors import ApiError, error_response
from serpfuse.settings import Settings
from serpfuse.state.ratelimit import Buckets, TokenBuckets

OPEN_ROUTES = {"healthz"}  # probes need no token; they reveal nothing
UNLIMITED_ROUTES = {"healthz", "metrics"}  # probes and scrapers are not rate limited


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

    def _client(self, scope: Scope, presented: str | None) -> str:
        if presented:  # a token names its holder better than an address behind a proxy does
            return "token:" + hashlib.sha256(presented.encode()).hexdigest()[:16]
        client = scope.get("client")
        return "ip:" + (client[0] if client else "unknown")

    async def _limited(self, client: str) -> ApiError | None:
        wait_s = await self.buckets.take(client)
        if wait_s <= 0:
            return None
        retry = max(1, math.ceil(wait_s))
        return ApiError(429, f"rate limit exceeded; retry in {retry} s", {"Retry-After": str(retry)})

    async def check(self, scope: Scope, route: str) -> ApiError | None:
        presented = _bearer(scope)
        if self.token and route not in OPEN_ROUTES and not _same(presented, self.token):
            if (limited := await self._limited(self._client(scope, None))) is not None:
                return limited
            message = "missing or wrong bearer token (send 'Authorization: Bearer <token>')"
            return ApiError(401, message, {"WWW-Authenticate": 'Bearer realm="serpfuse"'})
        if self.limit_rate and route not in UNLIMITED_ROUTES:
            limited = await self._limited(self._client(scope, presented if self.token else None))
            if limited is not None:
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

        async def receive_counted() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                received[0] += len(message.get("body", b""))
                if received[0] > self.max_body:
                    raise ApiError(413, f"request body is over the limit of {self.max_body} bytes")
            return message

        try:
            problem = await self.check(scope, route)
            if problem is not None:
                response = error_response(route, problem.status, problem.message, problem.headers)
                await response(scope, receive, send_and_note)
            else:
                try:
                    await self.app(scope, receive_counted, send_and_note)
                except ApiError as exc:  # the body limit, raised through an app that is not ours (MCP)
                    if responded[0]:
                        raise
                    await error_response(route, exc.status, exc.message)(scope, receive, send_and_note)
        finally:
            self.metrics.observe_request(route, status[0], time.perf_counter() - started)
