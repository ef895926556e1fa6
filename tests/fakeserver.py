"""A fake engine server on 127.0.0.1 for tests: real sockets, scripted misbehaviour.

Each path answers with a script of ``Reply`` objects (the last one repeats) or a function of the request. A
reply can wait before answering, drip its body byte by byte, send any status/headers/body, stream a huge body,
or reset the connection. The server runs an asyncio loop in a daemon thread, serves at most ``max_requests``
requests and stops itself after ``lifetime_s`` even if a test forgets to.

Also here: ``fake_engine``, a minimal engine module (INFO, build_request, parse) pointed at the server, so the
live source can be tested without depending on any real engine's format.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from urllib.parse import parse_qs, urlsplit

from serpfuse.engines.base import ChallengeDetected, EngineInfo, EngineQuery, RequestSpec
from serpfuse.engines.bodies import json_body
from serpfuse.engines.rows import make_row
from serpfuse.models import EngineRow


@dataclass
class Reply:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    delay_s: float = 0.0  # wait before the status line
    drip_interval_s: float = 0.0  # > 0: send the body drip_chunk bytes at a time, this far apart
    drip_chunk: int = 1
    huge_bytes: int = 0  # > 0: stream this many filler bytes as the body, with no Content-Length
    reset: bool = False  # abort with a TCP RST instead of answering
    reset_after_body_bytes: int | None = None  # send headers and this much body, then RST


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]  # lowercase names
    body: bytes
    at: float  # time.monotonic() when the request was read
    target: str = ""  # the request line's target, as sent
    lines: list[tuple[str, str]] = field(default_factory=list)  # every header line as sent, in order


Handler = Callable[[Seen], Reply]


def results_body(urls: list[str]) -> bytes:
    return json.dumps({"results": [{"url": u, "title": f"title of {u}"} for u in urls]}).encode()


def ok(urls: list[str], **kw) -> Reply:
    return Reply(200, {"Content-Type": "application/json"}, results_body(urls), **kw)


def challenge_page() -> Reply:
    """DuckDuckGo's bot blocker: status 202 and the anomaly modal."""
    page = b'<html><body><div class="anomaly-modal__title">Unfortunately, bots use DuckDuckGo too.</div>'
    page += b'<form id="challenge-form" action="/anomaly.js"></form></body></html>'
    return Reply(202, {"Content-Type": "text/html"}, page)


def cloudflare_challenge() -> Reply:
    page = b'<html><script src="/cdn-cgi/challenge-platform/h/b/orchestrate/jsch/v1"></script></html>'
    return Reply(403, {"Server": "cloudflare", "Content-Type": "text/html"}, page)


def echo_headers(status: int = 500) -> Handler:
    """An error page that echoes every request header (keys included) back in its body."""

    def handler(seen: Seen) -> Reply:
        dump = json.dumps({"error": "boom", "you_sent": seen.headers, "query": seen.query}).encode()
        return Reply(status, {"Content-Type": "application/json"}, dump)

    return handler


class FakeServer:
    def __init__(
        self,
        *,
        lifetime_s: float = 60.0,
        max_requests: int = 2000,
        nice: int = 0,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        """``nice``: the serving thread's niceness (Linux), so a fake streaming megabytes takes only the CPU
        the server under test leaves, as engines on other machines do. ``host``: any loopback address
        (127.0.0.2, ...), so several fakes are several hosts to a client's cookie jar, as engines are."""
        self.host = host
        self.lifetime_s = lifetime_s
        self.nice = nice
        self.max_requests = max_requests
        self.requests: list[Seen] = []
        self.open_connections = 0
        self._routes: dict[str, list[Reply] | Handler] = {}
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run_loop, name="fakeserver", daemon=True)
        self._server: asyncio.base_events.Server | None = None
        self._conn_tasks: set[asyncio.Task] = set()
        self.port = port  # 0: any free port

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def route(self, path: str, *replies: Reply | Handler) -> None:
        if len(replies) == 1 and callable(replies[0]):
            self._routes[path] = replies[0]
        else:
            self._routes[path] = list(replies)

    def route_prefix(self, prefix: str, *replies: Reply | Handler) -> None:
        """Every path under ``prefix`` (one not routed exactly) answers with this script: an engine's whole
        site, whichever pages it asks for (a token page first, then its search)."""
        self.route(prefix.rstrip("/") + "/*", *replies)

    def seen(self, path: str) -> list[Seen]:
        return [s for s in self.requests if s.path == path]

    def __enter__(self) -> FakeServer:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _run_loop(self) -> None:
        if self.nice:
            with contextlib.suppress(OSError, AttributeError):  # a thread's own niceness is Linux's
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), self.nice)
        self._loop.run_forever()

    def start(self) -> None:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(timeout=10)

    async def _start(self) -> None:
        self._server = await asyncio.start_server(self._handle, self.host, self.port, limit=256 * 1024)
        self.port = self._server.sockets[0].getsockname()[1]
        self._loop.call_later(self.lifetime_s, lambda: asyncio.ensure_future(self._shutdown()))

    def stop(self) -> None:
        if not self._thread.is_alive():
            return
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        if not self._loop.is_running():
            self._loop.close()

    async def _shutdown(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._conn_tasks):
            task.cancel()
        await asyncio.gather(*self._conn_tasks, return_exceptions=True)

    def _pick(self, seen: Seen) -> Reply:
        script = self._routes.get(seen.path)
        if script is None:  # the longest prefix route that covers the path
            covering = [p for p in self._routes if p.endswith("/*") and seen.path.startswith(p[:-1])]
            script = self._routes[max(covering, key=len)] if covering else None
        if script is None:
            return Reply(404, {"Content-Type": "text/plain"}, b"no route")
        if callable(script):
            return script(seen)
        return script.pop(0) if len(script) > 1 else script[0]

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._conn_tasks.add(task)
        self.open_connections += 1
        try:
            await self._serve(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        except asyncio.CancelledError:
            pass  # our own shutdown cancelled a reply in progress: end quietly, the server is going away
        finally:
            self.open_connections -= 1
            self._conn_tasks.discard(task)
            with contextlib.suppress(Exception):
                writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        if len(self.requests) >= self.max_requests:
            _reset(writer)
            return
        lines = head.decode("latin-1").split("\r\n")
        method, target, _ = lines[0].split(" ", 2)
        headers = {}
        sent: list[tuple[str, str]] = []
        for line in lines[1:]:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
                sent.append((name.strip(), value.strip()))
        length = int(headers.get("content-length") or 0)
        body = await reader.readexactly(length) if length else b""
        parts = urlsplit(target)
        seen = Seen(method, parts.path, parse_qs(parts.query), headers, body, time.monotonic(), target, sent)
        self.requests.append(seen)
        reply = self._pick(seen)
        if reply.delay_s:
            await asyncio.sleep(reply.delay_s)
        if reply.reset:
            _reset(writer)
            return
        await self._write(writer, reply)

    async def _write(self, writer: asyncio.StreamWriter, reply: Reply) -> None:
        headers = {"Connection": "close", **reply.headers}
        if not reply.huge_bytes:
            headers["Content-Length"] = str(len(reply.body))
        status_line = f"HTTP/1.1 {reply.status} Fake\r\n"
        writer.write((status_line + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n").encode())
        await writer.drain()
        if reply.reset_after_body_bytes is not None:
            writer.write(reply.body[: reply.reset_after_body_bytes])
            await writer.drain()
            await asyncio.sleep(0.05)
            _reset(writer)
            return
        if reply.huge_bytes:
            chunk = b"x" * 65536
            sent = 0
            while sent < reply.huge_bytes:
                writer.write(chunk)
                await writer.drain()
                sent += len(chunk)
        elif reply.drip_interval_s > 0:
            for i in range(0, len(reply.body), reply.drip_chunk):
                writer.write(reply.body[i : i + reply.drip_chunk])
                await writer.drain()
                await asyncio.sleep(reply.drip_interval_s)
        else:
            writer.write(reply.body)
            await writer.drain()
        writer.close()
        with contextlib.suppress(Exception):
            await writer.wait_closed()


def _reset(writer: asyncio.StreamWriter) -> None:
    """Close with RST (SO_LINGER 0), as a crashing server or a middlebox does."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


# --- a minimal engine module that talks to the fake server ---------------------------------------------------


def fake_engine(
    name: str,
    *,
    path: str | None = None,
    tier: str = "primary",
    region: str = "both",
    kind: str = "json",
    transport: str = "api",
    needs_key: bool = False,
    key_envs: tuple[str, ...] = (),
    time_range_support: bool = False,
    min_interval_s: float = 0.0,
    timeout_s: float = 15.0,
    read_error_body: bool = True,
) -> ModuleType:
    """An engine whose request is GET {base_url}{path}?q=... (key in X-Api-Key) and whose body is
    {"results": [{"url", "title"}]}; a page with challenge markers raises ChallengeDetected."""
    module = ModuleType(f"fake_engine_{name}")
    module.INFO = EngineInfo(
        name=name,
        website="http://127.0.0.1",
        tier=tier,  # type: ignore[arg-type]
        region=region,  # type: ignore[arg-type]
        kind=kind,  # type: ignore[arg-type]
        transport=transport,  # type: ignore[arg-type]
        needs_key=needs_key,
        key_envs=key_envs,
        time_range_support=time_range_support,
        timeout_s=timeout_s,
        min_interval_s=min_interval_s,
        read_error_body=read_error_body,
    )
    route = path or f"/{name}"

    def build_request(q: EngineQuery) -> RequestSpec | None:
        headers = {"X-Api-Key": q.api_key} if q.api_key else {}
        return RequestSpec("GET", f"{q.base_url}{route}", params={"q": q.text, "n": q.limit}, headers=headers)

    def parse(status: int, headers: dict, body: bytes, q: EngineQuery) -> list[EngineRow]:
        if status == 202 or b"challenge-form" in body or b"anomaly-modal" in body:
            raise ChallengeDetected()
        data = json_body(body)
        rows = [make_row(name, i, r.get("url"), r.get("title")) for i, r in enumerate(data["results"], 1)]
        return [r for r in rows if r is not None]

    module.build_request = build_request
    module.parse = parse
    return module
