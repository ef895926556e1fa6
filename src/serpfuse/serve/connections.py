"""What one client connection may cost a server process: how long it may take to send a request's headers,
and how many connections the process serves at once.

uvicorn times a connection out only between requests (``timeout_keep_alive``), so a client that opens a
connection and sends its headers a line at a time (or never) holds it, and its socket, for as long as it likes
(50 such clients were all still connected 20 s later). ``HeaderTimeoutProtocol`` closes a connection whose
request head has not arrived ``header_timeout_s`` after it opened, or after the previous answer went out, and
answers 431 to a head longer than ``MAX_HEAD_BYTES`` however fast it comes (in one packet or in many). A
request's body must arrive within ``body_timeout_s`` of its head, or it is answered 408 and closed. Past
``max_connections`` open connections a new request is answered 503 at once, a JSON error with ``Retry-After``,
instead of queueing for resources the process does not have; a burst of such refusals is logged once, not once
per request. Every face that serves HTTP (the API, alone or in ``serve --workers``, and MCP over HTTP) is
configured here.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import time
from typing import TYPE_CHECKING, Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

if TYPE_CHECKING:
    import uvicorn

    from serpfuse.settings import Settings

log = logging.getLogger(__name__)

DEFAULT_HEADER_TIMEOUT_S = 10.0
DEFAULT_BODY_TIMEOUT_S = 30.0
# A request head (its request line and headers) may be this long: h11's own cap, which uvicorn served with before
# httptools. llhttp has none, and would buffer a head streamed fast until the header timeout.
MAX_HEAD_BYTES = 16 * 1024
_TOO_LARGE_TEXT = b"request head too large"
HEAD_TOO_LARGE = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(_TOO_LARGE_TEXT), _TOO_LARGE_TEXT)
)
_BODY_TOO_SLOW_TEXT = json.dumps(
    {"error": {"status": 408, "message": "request body did not arrive in time"}}
).encode()
BODY_TOO_SLOW = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
    b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(_BODY_TOO_SLOW_TEXT), _BODY_TOO_SLOW_TEXT)
)
OVERLOAD_RETRY_AFTER_S = 1
OVERLOAD_QUIET_S = 10.0  # a refusal this long after the last one starts a new burst (and a new log line)


class Overload:
    """The 503 a process answers past ``max_connections``, in the error shape of the API, with ``Retry-After``;
    and its log, one line per burst of refusals (a quiet ``OVERLOAD_QUIET_S`` ends a burst), saying how many
    the previous burst refused."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.last = -float("inf")
        self.refused = 0  # in the burst under way

    def note(self) -> None:
        now = time.monotonic()
        if now - self.last > OVERLOAD_QUIET_S:
            before = f"; the previous burst refused {self.refused}" if self.refused else ""
            log.warning(
                "over max_connections=%d: answering 503 with Retry-After: %d until connections close "
                "(logged once per burst%s)",
                self.cap, OVERLOAD_RETRY_AFTER_S, before,
            )  # fmt: skip
            self.refused = 0
        self.last = now
        self.refused += 1

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        body = json.dumps(
            {"error": {"status": 503, "message": f"server busy (max_connections={self.cap}); retry shortly"}}
        ).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"retry-after", str(OVERLOAD_RETRY_AFTER_S).encode()),
            (b"connection", b"close"),
        ]
        await send({"type": "http.response.start", "status": 503, "headers": headers})
        await send({"type": "http.response.body", "body": body, "more_body": False})


class HeaderTimeoutProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol (llhttp's parser, in C, where h11 parses in Python), closing a connection
    that has not sent a whole request head in time, and refusing a head longer than ``MAX_HEAD_BYTES``."""

    def __init__(self, config: uvicorn.Config, *args: Any, **kwargs: Any) -> None:
        super().__init__(config, *args, **kwargs)
        # Set on the config by ``server_config``; the config, not a class made per setting, so it pickles
        # into ``serve --workers``' spawned processes.
        self.header_timeout_s: float = getattr(config, "header_timeout_s", DEFAULT_HEADER_TIMEOUT_S)
        self.body_timeout_s: float = getattr(config, "body_timeout_s", DEFAULT_BODY_TIMEOUT_S)
        # uvicorn's own limit_concurrency is left unset: its 503 is plain text, and it logs every refusal.
        self.overload: Overload | None = getattr(config, "overload", None)
        self._header_deadline: asyncio.TimerHandle | None = None
        self._body_deadline: asyncio.TimerHandle | None = None
        self._refused = False  # a head too large was answered 431: nothing more is read
        self._head_bytes: int | None = 0  # of the head being received; None from its end to its message's
        self._heads = 0  # request heads received whole on this connection

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._await_request_head()

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        receiving_head, heads = self._head_bytes is not None, self._heads
        super().data_received(data)
        # Counted after parsing: bytes in which no head ended were all the head's (a body sent in the same
        # packets as its head is not counted), so a head is refused within one read (256 KiB) of the cap.
        if receiving_head and self._heads == heads and self._head_bytes is not None:
            self._head_bytes += len(data)
            if self._head_bytes > MAX_HEAD_BYTES:
                self._refuse_head()

    def _refuse_head(self) -> None:
        self._refused = True
        self._cancel_header_deadline()
        if not self.transport.is_closing():
            self.transport.write(HEAD_TOO_LARGE)
            self.transport.close()

    def on_headers_complete(self) -> None:
        if self._refused:
            return
        self._head_bytes, self._heads = None, self._heads + 1
        self._cancel_header_deadline()  # the head has arrived: its body and answer have own bounds
        # A head that came whole in one read was not counted as it came: its parts are measured here (the
        # request line's and each header line's separators included).
        size = len(self.url) + 14 + sum(len(n) + len(v) + 4 for n, v in self.headers)
        if size > MAX_HEAD_BYTES:
            self._refuse_head()
            return
        if self.overload is not None and (
            len(self.connections) >= self.overload.cap or len(self.tasks) >= self.overload.cap
        ):
            self.overload.note()
            self.app, app = self.overload, self.app  # the 503 instead of the app, for this request alone
            try:
                super().on_headers_complete()
            finally:
                self.app = app
        else:
            super().on_headers_complete()
        if self.parser.should_upgrade() or self.cycle is None:
            return
        if not self.cycle.response_complete:  # a body may follow: it gets body_timeout_s to arrive
            self._cancel_body_deadline()
            self._body_deadline = self.loop.call_later(self.body_timeout_s, self._body_too_slow)

    def on_body(self, body: bytes) -> None:
        if not self._refused:
            super().on_body(body)

    def on_message_complete(self) -> None:
        if self._refused:
            return
        self._cancel_body_deadline()
        super().on_message_complete()
        self._head_bytes = 0  # what comes next is the next request's head (pipelined, or kept alive)

    def on_response_complete(self) -> None:
        queued = bool(self.pipeline)  # a pipelined request whose head came while this one was answered
        super().on_response_complete()
        if not queued and not self.transport.is_closing():
            self._await_request_head()  # the next request on this connection gets the same time

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_header_deadline()
        self._cancel_body_deadline()
        super().connection_lost(exc)

    def _cancel_body_deadline(self) -> None:
        if self._body_deadline is not None:
            self._body_deadline.cancel()
            self._body_deadline = None

    def _body_too_slow(self) -> None:
        """The body has not all come within ``body_timeout_s`` of its head: 408 when nothing has been answered
        yet, and the connection closed (the app reading it sees a disconnect)."""
        self._body_deadline = None
        if self.transport.is_closing():
            return
        cycle = self.cycle
        if cycle is not None and not cycle.response_started:
            self.transport.write(BODY_TOO_SLOW)
        if cycle is not None:  # the app reading the body hears a disconnect, and its answer goes nowhere
            cycle.response_started = cycle.disconnected = True
            cycle.message_event.set()
        self.transport.close()

    def _await_request_head(self) -> None:
        self._cancel_header_deadline()
        self._header_deadline = self.loop.call_later(self.header_timeout_s, self._header_too_slow)

    def _cancel_header_deadline(self) -> None:
        if self._header_deadline is not None:
            self._header_deadline.cancel()
            self._header_deadline = None

    def _header_too_slow(self) -> None:
        self._header_deadline = None
        if not self.transport.is_closing():
            self.transport.close()


def server_config(app: Any, settings: Settings, *, log_level: str, **options: Any) -> uvicorn.Config:
    """The uvicorn config every serving face uses: the connection bounds, and no log of uvicorn's own (one
    masked set-up for every process: ``serve.logs``). ``options`` go to ``uvicorn.Config`` as they are."""
    import uvicorn

    config = uvicorn.Config(
        app,
        http=HeaderTimeoutProtocol,
        log_level=log_level,
        lifespan="on",
        server_header=False,
        log_config=None,
        access_log=False,
        **options,
    )
    config.header_timeout_s = settings.header_timeout_s  # type: ignore[attr-defined]
    config.body_timeout_s = settings.body_timeout_s  # type: ignore[attr-defined]
    config.overload = Overload(settings.max_connections)  # type: ignore[attr-defined]
    return config


async def serve_app(app: Any, settings: Settings, *, log_level: str, sock: socket.socket | None) -> None:
    """Serve ``app`` on ``sock`` (bound), or on ``settings.host:port``, until stopped."""
    import uvicorn

    config = server_config(app, settings, log_level=log_level, host=settings.host, port=settings.port,
                           proxy_headers=False)  # fmt: skip
    await uvicorn.Server(config).serve(sockets=[sock] if sock else None)
