"""Hostile callers against a real `serpfuse serve` process (issue 10): every hand-made input of the probe is a
4xx with a message a person can act on, never a 500; bodies are counted as they arrive, chunked or form;
wrong tokens are rate limited; the OpenAPI document states the bounds the server enforces."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from http.client import HTTPConnection
from urllib.parse import quote

import pytest

from redis_server import CLI, ServeProcess, free_port, http, isolated_env, start_serpfuse, stop
from serpfuse.settings import Settings

QUERY = "top restaurants in belgrad"
TOKEN = "hardening-token-5b2d"


def _error(raw: bytes) -> str:
    body = json.loads(raw)
    return body["error"]["message"] if "error" in body else body["detail"]["error"]


@pytest.mark.parametrize(
    ("path", "raw", "needle"),
    [
        ("/v1/search", b'{"query": "a \\ud800"}', "lone surrogate"),
        ("/v1/search", b'{"query": "ok", "engines": ["\\udfff"]}', "lone surrogate"),
        ("/v1/search", b'{"query": "ok", "\\ud800": 1}', "lone surrogate"),
        ("/v1/search", b"[" * 60_000, "nests deeper"),
        (
            "/v1/search",
            b'{"query": {"a": {"b": {"c": {"d": {"e": {"f": {"g": {"h": 1}}}}}}}}}',
            "nests deeper",
        ),
        ("/v1/search", b'{"query": "x", "self": 1}', "unknown key 'self'"),
        ("/v1/search", b'{"query": "x", "minScore": NaN}', "finite number"),
        ("/v1/search", b'{"query": "x", "region": "ab\\n-zz"}', "region: must be a code"),
        ("/v1/search", b'{"query": "x", "includeDomains": ["a\\nb.com"]}', "not a domain"),
        ("/tavily/search", b'{"query": "x", "days": 1000000000}', "days must be an integer"),
        ("/tavily/search", b'{"query": "x", "days": true}', "days must be an integer"),
        ("/tavily/search", b'{"query": "x", "bogus": 1}', "unknown key 'bogus'"),
        ("/tavily/search", b'{"query": ["x"]}', "query must be a string"),
        ("/tavily/search", b'{"query": "a \\ud800"}', "lone surrogate"),
    ],
)
def test_hostile_bodies_are_400s_that_say_what_is_wrong(api: ServeProcess, path, raw, needle):
    status, headers, body = api.post(path, None, raw=raw)
    assert status == 400, body
    assert headers["content-type"].startswith("application/json")
    message = _error(body)
    assert needle in message and "\n" not in message
    assert not message.startswith("region: region")  # the field is named once


@pytest.mark.parametrize(
    "query",
    [
        f"q={quote(QUERY)}&region=ab%0A-zz",
        f"q={quote(QUERY)}&language=en%0A",
        f"q={quote(QUERY)}&region=-",
        f"q={quote(QUERY)}&min_score=-1",
        "q=%ED%A0%80",  # a lone surrogate, UTF-8-encoded (invalid UTF-8)
    ],
)
def test_hostile_query_strings_are_4xx(api: ServeProcess, query):
    status, _, body = api.get(f"/v1/search?{query}")
    assert 400 <= status < 500, body


def _chunked(api: ServeProcess, path: str, content_type: str, chunks) -> tuple[int, bytes]:
    conn = HTTPConnection("127.0.0.1", api.port, timeout=30)
    try:
        conn.putrequest("POST", path)
        conn.putheader("Content-Type", content_type)
        conn.putheader("Transfer-Encoding", "chunked")
        conn.endheaders()
        try:
            for chunk in chunks:
                conn.send(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            conn.send(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server may answer and close before the whole body is sent
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


@pytest.mark.parametrize(
    ("path", "content_type"),
    [
        ("/search", "application/x-www-form-urlencoded"),
        ("/search", "multipart/form-data; boundary=xyz"),
        ("/v1/search", "application/json"),
        ("/tavily/search", "application/json"),
    ],
)
def test_chunked_bodies_count_against_the_limit(api: ServeProcess, path, content_type):
    first = b"q=" if "urlencoded" in content_type else b'{"query": "'
    status, body = _chunked(api, path, content_type, [first, *([b"a" * 16_384] * 40)])
    # Refused before the whole body is read: 413 at the limit, or 400 as soon as a multipart body is garbled.
    assert status == 413 or ("multipart" in content_type and status == 400), body


def test_a_small_form_post_still_works(api: ServeProcess):
    body = f"q={quote(QUERY)}&format=json".encode()
    status, _, raw = http(
        "POST", api.base + "/search", data=body, headers={"Content-Type": "application/x-www-form-urlencoded"}
    )
    assert status == 200 and json.loads(raw)["results"]


def test_openapi_states_the_bounds(api: ServeProcess):
    doc = json.loads(api.get("/openapi.json")[2])
    params = {p["name"]: p["schema"] for p in doc["paths"]["/v1/search"]["get"]["parameters"]}
    assert params["q"]["minLength"] == 1 and params["q"]["maxLength"] == 500
    assert params["limit"]["minimum"] == 1 and params["limit"]["maximum"] == 20
    assert params["min_score"]["minimum"] == 0
    request = doc["components"]["schemas"]["SearchRequest"]["properties"]
    assert request["query"]["minLength"] == 1
    ref = doc["paths"]["/tavily/search"]["post"]["requestBody"]["content"]["application/json"]["schema"][
        "$ref"
    ]
    tavily = doc["components"]["schemas"][ref.rsplit("/", 1)[1]]
    assert tavily["properties"]["days"]["maximum"] >= 1 and tavily["additionalProperties"] is False


def test_wrong_tokens_are_rate_limited(recording, tmp_path):
    env = {"SERPFUSE_API_TOKEN": TOKEN, "SERPFUSE_RATE_LIMIT_BURST": "5", "SERPFUSE_RATE_LIMIT_PER_MIN": "1"}
    server = start_serpfuse(tmp_path, ["--replay", str(recording)], env=env)
    try:
        codes = [
            server.get("/v1/search?q=x", headers={"Authorization": f"Bearer guess-{i}"})[0] for i in range(12)
        ]
        assert codes[:5] == [401] * 5 and set(codes[5:]) == {429}, codes
    finally:
        stop(server.proc)


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


def test_an_ipv6_literal_host_binds(recording, tmp_path):
    if not _ipv6_loopback():
        pytest.skip("this machine has no IPv6 loopback")
    port = free_port()
    cmd = [
        sys.executable,
        "-c",
        CLI,
        "serve",
        "--host",
        "[::1]",
        "--port",
        str(port),
        "--replay",
        str(recording),
    ]
    proc = subprocess.Popen(cmd, env=isolated_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                if http("GET", f"http://[::1]:{port}/healthz")[0] == 200:
                    break
            except OSError:
                time.sleep(0.1)
        assert http("GET", f"http://[::1]:{port}/healthz")[0] == 200
    finally:
        stop(proc)
    assert f"http://[::1]:{port}" in proc.stdout.read().decode()
    with pytest.raises(ValueError, match="host"):
        Settings(host="bad host\n")
