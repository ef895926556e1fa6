"""The HTTP API for the fuzzer: ``serpfuse serve --replay`` whose page reader reaches nothing beyond loopback.

``python tests/fuzz_app.py --host 127.0.0.1 --port P --replay RECORDING``. The searches answer from the
recording; every page read (``/v1/read``, ``/tavily/extract``, ``/v1/scrape``, Tavily's include_raw_content)
keeps the reader's whole policy (schemes, ports, refused addresses, robots.txt) but resolves every name to
127.0.0.1 and connects every checked address to a page server in this process, which answers one small
article on every path (and no robots.txt). That server speaks plain HTTP and holds no certificate a client
would trust, so https pages are refused (422) before any connection. Settings, service, app and uvicorn are
the shipped code path.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
from dataclasses import fields

from serpfuse.reader.guard import IPAddress, Policy, Refused, Target
from serpfuse.reader.service import Reader
from serpfuse.serve.http_api import serve
from serpfuse.service import SearchService
from serpfuse.settings import load_settings

LOOPBACK = ipaddress.IPv4Address("127.0.0.1")
ARTICLE = (
    b"<html><head><title>Harbour news</title></head><body><article><h1>Harbour news</h1>"
    + b"<p>The harbour master opened the new pontoon; berths, tides and the winter works are listed.</p>" * 8
    + b"</article></body></html>"
)


def reply(status: str, content_type: str, body: bytes) -> bytes:
    head = f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
    return (head + "Connection: close\r\n\r\n").encode() + body


async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        request_line = (await reader.readuntil(b"\r\n\r\n")).split(b"\r\n", 1)[0]
        path = request_line.split(b" ")[1] if request_line.count(b" ") >= 2 else b"/"
        if path.split(b"?", 1)[0] == b"/robots.txt":
            writer.write(reply("404 Not Found", "text/plain", b""))
        else:
            writer.write(reply("200 OK", "text/html; charset=utf-8", ARTICLE))
        await writer.drain()
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
        pass
    finally:
        writer.close()


class LoopbackResolver:
    """Every name is 127.0.0.1: no name is ever looked up."""

    async def resolve(self, host: str, port: int) -> list[IPAddress]:
        return [LOOPBACK]


class PlainHttpReader(Reader):
    """The shipped reader, refusing https (checked before each hop, with robots.txt)."""

    async def _robots_check(self, target: Target) -> None:
        if target.scheme != "http":
            raise Refused("refused: this test server reads http pages only")
        await super()._robots_check(target)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--replay", required=True)
    args = parser.parse_args()
    settings = load_settings(None, host=args.host, port=args.port, replay=args.replay)
    pages = await asyncio.start_server(answer, "127.0.0.1", 0)
    pages_port = pages.sockets[0].getsockname()[1]
    service = SearchService.from_settings(settings)
    shipped = Reader.from_settings(settings, service.cache)
    parts = {f.name: getattr(shipped, f.name) for f in fields(shipped)}
    parts.update(
        robots=True,  # the scheme check runs with the robots check
        policy=Policy(allow_loopback=True, ports=frozenset(settings.read_ports)),
        resolver=LoopbackResolver(),
        dial=lambda address, port: ("127.0.0.1", pages_port),
    )
    reader = PlainHttpReader(**parts)
    async with pages:
        await serve(service, reader=reader)


if __name__ == "__main__":
    asyncio.run(main())
