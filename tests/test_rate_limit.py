"""The per-client rate limit protects an exposed server, not a local user: real `serpfuse serve` processes on
127.0.0.1 answering from the crw56 recording, and the rule that decides who is limited."""

from __future__ import annotations

import http.client
from urllib.parse import quote

import pytest

from redis_server import ServeProcess, start_serpfuse, stop
from serpfuse.serve.guard import _loopback_address, limits_loopback
from serpfuse.settings import Settings

Q = quote("top restaurants in belgrad")


def _get_from(server: ServeProcess, source: str, path: str) -> int:
    """GET ``path`` from a chosen loopback source address (127.0.0.2 is a second client on this machine)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30, source_address=(source, 0))
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


def _refusal_lines(server: ServeProcess) -> list[str]:
    return [line for line in server.log.read_text().splitlines() if "429 for client" in line]


def test_a_local_agent_is_not_rate_limited_by_default(recording, tmp_path):
    server = start_serpfuse(tmp_path, ["--replay", str(recording)])  # the default limits: burst 20
    try:
        codes = [server.get(f"/v1/search?q={Q}")[0] for _ in range(40)]
        assert codes.count(429) == 0 and set(codes) == {200}, codes
        assert _refusal_lines(server) == []
    finally:
        stop(server.proc)


def test_with_loopback_limited_429s_appear_and_each_client_is_logged_once_a_minute(recording, tmp_path):
    env = {
        "SERPFUSE_RATE_LIMIT_LOOPBACK": "true",
        "SERPFUSE_RATE_LIMIT_BURST": "3",
        "SERPFUSE_RATE_LIMIT_PER_MIN": "1",
    }
    with start_serpfuse(tmp_path, ["--replay", str(recording)], env=env) as server:
        first = [_get_from(server, "127.0.0.1", f"/v1/search?q={Q}") for _ in range(8)]
        second = [_get_from(server, "127.0.0.2", f"/v1/search?q={Q}") for _ in range(8)]
        assert first == [200] * 3 + [429] * 5, first
        assert second == [200] * 3 + [429] * 5, second  # a bucket per client
        lines = _refusal_lines(server)
        assert len(lines) == 2, lines  # ten 429s, one line per client
        assert "ip:127.0.0.1:" in lines[0] and "ip:127.0.0.2:" in lines[1]
        for line in lines:  # the settings that refused it, so whoever runs the server knows what to change
            assert "rate_limit_per_min=1" in line and "rate_limit_burst=3" in line
            assert "rate_limit_loopback=true" in line


def test_a_token_limits_loopback_callers_and_the_log_says_why(recording, tmp_path):
    env = {
        "SERPFUSE_API_TOKEN": "tok-3a9",
        "SERPFUSE_RATE_LIMIT_BURST": "2",
        "SERPFUSE_RATE_LIMIT_PER_MIN": "1",
    }
    with start_serpfuse(tmp_path, ["--replay", str(recording)], env=env) as server:
        codes = [server.get(f"/v1/search?q={Q}", {"Authorization": "Bearer tok-3a9"})[0] for _ in range(4)]
        assert codes == [200, 200, 429, 429], codes
        (line,) = _refusal_lines(server)
        assert "a token is set" in line and "rate_limit_loopback" in line
        assert "tok-3a9" not in server.log.read_text()  # the client is named by a hash of its token


@pytest.mark.parametrize(
    ("fields", "limited"),
    [
        ({}, False),  # a local server: its callers are its user
        ({"api_token": "t"}, True),  # a token: a proxy in front may forward every caller from loopback
        ({"host": "0.0.0.0", "api_token": "t"}, True),
        ({"host": "::1"}, False),
        ({"rate_limit_loopback": True}, True),
        ({"host": "0.0.0.0", "api_token": "t", "rate_limit_loopback": False}, False),
    ],
)
def test_who_decides_whether_loopback_callers_are_limited(fields, limited):
    assert limits_loopback(Settings(**fields)) is limited


def test_loopback_addresses_include_the_ipv4_mapped_form():
    assert all(_loopback_address(a) for a in ("127.0.0.1", "127.0.0.2", "::1", "::ffff:127.0.0.1"))
    assert not any(_loopback_address(a) for a in ("10.0.0.1", "::ffff:10.0.0.1", "testclient", ""))
