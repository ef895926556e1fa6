"""Parse workers (issue 10): a large engine answer is parsed in a worker process, so the event loop keeps
running while it parses; a parse over its budget kills its worker and a fresh one takes its place; the
parser's error comes back whole; nothing is left running once the pool is closed."""

from __future__ import annotations

import asyncio
import os
import time

import pytest

import fault_matrix
from conftest import running
from serpfuse.engines import searxng
from serpfuse.engines.base import EngineQuery, ParseOverrun, RateLimited
from serpfuse.models import EngineRow
from serpfuse.sources import parsing
from serpfuse.sources.parsing import parse_in_thread
from serpfuse.workers import WORKERS, WorkerPool

Q = EngineQuery(text="rust async runtime")
JSON = {"content-type": "application/json"}
FLOOD = fault_matrix.flood(30_000)  # 5 MB: json.loads alone takes ~150 ms


@pytest.fixture
async def pool():
    pool = WorkerPool(size=1)
    pool.start()
    deadline = time.monotonic() + 60
    while not pool.ready:
        assert time.monotonic() < deadline, "no parse worker started"
        await asyncio.sleep(0.05)
    try:
        yield pool
    finally:
        pool.close()


async def longest_stall(parse) -> float:
    """The loop's longest gap between two 1 ms ticks while ``parse`` is awaited, in seconds."""
    gaps, running = [], True

    async def tick() -> None:
        last = time.perf_counter()
        while running:
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    ticker = asyncio.create_task(tick())
    await asyncio.sleep(0.01)
    rows = await parse()
    running = False
    await ticker
    assert len(rows) == 100  # the flood, read up to the cap, either way
    return max(gaps)


async def test_a_large_answer_parsed_in_a_worker_leaves_the_loop_free(pool):
    """Side by side, same answer: in a thread the loop waits out json.loads; in a worker it does not."""
    args = (200, JSON, FLOOD, Q)
    thread, process = [], []
    for _ in range(3):
        thread.append(await longest_stall(lambda: parse_in_thread(lambda: searxng.parse(*args), 10.0)))
        process.append(await longest_stall(lambda: pool.run(searxng.parse, args, 10.0)))
    assert sorted(process)[1] * 3 < sorted(thread)[1], (process, thread)


async def test_an_overrunning_parse_kills_its_worker_and_a_new_one_takes_its_place(pool):
    (before,) = pool.pids()
    started = time.monotonic()
    with pytest.raises(ParseOverrun, match="abandoned"):
        await pool.run(time.sleep, (30,), 0.3)
    assert time.monotonic() - started < 2
    deadline = time.monotonic() + 30
    while pool.pids() in ([], [before]):
        assert time.monotonic() < deadline, "the killed worker was not replaced"
        await asyncio.sleep(0.05)
    assert not running(before)
    rows = await pool.run(searxng.parse, (200, JSON, FLOOD, Q), 10.0)  # the new worker parses
    assert len(rows) == 100


async def test_a_cancelled_parse_kills_its_worker_too(pool):
    (before,) = pool.pids()
    task = asyncio.create_task(pool.run(time.sleep, (30,), 10.0))
    await asyncio.sleep(0.3)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    deadline = time.monotonic() + 10
    while running(before):
        assert time.monotonic() < deadline, "the cancelled parse's worker still runs"
        await asyncio.sleep(0.05)


async def test_the_parsers_error_comes_back_whole(pool):
    headers = {**JSON, "retry-after": "120"}
    with pytest.raises(RateLimited) as in_process:
        searxng.parse(429, headers, b"{}", Q)
    with pytest.raises(RateLimited) as from_worker:
        await pool.run(searxng.parse, (429, headers, b"{}", Q), 10.0)
    assert from_worker.value.message == in_process.value.message
    assert from_worker.value.retry_after_s == in_process.value.retry_after_s == 120
    assert from_worker.value.cooldown_s == in_process.value.cooldown_s


async def test_closing_the_pool_ends_every_worker(pool):
    (pid,) = pool.pids()
    pool.close()
    assert pool.pids() == [] and not pool.ready
    assert not running(pid)


def where_parsed(status, headers, body, q) -> list[EngineRow]:
    """A parse that says which process ran it."""
    return [EngineRow(engine="where", rank=1, url=f"https://pid.example/{os.getpid()}")]


async def test_what_a_worker_can_import_is_parsed_there(monkeypatch, pool):
    """Once the workers are up, an engine's parse runs in one, whatever the answer's size; a function a worker
    cannot import (a lambda, a closure) runs in a thread of this process, as does everything without workers."""
    monkeypatch.setattr(parsing, "WORKERS", pool)
    here = f"https://pid.example/{os.getpid()}"

    async def parsed_in(fn) -> str:
        (row,) = await parsing.parse_answer(fn, (200, JSON, b"{}", Q), 5.0)
        return row.url

    assert await parsed_in(where_parsed) == f"https://pid.example/{pool.pids()[0]}"
    assert await parsed_in(lambda *args: where_parsed(*args)) == here
    pool.close()
    assert await parsed_in(where_parsed) == here  # no worker up: a thread


async def test_a_live_server_starts_its_workers_and_browser_client_before_it_serves(tmp_path):
    """``LiveSource.start`` (a server's start-up): the parse workers start, and the impersonating client's
    one-off import happens now, not in a thread during the first HTML engine's call."""
    from serpfuse.secrets import KeyStore
    from serpfuse.sources.live import LiveSource
    from serpfuse.sources.transport import Transport
    from serpfuse.state.cooldown import InMemoryCooldownStore

    transport = Transport(trust_env=False, impersonate=True)
    source = LiveSource(
        KeyStore(env={}, keys_file=tmp_path / "keys.json"), InMemoryCooldownStore(), transport
    )
    try:
        assert "profiles" not in transport.__dict__
        source.start()
        assert "profiles" in transport.__dict__  # curl_cffi imported, its releases looked up
        deadline = time.monotonic() + 60
        while not WORKERS.ready:
            assert time.monotonic() < deadline, "no parse worker started"
            await asyncio.sleep(0.05)
    finally:
        await source.aclose()
    assert not WORKERS.ready and WORKERS.pids() == []
