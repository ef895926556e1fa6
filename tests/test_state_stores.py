"""The state wing: ``open_stores`` chooses every store; ``FailSoft`` and its breaker keep a failing shared store
from failing or slowing requests (one log line per change of state); files are 0600; settings that cannot work
are a one-line error and exit 2 from ``serpfuse serve``; a full disk while serving is one warning."""

from __future__ import annotations

import ast
import asyncio
import logging
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pydantic import ValidationError

from redis_server import CLI, free_port, isolated_env
from serpfuse.engines.base import RateLimited
from serpfuse.service import SearchService
from serpfuse.settings import Settings
from serpfuse.state import UnusableStore, open_stores
from serpfuse.state.cache import NoCache, SqliteResultCache
from serpfuse.state.cooldown import InMemoryCooldownStore
from serpfuse.state.failsoft import Breaker, FailSoft
from serpfuse.state.ratelimit import LocalSlots, QueueTooLong, RateLimiter, TokenBuckets
from serpfuse.state.sqlite_store import SqliteCooldownStore, SqliteSlots, SqliteTokenBuckets

QUERY = "top restaurants in belgrad"
STATE = Path(__file__).resolve().parents[1] / "src" / "serpfuse" / "state"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Flaky:
    """A shared store whose backend is up or down at the test's say; counts the calls that reached it."""

    def __init__(self) -> None:
        self.up = True
        self.calls = 0

    async def take(self, key: str) -> float:
        self.calls += 1
        if not self.up:
            raise ConnectionError("down")
        return 0.0

    async def get(self, key: str) -> str | None:
        self.calls += 1
        if not self.up:
            raise ConnectionError("down")
        return "shared"


def _changes(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "serpfuse.state.failsoft"]


# --- the breaker -------------------------------------------------------------------------------------------------


async def test_a_failed_backend_is_skipped_then_probed_and_each_change_is_one_line(caplog):
    caplog.set_level(logging.WARNING, "serpfuse.state.failsoft")
    clock, shared = Clock(), Flaky()
    breaker = Breaker("redis", retry_s=5.0, clock=clock)
    buckets = FailSoft(shared, TokenBuckets(1 / 60, 100), breaker)
    shared.up = False
    assert [await buckets.take("c") for _ in range(50)] == [0.0] * 50  # served by the local buckets
    assert shared.calls == 1  # one call found it down; the other 49 never waited on it
    assert breaker.is_open and breaker.error == "ConnectionError"
    clock.now += 5.0
    await buckets.take("c")  # the probe: still down
    assert shared.calls == 2
    shared.up = True
    await buckets.take("c")  # within the new period: skipped
    assert shared.calls == 2
    clock.now += 5.0
    await buckets.take("c")  # the probe succeeds and closes it
    assert not breaker.is_open
    await buckets.take("c")
    assert shared.calls == 4
    changes = _changes(caplog)
    assert len(changes) == 2, changes
    assert changes[0].startswith("redis failed (ConnectionError)") and changes[1] == (
        "redis answers again: shared state resumed"
    )


async def test_one_breaker_per_backend_serves_every_store_on_it(caplog):
    caplog.set_level(logging.WARNING, "serpfuse.state.failsoft")
    clock, cooldown_backend, bucket_backend = Clock(), Flaky(), Flaky()
    breaker = Breaker("redis", clock=clock)
    cooldowns = FailSoft(cooldown_backend, InMemoryCooldownStore(), breaker)
    buckets = FailSoft(bucket_backend, TokenBuckets(1, 10), breaker)
    bucket_backend.up = False
    await buckets.take("c")
    assert await cooldowns.get("brave") is None  # not asked: the local store answers
    assert cooldown_backend.calls == 0 and len(_changes(caplog)) == 1


async def test_a_read_does_not_close_a_breaker_a_write_opened():
    """A full disk still reads: only a write that succeeds shows the store can be written again."""
    clock = Clock()
    breaker = Breaker("result cache", clock=clock)

    class FullDisk:
        reads = 0

        async def get_body(self, key: str) -> bytes:
            self.reads += 1
            return b"{}"

        async def set_body(self, key: str, body: bytes, ttl_s: float) -> None:
            raise sqlite3.OperationalError("database or disk is full")

    disk = FullDisk()
    cache = FailSoft(disk, NoCache(), breaker)
    await cache.set_body("k", b"{}", 60)
    clock.now += 10
    assert await cache.get_body("k") is None and disk.reads == 0  # served without the cache
    await cache.set_body("k", b"{}", 60)  # the write probe fails again
    assert breaker.is_open


async def test_an_answer_is_not_an_outage():
    breaker = Breaker("state file")
    limiter = RateLimiter(FailSoft(LocalSlots(clock=lambda: 0.0), LocalSlots(), breaker), sleep=_no_sleep)
    await limiter.wait_turn("brave", 10.0)
    with pytest.raises(QueueTooLong):
        await limiter.wait_turn("brave", 10.0, max_wait_s=1.0)
    assert not breaker.is_open


async def test_a_hung_call_is_cut_at_its_bound_and_a_cancelled_probe_frees_the_next():
    clock = Clock()
    breaker = Breaker("redis", clock=clock)

    class Hung:
        async def get(self, key: str) -> None:
            await asyncio.sleep(30)

    local = InMemoryCooldownStore()
    store = FailSoft(Hung(), local, breaker, bound_s=0.05)
    loop = asyncio.get_running_loop()
    started = loop.time()
    assert await store.get("brave") is None
    assert loop.time() - started < 1.0 and breaker.error == "TimeoutError"
    clock.now += 10
    probe = asyncio.create_task(store.get("brave"))
    await asyncio.sleep(0.01)
    probe.cancel()
    with pytest.raises(asyncio.CancelledError):
        await probe
    assert breaker.admit(write=False) == 2  # the next call may probe: the cancelled one left no lock behind


async def _no_sleep(seconds: float) -> None:
    return None


# --- the factory -------------------------------------------------------------------------------------------------


async def test_open_stores_chooses_each_backend(tmp_path):
    memory = open_stores(Settings(cache="off"))
    assert memory.results is None and memory.intervals is None and memory.breakers == ()
    assert isinstance(memory.cooldowns, InMemoryCooldownStore)
    assert isinstance(memory.buckets(60, 5, prefix="client:"), TokenBuckets)
    await memory.aclose()

    workers = open_stores(Settings(cache_dir=tmp_path), shared_dir=tmp_path)
    try:
        assert isinstance(workers.results.shared, SqliteResultCache) and workers.pages is workers.results
        assert isinstance(workers.cooldowns.shared, SqliteCooldownStore)
        assert isinstance(workers.intervals.slots.shared, SqliteSlots)
        assert isinstance(workers.buckets(60, 5, prefix="client:").shared, SqliteTokenBuckets)
        assert [b.name for b in workers.breakers] == ["state file", "result cache"]
        assert workers.degraded() == {} and await workers.ping()
    finally:
        await workers.aclose()

    shared = open_stores(Settings(redis_url="redis://127.0.0.1:1/0"), shared_dir=tmp_path)
    try:  # cooldowns and buckets in Redis; the send slots stay in the machine's state file
        assert type(shared.cooldowns.shared).__name__ == "RedisCooldownStore"
        assert type(shared.results.shared).__name__ == "RedisResultCache"
        assert type(shared.buckets(60, 5, prefix="engine:").shared).__name__ == "RedisTokenBuckets"
        assert isinstance(shared.intervals.slots.shared, SqliteSlots)
        assert shared.cooldowns.breaker is shared.results.breaker  # one client, one breaker
    finally:
        await shared.aclose()


@pytest.mark.parametrize("url", ["notaurl", "http://example.com", "redis://host:port/0"])
def test_a_redis_url_that_is_not_one_is_refused_without_the_url(url):
    """Refused by the settings themselves (so ``config show`` and every command say so in one line), and by the
    stores for a URL given to them some other way."""
    with pytest.raises(ValidationError) as err:
        Settings(redis_url=url)
    assert url not in str(err.value) and "not a Redis URL" in str(err.value)
    with pytest.raises(UnusableStore) as err:
        open_stores(Settings.model_construct(**{**Settings().__dict__, "redis_url": url}))
    assert url not in str(err.value) and "redis_url is not a Redis URL" in str(err.value)


def _imports(path: Path) -> set[str]:
    """Every serpfuse.state module ``path`` imports, at the top or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("serpfuse.state"):
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("serpfuse.state")}
    return found


def test_no_module_of_the_state_wing_imports_one_that_imports_it():
    modules = {
        ("serpfuse.state" if p.stem == "__init__" else f"serpfuse.state.{p.stem}"): _imports(p)
        for p in STATE.glob("*.py")
    }
    assert "serpfuse.state.redis_store" in modules and "serpfuse.state.failsoft" in modules

    def reaches(start: str, target: str, seen: frozenset = frozenset()) -> bool:
        return any(
            m == target or (m not in seen and reaches(m, target, seen | {m})) for m in modules.get(start, ())
        )

    circles = sorted(m for m in modules if reaches(m, m))
    assert circles == [], circles
    assert all("serpfuse.state" not in deps for name, deps in modules.items() if name != "serpfuse.state")


# --- files are the user's alone ------------------------------------------------------------------------------


async def test_cache_and_state_files_are_created_0600(recording, tmp_path):
    old = os.umask(0o022)  # the usual umask, under which SQLite would make them 0644
    try:
        cache_dir = tmp_path / "cache"
        settings = Settings(replay=recording, cache_dir=cache_dir)
        service = SearchService.from_settings(settings, shared_dir=cache_dir)
        try:
            await service.search(service.make_request(query=QUERY))
            await service.cooldowns.record_failure("brave", RateLimited(retry_after_s=60))
            await service.stores.buckets(60, 5, prefix="client:").take("ip:1")
            files = sorted(p.name for p in cache_dir.iterdir())
            modes = {p.name: p.stat().st_mode & 0o777 for p in cache_dir.iterdir()}
        finally:
            await service.aclose()
    finally:
        os.umask(old)
    assert {"results.sqlite3", "results.sqlite3-wal", "state.sqlite3", "state.sqlite3-wal"} <= set(files)
    assert modes == dict.fromkeys(files, 0o600), modes
    assert cache_dir.stat().st_mode & 0o777 == 0o700


def test_a_file_an_older_version_left_readable_is_made_private(tmp_path):
    path = tmp_path / "results.sqlite3"
    path.write_bytes(b"")
    path.chmod(0o644)
    SqliteResultCache(path).file.connect(1.0)
    assert path.stat().st_mode & 0o777 == 0o600


# --- settings that cannot work: one line, exit 2 -------------------------------------------------------------


def _serve(home: Path, args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-c", CLI, "serve", "--host", "127.0.0.1", "--port", str(free_port()), *args]
    return subprocess.run(
        cmd, capture_output=True, text=True, timeout=90, cwd=home, env=isolated_env(home, env)
    )


def _one_line_error(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("serpfuse: error: "), proc.stderr
    return lines[0]


@pytest.mark.parametrize(
    "args, says",
    [
        (["--workers", "1"], "cannot use the result cache at"),
        (["--workers", "2"], "cannot use the "),
        (["--workers", "2", "--no-cache"], "cannot use the state file at"),
    ],
)
def test_serve_refuses_a_cache_directory_under_a_file(recording, tmp_path, args, says):
    # A path under a regular file cannot be a directory, root or not (root ignores a read-only one).
    (tmp_path / "a-file").write_text("")
    env = {"SERPFUSE_CACHE_DIR": str(tmp_path / "a-file" / "cache")}
    line = _one_line_error(_serve(tmp_path, ["--replay", str(recording), *args], env))
    assert says in line and "Not a directory" in line


@pytest.mark.parametrize("workers", ["1", "2"])
def test_serve_refuses_a_redis_url_that_is_not_one(recording, tmp_path, workers):
    proc = _serve(
        tmp_path, ["--replay", str(recording), "--workers", workers], {"SERPFUSE_REDIS_URL": "notaurl"}
    )
    line = _one_line_error(proc)
    assert "redis_url: not a Redis URL" in line and "notaurl" not in line


# --- a full disk while serving ---------------------------------------------------------------------------------


async def test_a_full_disk_is_one_warning_and_serving_goes_on_without_the_cache(
    recording, tmp_path, monkeypatch, caplog
):
    caplog.set_level(logging.WARNING)
    service = SearchService.from_settings(Settings(replay=recording, cache_dir=tmp_path))
    full = [True]
    write = SqliteResultCache._set

    def disk(self, key, body, ttl_s):
        if full[0]:
            raise sqlite3.OperationalError("database or disk is full")  # what SQLite raises on ENOSPC
        return write(self, key, body, ttl_s)

    monkeypatch.setattr(SqliteResultCache, "_set", disk)
    try:
        responses = [await service.search(service.make_request(query=QUERY)) for _ in range(6)]
        assert all(r.results and not r.cached for r in responses)
        assert service.degraded() == {"result cache": "OperationalError"}
        warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
        assert len(warnings) == 1, [r.getMessage() for r in warnings]
        assert warnings[0].getMessage().startswith("result cache failed (OperationalError)")

        full[0] = False  # space freed: the next write after the breaker's period probes and succeeds
        breaker = service.stores.results.breaker
        breaker.clock = lambda: time.monotonic() + breaker.retry_s
        await service.search(service.make_request(query=QUERY))
        assert service.degraded() == {}
        assert (await service.search(service.make_request(query=QUERY))).cached is True
    finally:
        await service.aclose()
    assert len([r for r in caplog.records if r.levelno >= logging.WARNING]) == 2  # down, then back
