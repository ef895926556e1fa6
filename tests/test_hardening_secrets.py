"""Secrets never leak, however they are echoed (issue 10, item 6): masking catches raw, JSON-escaped,
percent-encoded, HTML-referenced and partial echoes; every process logs through one masked set-up with no
request URL, credential or query at INFO; replay masks what it re-parses; a recording cannot point outside
itself."""

from __future__ import annotations

import base64
import json
import logging
import subprocess
import sys
from urllib.parse import quote, quote_plus

import pytest

from conftest import need
from fakeserver import FakeServer, Reply, echo_headers
from redis_server import CLI, isolated_env
from serpfuse.secrets import PARTIAL_CHARS, KeyStore, Masker, encoded_forms
from serpfuse.serve.logs import setup_logging
from serpfuse.sources.replay import ReplayError, load_recording

KEY = "sk-live-7f3a9c2e41d8b6f05a7e"
PASSWORD = "pw-searxng-4e8b1d7a9c"


def leaks(text: str, secret: str = KEY) -> list[str]:
    """Every PARTIAL_CHARS-long piece of ``secret`` found in ``text``."""
    return [
        secret[i : i + PARTIAL_CHARS]
        for i in range(len(secret) - PARTIAL_CHARS + 1)
        if secret[i : i + PARTIAL_CHARS] in text
    ]


@pytest.mark.parametrize(
    "echo",
    [
        KEY,
        f"url?key={quote(KEY)}&x=1",
        json.dumps({"k": KEY}).replace("s", "\\u0073"),
        "".join(f"\\u{ord(c):04x}" for c in KEY),
        "".join(f"%{ord(c):02X}" for c in KEY),
        "".join(f"&#{ord(c)};" for c in KEY),
        "".join(f"&#x{ord(c):x};" for c in KEY),
        KEY[:-1],
        KEY[1:],
        "prefix " + KEY[5 : 5 + PARTIAL_CHARS] + " suffix",
    ],
)
def test_every_form_of_an_echo_is_masked(echo):
    masked = Masker([KEY]).mask(f"before {echo} after")
    assert "***" in masked and masked.startswith("before ") and masked.endswith(" after")
    assert not leaks(masked)
    assert not leaks(json.loads(json.dumps(masked)))


ENCODINGS = {
    "base64": base64.b64encode,
    "base64-urlsafe": base64.urlsafe_b64encode,
    "hex": lambda b: b.hex().encode(),
    "HEX": lambda b: b.hex().upper().encode(),
}


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("before", [b"", b"u", b"us", b"Basic admin:", b'{"api_key": "'])
@pytest.mark.parametrize("secret", [KEY, KEY[:-1]])
def test_an_encoded_echo_is_masked_at_any_alignment(encoding, before, secret):
    """A key echoed inside an encoded text (a Basic auth header, a request dumped as base64 or hex): what is
    left shows no 12 characters of any encoded form of the key, and decodes to no piece of the key."""
    echo = ENCODINGS[encoding](before + secret.encode() + b'", "n": 1}').decode()
    masked = Masker([KEY]).mask(f"before {echo} after")
    assert "***" in masked and masked.startswith("before ") and masked.endswith(" after")
    for form in encoded_forms(KEY):
        assert not leaks(masked, form), form
    assert not leaks(masked)


def test_encoded_forms_cost_about_what_plain_masking_costs():
    """Most text holds no long base64/hex run: the encoded forms add one regex scan, not a search per piece
    (measured side by side: with and without the forms)."""
    import time

    texts = [
        f"Rust async runtime {i}: tokio, building blocks https://example.com/p/{i}?q=rust" for i in range(300)
    ]

    def cost(masker):
        started = time.perf_counter()
        for _ in range(5):
            for text in texts:
                masker.mask(text)
        return time.perf_counter() - started

    with_forms = Masker([KEY, PASSWORD])
    plain = Masker([KEY, PASSWORD])
    plain._encoded_pieces = {}
    ratios = sorted(cost(with_forms) / cost(plain) for _ in range(3))
    assert ratios[1] < 3, ratios


def test_text_without_a_secret_is_unchanged():
    text = "a %41 normal &amp; text \\u0041 with sk-live but nothing longer"
    assert Masker([KEY]).mask(text) == text
    encoded = "c2stbGl2ZS03ZjN 736b2d6c6976652d3766 and a long run: abcdefghijklmnopqrstuvwxyz0123456789+/_-"
    assert Masker([KEY]).mask(encoded) == encoded


def test_mask_bytes_keeps_what_is_not_utf8(tmp_path):
    keys = KeyStore(env={"SERPFUSE_BRAVE_API_KEY": KEY}, keys_file=tmp_path / "keys.json")
    body = b"\xff\xfe" + json.dumps({"echo": KEY}).replace("s", "\\u0073").encode() + b"\x80"
    masked = keys.mask_bytes(body)
    assert masked.startswith(b"\xff\xfe") and masked.endswith(b"\x80") and b"***" in masked
    assert not leaks(masked.decode("latin-1"))


def test_the_log_filter_masks_every_record(monkeypatch, capsys):
    monkeypatch.setenv("SERPFUSE_API_TOKEN", KEY)
    root = logging.getLogger()
    saved = (root.handlers[:], root.filters[:], root.level)
    try:
        setup_logging()
        logging.getLogger("serpfuse.anything").warning("sent %s", "\\u0073" + KEY[1:])
        try:
            raise RuntimeError(f"failed for {KEY[:-2]}")
        except RuntimeError:
            logging.getLogger("serpfuse.anything").exception("boom")
        logging.getLogger("httpx").info("HTTP Request: GET http://x/?q=secret+query")
        err = capsys.readouterr().err
    finally:
        root.handlers[:], root.filters[:] = saved[0], saved[1]
        root.setLevel(saved[2])
    assert "sent ***" in err and "boom" in err and "RuntimeError" in err
    assert not leaks(err) and "secret query" not in err and "secret+query" not in err


def _run(args: list[str], env: dict, home) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", CLI, *args],
        env=isolated_env(home, env),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_live_search_logs_no_url_credential_or_query(tmp_path):
    query = "unusual hardening query words"
    with FakeServer(lifetime_s=60) as server:
        server.route("/search", echo_headers(500))  # an error page quoting the request: auth header included
        base = server.url.replace("http://", f"http://admin:{PASSWORD}@")
        env = {"SERPFUSE_SEARXNG_URL": base, "SERPFUSE_BRAVE_API_KEY": KEY}
        result = _run(["search", query, "--engine", "searxng", "--json", "--no-cache"], env, tmp_path)
        assert server.seen("/search"), "the fake SearXNG was not asked"
    out = result.stdout + result.stderr
    assert PASSWORD not in out and not leaks(out, PASSWORD) and not leaks(out)
    assert query not in result.stderr and quote(query) not in result.stderr
    assert str(server.port) not in result.stderr  # no request URL


def _recording(tmp_path, raw: bytes) -> None:
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "brave.json").write_bytes(raw)
    entry = {"query": "python", "engines": {"brave": {"status": "ok", "rows": [], "raw_file": "raw/brave.json",
             "http_status": 200, "content_type": "application/json"}}}  # fmt: skip
    (tmp_path / "q1.json").write_text(json.dumps(entry))
    index = {"format": "serpfuse-replay/1", "queries": [{"query": "python", "file": "q1.json"}]}
    (tmp_path / "index.json").write_text(json.dumps(index))


def test_replay_masks_what_it_parses_again(tmp_path, data_dir):
    brave = json.loads(need(data_dir / "api-json" / "brave.json").read_text())
    brave["web"]["results"][0]["title"] = "python key " + "".join(f"\\u{ord(c):04x}" for c in KEY)
    raw = json.dumps(brave).replace("\\\\u", "\\u").encode()  # the escape as the engine sent it
    recording = tmp_path / "rec"
    recording.mkdir()
    _recording(recording, raw)
    result = _run(["search", "python", "--replay", str(recording), "--json", "--no-cache"],
                  {"SERPFUSE_BRAVE_API_KEY": KEY}, tmp_path)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "python key ***" in result.stdout
    assert not leaks(result.stdout + result.stderr)


def test_an_index_entry_outside_the_recording_is_refused(tmp_path):
    (tmp_path / "index.json").write_text(
        json.dumps({"format": "serpfuse-replay/1", "queries": [{"query": "x", "file": "../../etc/passwd"}]})
    )
    with pytest.raises(ReplayError, match="outside the recording"):
        load_recording(tmp_path)


def test_the_mcp_server_logs_no_url_credential_or_query(tmp_path):
    from test_hardening_mcp import Stdio

    query = "another unusual hardening query"
    with FakeServer(lifetime_s=60) as server:
        server.route("/search", Reply(200, {"Content-Type": "application/json"}, b'{"results": []}'))
        base = server.url.replace("http://", f"http://admin:{PASSWORD}@")
        mcp = Stdio(None, tmp_path, {"SERPFUSE_SEARXNG_URL": base, "SERPFUSE_ENGINES": "searxng"})
        try:
            mcp.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}))  # fmt: skip
            assert "result" in mcp.reply()
            mcp.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
            answer = mcp.call(2, json.dumps({"query": query}))
            assert answer["result"]["structuredContent"]["engines"][0]["engine"] == "searxng"
        finally:
            stderr = mcp.close()
        assert server.seen("/search"), "the fake SearXNG was not asked"
    assert PASSWORD not in stderr and "admin:" not in stderr
    assert query not in stderr and quote(query) not in stderr and quote_plus(query) not in stderr
