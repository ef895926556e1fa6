"""Redis as the shared state of a multi-process deployment, against a real redis-server started here.

Two `serpfuse serve` processes on different ports point at one Redis: the second serves the first's result
from the cache, and an engine put in cooldown through the store is skipped by both.
"""

from __future__ import annotations

import asyncio
from urllib.parse import quote

import pytest

from conftest import need
from redis_server import start_redis, start_serpfuse, stop
from serpfuse.engines.base import ChallengeDetected, EngineTimeout, RateLimited
from serpfuse.models import SearchResponse
from serpfuse.state.cache import RedisResultCache
from serpfuse.state.redis_store import RedisCooldownStore, redis_client

pytestmark = pytest.mark.redis

QUERY = "top restaurants in belgrad"
OTHER = "best coffee shops in lisbon"


@pytest.fixture
async def client(redis_url):
    redis = redis_client(redis_url)
    await redis.flushdb()
    yield redis
    await redis.aclose()


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


async def test_cooldown_ladder_in_redis(client):
    clock = Clock()
    store = RedisCooldownStore(client, clock=clock)
    assert await store.get("ddg") is None
    first = await store.record_failure("ddg", EngineTimeout())
    second = await store.record_failure("ddg", EngineTimeout())
    assert (first.failures, second.failures) == (1, 2)
    assert second.until - clock.now == 10.0  # 5 s x 2 consecutive failures
    assert (await store.get("ddg")).reason == "timed out"
    clock.now += 11
    assert await store.get("ddg") is None  # expired: may be asked again
    third = await store.record_failure("ddg", EngineTimeout())
    assert third.failures == 3  # ...but only a success resets the backoff
    challenge = await store.record_failure("bing", ChallengeDetected())
    assert challenge.until - clock.now == 3600.0
    assert 3600 < await client.ttl("serpfuse:cooldown:bing") <= 3600 + 86400
    await store.record_success("ddg")
    assert await store.get("ddg") is None and "ddg" not in await store.snapshot()
    assert set(await store.snapshot()) == {"bing"}


async def test_concurrent_failures_from_two_processes_all_count(redis_url, client):
    # Two clients stand for two processes; WATCH/MULTI must not lose an increment.
    other = redis_client(redis_url)
    try:
        a, b = RedisCooldownStore(client), RedisCooldownStore(other)
        await asyncio.gather(*(s.record_failure("brave", EngineTimeout()) for s in [a, b] * 10))
        assert (await a.get("brave")).failures == 20
    finally:
        await other.aclose()


async def test_result_cache_in_redis_expires_entries(client):
    cache = RedisResultCache(client)
    response = SearchResponse(
        query="q", strategy="rrf", results=[], engines=[], score_version="v", config_fingerprint="f"
    )
    assert await cache.get("k") is None
    await cache.set("k", response, ttl_s=120)
    hit = await cache.get("k")
    assert hit is not None and hit.cached is True and hit.query == "q"
    assert 0 < await client.ttl("serpfuse:result:k") <= 120


@pytest.fixture
def recording(data_dir):
    return need(data_dir / "crw56" / "searxng_raw.json")


def _engine(response: dict, name: str) -> dict:
    return next(e for e in response["engines"] if e["engine"] == name)


async def test_two_server_processes_share_cache_and_cooldowns(redis_url, client, recording, tmp_path):
    args = ["--replay", str(recording), "--redis", redis_url]
    one = start_serpfuse(tmp_path / "one", args)
    two = start_serpfuse(tmp_path / "two", args)
    try:
        assert one.json("GET", "/healthz")[2]["redis"] == "ok"
        status, _, first = one.json("GET", f"/v1/search?q={quote(QUERY)}")
        assert status == 200 and first["cached"] is False
        status, _, second = two.json("GET", f"/v1/search?q={quote(QUERY)}")
        assert status == 200 and second["cached"] is True  # process two never ran this search
        assert [r["url"] for r in second["results"]] == [r["url"] for r in first["results"]]
        assert second["configFingerprint"] == first["configFingerprint"]

        # Put google in cooldown through the shared store; both processes must now skip it.
        await RedisCooldownStore(client).record_failure("google", RateLimited(retry_after_s=600))
        for server in (two, one):
            status, _, body = server.json("POST", "/v1/search", {"query": OTHER, "cache": False})
            assert status == 200
            google = _engine(body, "google")
            assert google["status"] == "skipped" and google["reason"].startswith("cooling down")
            assert "rate limited" in google["reason"]
            assert all("google" not in r["engines"] for r in body["results"])
            assert _engine(body, "duckduckgo")["status"] == "ok"

        await RedisCooldownStore(client).record_success("google")
        body = two.json("POST", "/v1/search", {"query": OTHER, "cache": False})[2]
        assert _engine(body, "google")["status"] == "ok"
    finally:
        stop(one.proc)
        stop(two.proc)


def test_searches_survive_a_redis_outage(recording, tmp_path):
    redis = start_redis(tmp_path / "redis")
    with start_serpfuse(tmp_path / "serve", ["--replay", str(recording), "--redis", redis.url]) as server:
        assert server.json("GET", f"/v1/search?q={quote(QUERY)}")[0] == 200
        stop(redis.proc)
        status, _, body = server.json("GET", f"/v1/search?q={quote(QUERY)}")
        assert status == 200 and body["results"] and body["cached"] is False  # a miss, not a failure
        assert all(e["status"] != "skipped" or "cooling" not in (e["reason"] or "") for e in body["engines"])
        status, _, health = server.json("GET", "/healthz")
        assert status == 503 and health["redis"] == "unreachable"
        stop(redis.proc)
