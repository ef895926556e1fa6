"""Content-Encoding decoders that stop at a byte budget: gzip, deflate, br, zstd and their stacks.

The browser transport asks curl for the body as sent (encoded) and decodes it here, because curl's own decoder
inflates a whole network read at once, before any caller can look at the size: 1.6 KB of brotli becomes 1 GiB
in one callback. Every decoder here produces at most ``room`` bytes per call and raises ``OverBudget`` the
moment its output would pass that, so a bomb costs at most the budget plus one piece.
"""

from __future__ import annotations

import zlib
from typing import IO, Protocol, cast

from serpfuse.errors import SerpfuseError

PIECE = 64 * 1024  # the most any decoder produces in one step, so a step never overshoots the budget by much
MAX_CODINGS = 5  # more stacked encodings than any server applies is a hostile answer


class OverBudget(SerpfuseError):
    """The decoded body would pass the bytes still allowed."""


class UndecodableBody(SerpfuseError):
    """A Content-Encoding we cannot decode, or a body that is not what its encoding says."""


class Decoder(Protocol):
    def decode(self, data: bytes, room: int) -> bytes:
        """The output for ``data``; ``OverBudget`` rather than more than ``room`` bytes."""
        ...

    def flush(self, room: int) -> bytes:
        """Whatever output the decoder still holds at the end of the body."""
        ...


class Identity:
    def decode(self, data: bytes, room: int) -> bytes:
        if len(data) > room:
            raise OverBudget()
        return data

    def flush(self, room: int) -> bytes:
        return b""


class Zlib:
    """gzip (``wbits`` 31) or deflate: zlib-wrapped as the RFC says, else raw deflate as some servers send."""

    def __init__(self, wbits: int) -> None:
        self._may_be_raw = wbits == zlib.MAX_WBITS  # deflate, until its first bytes have been read
        self._inflater = zlib.decompressobj(wbits)

    def decode(self, data: bytes, room: int) -> bytes:
        may_be_raw, self._may_be_raw = self._may_be_raw, False
        try:
            return self._drain(data, room)
        except zlib.error:
            if not may_be_raw:
                raise UndecodableBody() from None
        self._inflater = zlib.decompressobj(-zlib.MAX_WBITS)
        return self.decode(data, room)

    def _drain(self, data: bytes, room: int) -> bytes:
        out = bytearray()
        # Until a step gives nothing: zlib can hold output back even once it has taken all the input.
        piece = self._inflater.decompress(data, PIECE)
        while piece:
            out += piece
            if len(out) > room:
                raise OverBudget()
            piece = self._inflater.decompress(self._inflater.unconsumed_tail, PIECE)
        return bytes(out)

    def flush(self, room: int) -> bytes:
        try:
            rest = self._inflater.flush()
        except zlib.error:
            raise UndecodableBody() from None
        if len(rest) > room:
            raise OverBudget()
        return rest


class Brotli:
    def __init__(self) -> None:
        import brotli

        self._error = brotli.error
        self._inflater = brotli.Decompressor()

    def decode(self, data: bytes, room: int) -> bytes:
        out = bytearray()
        try:
            piece = self._inflater.process(data, output_buffer_limit=PIECE)
            while True:
                out += piece
                if len(out) > room:
                    raise OverBudget()
                # Output held back by the limit is fetched with empty input until the decoder wants more.
                if self._inflater.can_accept_more_data() or self._inflater.is_finished():
                    return bytes(out)
                piece = self._inflater.process(b"", output_buffer_limit=PIECE)
        except self._error:
            raise UndecodableBody() from None

    def flush(self, room: int) -> bytes:
        return b""


class _Sink:
    """Where zstandard's stream writer puts its output, PIECE bytes at a time; it refuses past the budget."""

    def __init__(self) -> None:
        self.out = bytearray()
        self.room = 0

    def write(self, data: bytes) -> int:
        if len(self.out) + len(data) > self.room:
            raise OverBudget()
        self.out += data
        return len(data)


class Zstd:
    def __init__(self) -> None:
        import zstandard

        self._error = zstandard.ZstdError
        self._sink = _Sink()
        # A writer, not decompressobj: decompressobj returns a whole input's output at once, however large.
        self._inflater = zstandard.ZstdDecompressor().stream_writer(
            cast(IO[bytes], self._sink),  # the writer calls only write(), which _Sink has
            write_size=PIECE,
            closefd=False,
        )

    def decode(self, data: bytes, room: int) -> bytes:
        self._sink.room = room
        try:
            self._inflater.write(data)
        except self._error:
            raise UndecodableBody() from None
        out, self._sink.out = bytes(self._sink.out), bytearray()
        return out

    def flush(self, room: int) -> bytes:
        return b""


class Stack:
    """Several encodings, decoded last-applied first; each stage gets the whole budget, the last one's output
    is the body."""

    def __init__(self, stages: list[Decoder]) -> None:
        self._stages = stages

    def decode(self, data: bytes, room: int) -> bytes:
        for stage in self._stages:
            data = stage.decode(data, room)
        return data

    def flush(self, room: int) -> bytes:
        data = b""
        for stage in self._stages:
            data = (stage.decode(data, room) if data else b"") + stage.flush(room)
        return data


def _one(coding: str) -> Decoder:
    if coding in ("", "identity"):
        return Identity()
    if coding in ("gzip", "x-gzip"):
        return Zlib(zlib.MAX_WBITS | 16)
    if coding == "deflate":
        return Zlib(zlib.MAX_WBITS)
    if coding == "br":
        return Brotli()
    if coding == "zstd":
        return Zstd()
    raise UndecodableBody()


def decoder_for(content_encoding: str | None) -> Decoder:
    """The decoder for a Content-Encoding header's value (codings listed in the order they were applied)."""
    codings = [c.strip().lower() for c in (content_encoding or "").split(",")]
    codings = [c for c in codings if c not in ("", "identity")]
    if len(codings) > MAX_CODINGS:
        raise UndecodableBody()
    if not codings:
        return Identity()
    stages = [_one(c) for c in reversed(codings)]
    return stages[0] if len(stages) == 1 else Stack(stages)
