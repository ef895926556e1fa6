"""What one client connection may cost a server process: how long it may take to send a request's headers,
and how many connections the process serves at once.

uvicorn times a connection out only between requests (``timeout_keep_alive``), so a client that opens a
connection and sends its headers a line at a time (or never) holds it, and its socket, for as long as it likes
(50 such clients were all still connected 20 s later). ``HeaderTimeoutProtocol`` closes a connection whose
request head has not arrived ``header_timeout_s`` after it opened, or after the previous answer went out, and
answers 431 to a head longer than ``MAX_HEAD_BYTES`` however fast it comes. Past
``max_connections`` open connections a new request is answered 503 at once (uvicorn's ``limit_concurrency``)
instead of queueing for resources the process does not have. Every face that serves HTTP (the API, alone or in
``serve --workers``, and MCP over HTTP) is configured here.
"""

from __future__ import annotations

import asyncio
import socket
from typing import TYPE_CHECKING, Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

if TYPE_CHECKING:
    import uvicorn

    from serpfuse.settings import Settings

DEFAULT_HEADER_TIMEOUT_S = 10.0
# A request head (its request line and headers) may be this long: h11's own cap, which uvicorn served with before
# httptools. llhttp has none, and would buffer a head streamed fast until the header timeout.
MAX_HEAD_BYTES = 16 * 1024
_TOO_LARGE_TEXT = b"request head too large"
HEAD_TOO_LARGE = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(_TOO_LARGE_TEXT), _TOO_LARGE_TEXT)
)


class HeaderTimeoutProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol (llhttp's parser, in C, where h11 parses in Python), closing a connection
    that has not sent a whole request head in time, and refusing a head longer than ``MAX_HEAD_BYTES``."""

    def __init__(self, config: uvicorn.Config, *args: Any, **kwargs: Any) -> None:
        super().__init__(config, *args, **kwargs)
        # Set on the config by ``server_config``; the config, not a class made per setting, so it pickles
        # into ``serve --workers``' spawned processes.
        self.header_timeout_s: float = getattr(config, "header_timeout_s", DEFAULT_HEADER_TIMEOUT_S)
        self._header_deadline: asyncio.TimerHandle | None = None
        self._head_bytes: int | None = 0  # of the head being received; None from its end to its message's
        self._heads = 0  # request heads received whole on this connection

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._await_request_head()

    def data_received(self, data: bytes) -> None:
        receiving_head, heads = self._head_bytes is not None, self._heads
        super().data_received(data)
        # Counted after parsing: bytes in which no head ended were all the head's (a body sent in the same
        # packets as its head is not counted), so a head is refused within one read (256 KiB) of the cap.
        if receiving_head and self._heads == heads and self._head_bytes is not None:
            self._head_bytes += len(data)
            if self._head_bytes > MAX_HEAD_BYTES and not self.transport.is_closing():
                self.transport.write(HEAD_TOO_LARGE)
                self.transport.close()

    def on_headers_complete(self) -> None:
        self._head_bytes, self._heads = None, self._heads + 1
        self._cancel_header_deadline()  # the head has arrived: its body and answer have own bounds
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._head_bytes = 0  # what comes next is the next request's head (pipelined, or kept alive)

    def on_response_complete(self) -> None:
        queued = bool(self.pipeline)  # a pipelined request whose head came while this one was answered
        super().on_response_complete()
        if not queued and not self.transport.is_closing():
            self._await_request_head()  # the next request on this connection gets the same time

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_header_deadline()
        super().connection_lost(exc)

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
        limit_concurrency=settings.max_connections,
        log_level=log_level,
        lifespan="on",
        server_header=False,
        log_config=None,
        access_log=False,
        **options,
    )
    config.header_timeout_s = settings.header_timeout_s  # type: ignore[attr-defined]
    return config


async def serve_app(app: Any, settings: Settings, *, log_level: str, sock: socket.socket | None) -> None:
    """Serve ``app`` on ``sock`` (bound), or on ``settings.host:port``, until stopped."""
    import uvicorn

    config = server_config(app, settings, log_level=log_level, host=settings.host, port=settings.port,
                           proxy_headers=False)  # fmt: skip
    await uvicorn.Server(config).serve(sockets=[sock] if sock else None)
