"""Decompression bombs for tests: small bodies that inflate to ``mib`` MiB of zeros, each valid to its end.

gzip and deflate repeat one compressed MiB (a full flush resets the compressor, so every further MiB of zeros
compresses to the same bytes) and end with the right checksum, so they cost milliseconds to build however large.
"""

from __future__ import annotations

import struct
import zlib

MIB = 1 << 20
_ZEROS = b"\0" * MIB


def _zlib_bomb(mib: int, wbits: int) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, wbits)
    head = packer.compress(_ZEROS) + packer.flush(zlib.Z_FULL_FLUSH)
    block = packer.compress(_ZEROS) + packer.flush(zlib.Z_FULL_FLUSH)
    end = packer.flush()
    gzip = wbits == 31
    check = 0 if gzip else 1
    for _ in range(mib):
        check = (zlib.crc32 if gzip else zlib.adler32)(_ZEROS, check)
    if gzip:  # CRC-32 and the size, little-endian
        end = end[:-8] + struct.pack("<II", check, (mib * MIB) & 0xFFFFFFFF)
    else:  # Adler-32, big-endian
        end = end[:-4] + struct.pack(">I", check)
    return head + block * (mib - 1) + end


def gzip_bomb(mib: int) -> bytes:
    return _zlib_bomb(mib, 31)


def deflate_bomb(mib: int) -> bytes:
    """zlib-wrapped deflate, as RFC 9110 means by ``Content-Encoding: deflate``."""
    return _zlib_bomb(mib, 15)


def brotli_bomb(mib: int) -> bytes:
    import brotli

    packer = brotli.Compressor(quality=1)  # quality 1: 0.6 s a GiB, and still a few hundred bytes a MiB
    return b"".join([*(packer.process(_ZEROS) for _ in range(mib)), packer.finish()])


def zstd_bomb(mib: int) -> bytes:
    import zstandard

    packer = zstandard.ZstdCompressor(level=1).compressobj()
    return b"".join([*(packer.compress(_ZEROS) for _ in range(mib)), packer.flush()])


BOMBS = {"gzip": gzip_bomb, "deflate": deflate_bomb, "br": brotli_bomb, "zstd": zstd_bomb}
