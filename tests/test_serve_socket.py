"""The socket ``serve`` listens on: each accepted connection must have TCP_NODELAY, or a keep-alive client waits
~40 ms (its delayed ACK) for every answer the server writes in two parts (head, then body)."""

from __future__ import annotations

import asyncio
import socket

from serpfuse.cli.serve import listen


def test_connections_accepted_on_the_serve_socket_have_nodelay():
    sock = listen("127.0.0.1", 0)
    port = sock.getsockname()[1]
    seen: list[int] = []

    class Probe(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            accepted = transport.get_extra_info("socket")
            seen.append(accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            transport.close()

    async def run() -> None:
        server = await asyncio.get_running_loop().create_server(Probe, sock=sock)
        async with server:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            await reader.read()  # the server closes it once it has looked
            writer.close()

    asyncio.run(run())
    assert seen and seen[0] != 0
