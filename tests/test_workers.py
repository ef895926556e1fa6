"""``serve --workers N``: several processes on one socket, sharing cache, cooldowns and rate limits through
SQLite files (each store is checked across two processes), and a real two-worker server."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import need, running
from redis_server import start_serpfuse, stop
from serpfuse.engines.base import EngineTimeout, RateLimited
from serpfuse.serve.workers import default_workers
from serpfuse.state.ratelimit import QueueTooLong, RateLimiter
from serpfuse.state.sqlite_store import SqliteCooldownStore, SqliteSlots, SqliteTokenBuckets, state_file


def _in_another_process(code: str, state_dir: Path) -> str:
    """Run ``code`` (with ``state`` = the state file in ``state_dir``) in a fresh interpreter; its stdout."""
    prelude = (
        "import asyncio, sys\nfrom serpfuse.state.ratelimit import RateLimiter\n"
        "from serpfuse.state.sqlite_store import *\nstate = state_file(sys.argv[1])\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code), str(state_dir)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


async def test_a_cooldown_one_process_records_is_seen_by_another(tmp_path):
    store = SqliteCooldownStore(state_file(tmp_path))
    assert await store.get("brave") is None
    _in_another_process(
        """
        from serpfuse.engines.base import RateLimited
        asyncio.run(SqliteCooldownStore(state).record_failure("brave", RateLimited(retry_after_s=60)))
        """,
        tmp_path,
    )
    state = await store.get("brave")
    assert state is not None and state.status == "rate-limited" and state.failures == 1
    again = await store.record_failure("brave", EngineTimeout())
    assert again.failures == 2  # the count goes on from the other process's record
    await store.record_success("brave")
    assert (
        _in_another_process("print(asyncio.run(SqliteCooldownStore(state).get('brave')))", tmp_path) == "None"
    )


async def test_token_buckets_are_one_bucket_for_every_process(tmp_path):
    clock = [1000.0]
    buckets = SqliteTokenBuckets(state_file(tmp_path), 1.0, 3, prefix="client:", clock=lambda: clock[0])
    assert await buckets.take("ip:1") == 0.0
    taken = _in_another_process(
        """
        import time
        b = SqliteTokenBuckets(state, 1.0, 3, prefix="client:", clock=lambda: 1000.0)
        print([asyncio.run(b.take("ip:1")) for _ in range(3)])
        """,
        tmp_path,
    )
    assert json.loads(taken) == [0.0, 0.0, 1.0]  # the burst of 3 was shared: the other process got 2
    assert await buckets.take("ip:2") == 0.0  # another client has its own bucket
    clock[0] += 1.0
    assert await buckets.take("ip:1") == 0.0  # refilled at 1 a second


async def test_engine_intervals_queue_across_processes(tmp_path):
    clock = [5000.0]
    limiter = RateLimiter(SqliteSlots(state_file(tmp_path), clock=lambda: clock[0]), sleep=_no_sleep)
    assert await limiter.wait_turn("brave", 1.0) == 0.0
    waited = _in_another_process(
        """
        async def no_sleep(s): return None
        lim = RateLimiter(SqliteSlots(state, clock=lambda: 5000.0), sleep=no_sleep)
        print(asyncio.run(lim.wait_turn("brave", 1.0)))
        """,
        tmp_path,
    )
    assert float(waited) == 1.0  # the other process's slot comes one interval after ours
    assert await limiter.wait_turn("brave", 1.0) == 2.0
    with pytest.raises(QueueTooLong):
        await limiter.wait_turn("brave", 1.0, max_wait_s=0.5)


async def _no_sleep(seconds: float) -> None:
    return None


def test_default_workers_is_the_cores():
    assert default_workers() == len(os.sched_getaffinity(0))


def test_a_rate_limited_error_keeps_its_cooldown_length(tmp_path):
    import asyncio

    store = SqliteCooldownStore(state_file(tmp_path), clock=lambda: 100.0)
    state = asyncio.run(store.record_failure("brave", RateLimited(retry_after_s=42)))
    assert state.until == 142.0


def _terminate(server) -> None:
    """SIGTERM to the supervisor, as a service manager sends it; up to 30 s for the workers to end, then kill."""
    server.proc.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + 30
    while server.proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    stop(server.proc)


def _spawned_children(pid: int) -> list[str]:
    out = subprocess.run(
        ["ps", "-ww", "-o", "args=", "--ppid", str(pid)], capture_output=True, text=True
    ).stdout
    return [line for line in out.splitlines() if "spawn_main" in line]


@pytest.mark.slow
def test_two_workers_serve_one_port_and_share_the_cache(data_dir, tmp_path):
    recording = need(data_dir / "crw56" / "searxng_raw.json")
    server = start_serpfuse(tmp_path, ["--replay", str(recording), "--workers", "2"])
    try:
        assert len(_spawned_children(server.proc.pid)) == 2  # the supervisor's two workers
        path = "/v1/search?q=top%20restaurants%20in%20belgrad&limit=3"
        first = server.json("GET", path)[2]
        assert first["cached"] is False and first["results"]
        # Each request is a new connection, which the kernel hands to either worker: every one is a hit.
        assert all(server.json("GET", path)[2] == {**first, "cached": True} for _ in range(8))
        assert list(tmp_path.rglob("state.sqlite3"))  # cooldowns and intervals live beside the cache
    finally:
        _terminate(server)


@pytest.mark.slow
def test_every_worker_parses_in_its_own_processes_and_they_end_with_the_server(tmp_path):
    """``serve --workers 2`` on live engines: each server process starts the workers it parses and ranks in
    (its share of the cores, one at least), and SIGTERM to the supervisor leaves no process behind."""
    from fault_matrix import descendants, wait_for_workers, workers_below

    want = 2 * max(1, default_workers() // 2)
    server = start_serpfuse(tmp_path, ["--workers", "2"])
    try:
        wait_for_workers(server.proc.pid, want)
        time.sleep(0.5)  # none more comes
        workers = workers_below(server.proc.pid)
        assert len(workers) == want, workers
        started = descendants(server.proc.pid)
    finally:
        _terminate(server)
    deadline = time.monotonic() + 10
    while (alive := [pid for pid in started if running(pid)]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert alive == []


def _per_worker(metrics_dir: Path, route: str) -> dict[str, dict[str, int]]:
    """pid -> status -> requests to ``route`` that worker answered, from its own metric file (the /metrics page
    adds them up, so only the files tell the workers apart)."""
    from prometheus_client.multiprocess import MultiProcessCollector

    seen: dict[str, dict[str, int]] = {}
    for file in metrics_dir.glob("counter_*.db"):
        pid = file.stem.removeprefix("counter_")
        for metric in MultiProcessCollector.merge([str(file)]):
            for sample in metric.samples:
                if sample.name == "serpfuse_http_requests_total" and sample.labels["route"] == route:
                    seen.setdefault(pid, {})[sample.labels["status"]] = int(sample.value)
    return seen


def _metrics_dir(tmp: Path) -> Path:
    """The directory the supervisor made for its workers' metric files (``TMPDIR`` pointed at ``tmp``)."""
    [found] = tmp.glob("serpfuse-metrics-*")
    return found


def _route_total(page: str, route: str, status: int) -> int:
    found = re.search(
        rf'^serpfuse_http_requests_total\{{route="{route}",status="{status}"\}} (\S+)$', page, re.M
    )
    return int(float(found[1])) if found else 0


@pytest.mark.slow
def test_two_workers_count_each_request_once_on_one_metrics_page(data_dir, tmp_path):
    """Requests to a two-worker server are counted once in total on every /metrics page, whichever worker
    answered each request and whichever answers the scrape; the supervisor removes the metric files at the end."""
    recording = need(data_dir / "crw56" / "searxng_raw.json")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {"TMPDIR": str(tmp), "SERPFUSE_RATE_LIMIT_BURST": "1000"}  # many requests here, and no limit tested
    server = start_serpfuse(tmp_path, ["--replay", str(recording), "--workers", "2"], env=env)
    try:
        metrics_dir = _metrics_dir(tmp)
        sent = 0
        from concurrent.futures import ThreadPoolExecutor

        # New connections at once (one at a time, the worker already waiting in accept() takes them all), until
        # the kernel has handed some to both; for seconds, not a count: the second may still be starting.
        until = time.monotonic() + 30
        with ThreadPoolExecutor(8) as pool:
            while time.monotonic() < until:
                assert set(pool.map(lambda _: server.get("/openapi.json")[0], range(8))) == {200}
                sent += 8
                if len(_per_worker(metrics_dir, "openapi")) == 2:
                    break
        deadline = time.monotonic() + 5  # a worker counts a request just after answering it
        while True:
            answered = {pid: counts["200"] for pid, counts in _per_worker(metrics_dir, "openapi").items()}
            if sum(answered.values()) == sent or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert len(answered) == 2 and all(answered.values()), answered
        assert sum(answered.values()) == sent, answered
        pages = []
        with ThreadPoolExecutor(4) as pool:  # scrapes until both workers have answered some
            for _ in range(20):
                pages += [
                    body.decode() for _, _, body in pool.map(lambda _: server.get("/metrics"), range(4))
                ]
                if len(_per_worker(metrics_dir, "metrics")) == 2:
                    break
        assert len(_per_worker(metrics_dir, "metrics")) == 2
        assert {_route_total(page, "openapi", 200) for page in pages} == {sent}
        assert all(re.search(r"^serpfuse_workers 2(\.0)?$", page, re.M) for page in pages)
    finally:
        _terminate(server)
    assert not metrics_dir.exists()


@pytest.mark.slow
def test_two_workers_enforce_one_rate_limit_per_client(data_dir, tmp_path):
    """Without Redis the client's token bucket lives in the workers' shared SQLite file: with a burst of 4 and
    no refill to speak of, two workers together answer 4 requests and refuse the rest, whichever got which."""
    from concurrent.futures import ThreadPoolExecutor

    recording = need(data_dir / "crw56" / "searxng_raw.json")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {"SERPFUSE_RATE_LIMIT_BURST": "4", "SERPFUSE_RATE_LIMIT_PER_MIN": "0.01", "TMPDIR": str(tmp)}
    env["SERPFUSE_RATE_LIMIT_LOOPBACK"] = "1"  # loopback callers are not limited by default
    server = start_serpfuse(tmp_path, ["--replay", str(recording), "--workers", "2"], env=env)
    codes: list[int] = []
    try:
        with ThreadPoolExecutor(8) as pool:
            # Both workers accepting first (/healthz is not rate limited): on a loaded machine one worker can be
            # up a while before the other, and then it alone takes every connection of the burst.
            for _ in range(50):
                list(pool.map(lambda _: server.get("/healthz"), range(8)))
                if len(_per_worker(_metrics_dir(tmp), "healthz")) == 2:
                    break
            # New connections at once, so the kernel hands them to both workers.
            for _ in range(10):
                codes += pool.map(lambda _: server.get("/openapi.json")[0], range(8))
                counts = _per_worker(_metrics_dir(tmp), "openapi")
                if len(counts) == 2 and all(counts.values()):
                    break
        # The server's log says why, if a worker fell back to a limit of its own (the shared store failed it).
        assert sorted(set(codes)) == [200, 429] and codes.count(200) == 4, (
            codes,
            server.log.read_text()[-1500:],
        )
        # A worker counts a request once its answer is on its way: the last few may land a moment after.
        settle = time.monotonic() + 5
        while sum(sum(c.values()) for c in counts.values()) < len(codes) and time.monotonic() < settle:
            time.sleep(0.1)
            counts = _per_worker(_metrics_dir(tmp), "openapi")
        assert len(counts) == 2 and all(counts.values()), counts  # both workers answered some
        # Per-worker buckets would let each worker answer up to 4: together they answered 4, as one bucket.
        assert sum(c.get("200", 0) for c in counts.values()) == 4, counts
        assert sum(c.get("429", 0) for c in counts.values()) == len(codes) - 4, counts
    finally:
        _terminate(server)


@pytest.mark.slow
def test_the_supervisor_makes_the_shared_state_file_before_the_workers_start(data_dir, tmp_path):
    """Ready (WAL mode, its tables) before any request: new workers do not race to create it on their first
    requests, where one waiting past its lock timeout would fall back to a rate limit of its own."""
    import contextlib
    import sqlite3

    recording = need(data_dir / "crw56" / "searxng_raw.json")
    server = start_serpfuse(tmp_path, ["--replay", str(recording), "--workers", "2"])
    try:
        state = tmp_path / "cache" / "serpfuse" / "state.sqlite3"
        assert state.is_file()
        with contextlib.closing(sqlite3.connect(f"file:{state}?mode=ro", uri=True)) as conn:
            assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert {"buckets", "cooldowns", "slots"} <= tables
    finally:
        _terminate(server)
