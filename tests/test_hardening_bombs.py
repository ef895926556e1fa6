"""Decompression bombs on the browser transport (curl_cffi): the size cap counts decoded bytes as they arrive.

Each encoding's bomb (a few KB to a few hundred KB that inflate to ``BOMB_MIB`` MiB) is served from a loopback
fake to a fresh process (``bomb_probe.py``), which measures how far its peak RSS rises during the call: bounded
by the cap (5 MiB) and a few decode steps, not by the inflated size. The answer is ``ResponseTooLarge``, not a
timeout, so it comes before the deadline. Well-formed encoded pages still decode to the same bytes.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from bombs import BOMBS
from fakeserver import Reply
from serpfuse.engines.base import EngineError, RequestSpec
from serpfuse.sources.transport import Transport
from serpfuse.sources.transport_errors import ResponseTooLarge
from serpfuse.sources.transport_limits import DEFAULT_MAX_BYTES

HERE = Path(__file__).resolve().parent
BOMB_MIB = 256  # unbounded, this is 256 MiB of RSS; bounded, the cap (5 MiB) and a few 64 KiB steps
MAX_RSS_GROWTH_MB = 48
DEADLINE_S = 3.0
HTML = {"Content-Type": "text/html"}
PAGE = b"<html><body>" + b"<p>a result, and another</p>" * 2000 + b"</body></html>"


@pytest.mark.parametrize("encoding", list(BOMBS))
def test_a_bomb_is_refused_at_the_cap_without_inflating(server, encoding):
    bomb = BOMBS[encoding](BOMB_MIB)
    server.route("/warm", Reply(200, HTML, b"warm"))
    server.route("/bomb", Reply(200, {**HTML, "Content-Encoding": encoding}, bomb))
    probe = subprocess.run(
        [sys.executable, str(HERE / "bomb_probe.py"), f"{server.url}/bomb", str(DEADLINE_S)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert probe.returncode == 0, probe.stderr[-2000:]
    out = json.loads(probe.stdout)
    assert out.get("error") == "ResponseTooLarge", out
    assert out["message"] == f"response too large (over {DEFAULT_MAX_BYTES} bytes)"
    assert out["took_s"] < DEADLINE_S, out
    assert out["rss_growth_mb"] < MAX_RSS_GROWTH_MB, f"{encoding}: {len(bomb)} bytes raised RSS by {out}"


def _encoded(encoding: str, body: bytes) -> bytes:
    if encoding == "gzip":
        return gzip.compress(body)
    if encoding == "deflate":
        return zlib.compress(body)
    if encoding == "raw-deflate":  # what some servers send as "deflate"
        packer = zlib.compressobj(6, zlib.DEFLATED, -15)
        return packer.compress(body) + packer.flush()
    if encoding == "br":
        return pytest.importorskip("brotli").compress(body)
    if encoding == "zstd":
        return pytest.importorskip("zstandard").ZstdCompressor().compress(body)
    if encoding == "gzip, br":  # gzip applied first, then brotli
        return _encoded("br", gzip.compress(body))
    raise AssertionError(encoding)


@pytest.fixture
async def curl():
    async with Transport(trust_env=False, impersonate=True) as t:
        yield t


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "raw-deflate", "br", "zstd", "gzip, br"])
async def test_encoded_pages_decode_to_the_page(server, curl, encoding):
    header = "deflate" if encoding == "raw-deflate" else encoding
    server.route("/p", Reply(200, {**HTML, "Content-Encoding": header}, _encoded(encoding, PAGE)))
    response = await curl.send(RequestSpec("GET", server.url + "/p"), browser=True, timeout_s=5)
    assert (response.status, response.body) == (200, PAGE)
    # Fed one byte at a time, as a slow server sends it, the decoders give the same page.
    server.route("/drip", Reply(200, {**HTML, "Content-Encoding": header}, _encoded(encoding, PAGE[:3000]),
                                drip_interval_s=0.0005, drip_chunk=7))  # fmt: skip
    response = await curl.send(RequestSpec("GET", server.url + "/drip"), browser=True, timeout_s=10)
    assert response.body == PAGE[:3000]


async def test_the_cap_is_on_the_decoded_size(server, curl):
    body = b"x" * 4000
    server.route("/g", Reply(200, {**HTML, "Content-Encoding": "br"}, _encoded("br", body)))
    ok = await curl.send(RequestSpec("GET", server.url + "/g"), browser=True, timeout_s=5, max_bytes=4000)
    assert ok.body == body  # exactly at the cap is fine
    with pytest.raises(ResponseTooLarge):  # a few dozen bytes on the wire, one over the cap decoded
        await curl.send(RequestSpec("GET", server.url + "/g"), browser=True, timeout_s=5, max_bytes=3999)


@pytest.mark.parametrize(
    ("encoding", "body"),
    [("compress", b"whatever"), ("gzip", b"not gzip at all"), ("br", b"\xff" * 64), ("zstd", b"nope" * 8)],
)
async def test_an_undecodable_body_is_an_engine_error(server, curl, encoding, body):
    server.route("/u", Reply(200, {**HTML, "Content-Encoding": encoding}, body))
    with pytest.raises(EngineError) as info:
        await curl.send(RequestSpec("GET", server.url + "/u?key=secret"), browser=True, timeout_s=5)
    assert str(info.value) == "undecodable response body (127.0.0.1)"
    assert info.value.__cause__ is None and info.value.__context__ is None


async def test_an_unread_error_body_is_not_decoded(server, curl):
    server.route("/e", Reply(503, {**HTML, "Content-Encoding": "compress"}, b"whatever"))
    response = await curl.send(
        RequestSpec("GET", server.url + "/e"), browser=True, timeout_s=5, read_error_body=False
    )
    assert (response.status, response.body) == (503, b"")
