"""A fleet of two real `serpfuse serve` processes on one real redis-server (issue 10, item 8): one client rate
limit for the fleet, wrong tokens included, and one outbound budget per engine, so more replicas do not mean
more requests to an engine. The engine is a fake SearXNG on 127.0.0.1."""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest

from conftest import need
from fakeserver import FakeServer, Reply, Seen
from redis_server import start_serpfuse, stop
from serpfuse.state.failsoft import Breaker, FailSoft
from serpfuse.state.ratelimit import TokenBuckets

pytestmark = pytest.mark.redis

QUERY = "top restaurants in belgrad"


@pytest.fixture
def fleet_of(tmp_path, redis_url):
    import redis

    redis.Redis.from_url(redis_url).flushdb()  # each test starts from full buckets
    started = []

    def start(n: int, args: list[str], env: dict[str, str]):
        for i in range(n):
            started.append(start_serpfuse(tmp_path / f"node{i}", ["--redis", redis_url, *args], env=env))
        return started

    yield start
    for server in started:
        stop(server.proc)


def test_the_client_limit_is_one_for_the_fleet(fleet_of, data_dir, redis_url):
    recording = need(data_dir / "crw56" / "searxng_raw.json")
    env = {
        "SERPFUSE_RATE_LIMIT_BURST": "4",
        "SERPFUSE_RATE_LIMIT_PER_MIN": "1",
        "SERPFUSE_API_TOKEN": "fleet-token",
    }
    a, b = fleet_of(2, ["--replay", str(recording)], env)
    ok = {"Authorization": "Bearer fleet-token"}
    codes = [(a if i % 2 == 0 else b).get(f"/v1/search?q={quote(QUERY)}", headers=ok)[0] for i in range(8)]
    assert codes == [200] * 4 + [429] * 4, codes  # each process alone would have allowed 4 + 4
    # Wrong tokens spend from the address's bucket, shared too: 4 guesses across the fleet, then 429s.
    wrong = [
        (a if i % 2 else b).get("/v1/search?q=x", headers={"Authorization": f"Bearer no-{i}"})[0]
        for i in range(8)
    ]
    assert wrong == [401] * 4 + [429] * 4, wrong


def _searxng(seen: Seen) -> Reply:
    q = seen.query.get("q", [""])[0]
    results = [
        {"url": f"https://example.com/{i}", "title": f"{q} {i}", "content": q, "engine": "bing", "engines": ["bing"],
         "positions": [i]}
        for i in range(1, 6)
    ]  # fmt: skip
    return Reply(200, {"Content-Type": "application/json"}, json.dumps({"results": results}).encode())


def test_the_engine_budget_is_one_for_the_fleet(fleet_of):
    with FakeServer(lifetime_s=120) as server:
        server.route("/search", _searxng)
        env = {
            "SERPFUSE_SEARXNG_URL": server.url,
            "SERPFUSE_ENGINES": "searxng",
            "SERPFUSE_ENGINE_BUDGET_PER_MIN": "3",
            "SERPFUSE_RATE_LIMIT_BURST": "1000",
        }
        a, b = fleet_of(2, ["--no-cache"], env)
        statuses = []
        for i in range(6):
            _, _, body = (a if i % 2 == 0 else b).json("GET", f"/v1/search?q=fleetword{i}")
            statuses.append({e["engine"]: (e["status"], e.get("reason")) for e in body["engines"]}["searxng"])
        asked = len(server.seen("/search"))
    assert asked == 3, statuses  # each process alone would have sent 3 + 3
    assert [s for s, _ in statuses[:3]] == ["ok"] * 3
    assert all(s == "skipped" and "budget" in r for s, r in statuses[3:]), statuses


async def test_an_unreachable_store_limits_each_process_alone():
    class Down:
        async def take(self, key: str) -> float:
            raise ConnectionError("redis is down")

    buckets = FailSoft(Down(), TokenBuckets(1 / 60, 2), Breaker("redis"))
    assert [await buckets.take("c") > 0 for _ in range(3)] == [False, False, True]
