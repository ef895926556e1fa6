"""An answer's body read within its cap: declared, received and decoded, an error body left unread when asked.

Both clients' paths end here: the body as sent, decoded by its Content-Encoding under the cap (curl's and httpx's
own decoders give a whole chunk's output at once, however large: a 64 KB deflate chunk can be 64 MB).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from typing import NamedTuple

from serpfuse.sources.content_coding import Identity, OverBudget, decoder_for
from serpfuse.sources.transport_errors import ResponseTooLarge


class HttpResponse(NamedTuple):
    status: int
    headers: dict[str, str]  # lowercase names; repeated headers joined with ", "
    body: bytes


def declared_too_large(declared: str | None, limit: int) -> bool:
    return bool(declared and declared.strip().isdigit() and int(declared) > limit)


@cache
def decoding_threads() -> ThreadPoolExecutor:
    """The threads that inflate bodies: two, so a burst of bombs queues here rather than contending for the
    GIL with the event loop in as many threads as there are engines."""
    return ThreadPoolExecutor(max_workers=2, thread_name_prefix="serpfuse-inflate")


async def read_capped(
    status: int,
    headers: dict[str, str],
    chunks: Callable[[], AsyncIterator[bytes]],
    limit: int,
    read_error_body: bool,
    encoded: bool = False,
) -> HttpResponse:
    """The response with its body read chunk by chunk, ``ResponseTooLarge`` past ``limit`` bytes (declared,
    received, or decoded); a non-2xx body is left unread when ``read_error_body`` is False. ``encoded``: the
    chunks are the body as sent, to be decoded here by its Content-Encoding. Both clients' paths end here."""
    if not read_error_body and not 200 <= status < 300:
        return HttpResponse(status, headers, b"")
    too_large = ResponseTooLarge(f"response too large (over {limit} bytes)")
    if declared_too_large(headers.get("content-length"), limit):
        raise too_large
    decoder = decoder_for(headers.get("content-encoding")) if encoded else Identity()
    # Inflating is CPU work: one 16 KB chunk of a bomb is megabytes of output before the budget stops it, and
    # eleven engines' at once stalled the event loop (and /healthz) for 300 ms. zlib, brotli and zstd release
    # the GIL while they inflate, so a thread keeps the loop answering; a plain body needs no thread.
    threaded = not isinstance(decoder, Identity)
    body = bytearray()
    received = 0
    try:
        async for chunk in chunks():
            received += len(chunk)
            if received > limit:
                raise too_large
            room = limit - len(body)
            if threaded:
                body += await asyncio.get_running_loop().run_in_executor(
                    decoding_threads(), decoder.decode, chunk, room
                )
            else:
                body += decoder.decode(chunk, room)
        body += decoder.flush(limit - len(body))
    except OverBudget:
        raise too_large from None
    if len(body) > limit:
        raise too_large
    return HttpResponse(status, headers, bytes(body))
