"""A real `serpfuse serve --redis` against a real redis-server that hangs (SIGSTOP), comes back (SIGCONT) and
dies (killed): searches go on at the healthy pace, each change of state is one log line, and /healthz says
which store is being skipped. Times are compared with the same server's searches while Redis was healthy."""

from __future__ import annotations

import os
import signal
import statistics
import time

import pytest

from conftest import need
from redis_server import start_redis, start_serpfuse, stop
from serpfuse.state.failsoft import RETRY_S

pytestmark = [pytest.mark.redis, pytest.mark.slow]

QUERY = "top restaurants in belgrad"
# Every request spends from the client's bucket in Redis; none may be refused for it.
ENV = {"SERPFUSE_RATE_LIMIT_PER_MIN": "1000000", "SERPFUSE_RATE_LIMIT_BURST": "100000"}


def _timed_search(server) -> float:
    started = time.perf_counter()
    status, _, body = server.json("POST", "/v1/search", {"query": QUERY, "cache": False})
    took = time.perf_counter() - started
    assert status == 200 and body["results"], body
    return took


def _log_lines(server, text: str) -> int:
    return sum(text in line for line in server.log.read_text().splitlines())


def test_a_hung_then_dead_redis_slows_no_search_and_says_so_once(data_dir, tmp_path):
    recording = need(data_dir / "crw56" / "searxng_raw.json")
    redis = start_redis(tmp_path / "redis")
    server = start_serpfuse(tmp_path / "serve", ["--replay", str(recording), "--redis", redis.url], env=ENV)
    try:
        for _ in range(3):
            _timed_search(server)  # warm: imports, connections, the recording's first parse
        healthy = [_timed_search(server) for _ in range(15)]

        os.kill(redis.proc.pid, signal.SIGSTOP)  # hung: connections are accepted, nothing is answered
        hung: list[float] = []
        until = time.monotonic() + RETRY_S + 2.0  # long enough for a probe, which finds it still hung
        while time.monotonic() < until:
            hung.append(_timed_search(server))
        status, _, health = server.json("GET", "/healthz")
        assert status == 503 and health["status"] == "degraded", health
        assert health["degraded"] == {"redis": "TimeoutError"} and health["redis"] == "unreachable"
        assert _log_lines(server, "redis failed (TimeoutError)") == 1  # not one per search, nor per probe

        os.kill(redis.proc.pid, signal.SIGCONT)
        deadline = time.monotonic() + RETRY_S + 15.0
        while True:
            _timed_search(server)  # a search's first store call is the probe that closes the breaker
            status, _, health = server.json("GET", "/healthz")
            if status == 200 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert status == 200 and health["status"] == "ok" and "degraded" not in health, health
        assert _log_lines(server, "redis answers again") == 1
        healthy += [_timed_search(server) for _ in range(15)]  # before and after: the machine's load drifts

        stop(redis.proc)  # dead: connections are refused at once
        dead = [_timed_search(server) for _ in range(15)]
        status, _, health = server.json("GET", "/healthz")
        assert status == 503 and health["degraded"] == {"redis": "ConnectionError"}, health
        assert _log_lines(server, "redis failed") == 2 and _log_lines(server, "redis answers again") == 1
    finally:
        if redis.proc.poll() is None:
            os.kill(redis.proc.pid, signal.SIGCONT)
        stop(server.proc)
        stop(redis.proc)

    base = statistics.median(healthy)
    # the figures BENCHMARKS.md "Reliability" quotes (pytest -s)
    print(
        f"\nredis healthy {base:.3f} s per search (median of {len(healthy)}); hung: median {statistics.median(hung):.3f},"
        f" max {max(hung):.3f} (+{max(hung) - base:.3f}) of {len(hung)}; dead: median {statistics.median(dead):.3f},"
        f" max {max(dead):.3f} of {len(dead)}"
    )
    # Most searches never wait on a hung or dead Redis: the breaker sends them to this process's own state.
    # (Without it each search on a hung Redis waits a socket timeout, many times a healthy search.)
    assert len(hung) > 20, len(hung)
    assert statistics.median(hung) / base < 3.0, (base, sorted(hung))
    assert statistics.median(dead) / base < 3.0, (base, sorted(dead))
    # The searches that did wait (the one that found it hung, each probe) waited one bounded call: about a
    # quarter of a second over a healthy search, where 5 s socket timeouts once made each search wait.
    assert max(hung) < base + 0.6, (base, sorted(hung)[-3:])
