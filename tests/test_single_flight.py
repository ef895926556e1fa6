"""Single-flight: identical searches in flight at once share one fan-out, and the callers after the first get its
answer marked ``shared``.

Through real components: ``serpfuse serve`` as a process on 127.0.0.1 with two real engine modules (Wikipedia's
API, Mwmbl's) reached through their base URL settings as an operator sets them, each answered by a loopback fake
that counts what it is asked and answers slowly enough for every search to arrive while the first is in flight;
and the service in process, on the live source and loopback fake engines, for what a caller's going away or a
failure does to the others. Nothing leaves 127.0.0.1 (any proxy is a dead loopback port).
"""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import quote

import pytest

from fakeserver import FakeServer, Reply, fake_engine, ok
from redis_server import free_port, http, start_serpfuse, stop
from serpfuse.engines import base_url_env
from serpfuse.models import SearchRequest
from serpfuse.secrets import KeyStore
from serpfuse.service import SearchService
from serpfuse.settings import Settings
from serpfuse.sources.live import LiveSource
from serpfuse.sources.transport import Transport
from serpfuse.state.cooldown import InMemoryCooldownStore

QUERY = "rust async runtime"  # one query variant: one request per engine for one search
FIXTURES = Path(__file__).parent / "fixtures" / "engines"
JSON = {"Content-Type": "application/json"}
ENGINE_PATHS = {"wikipedia": "/w/api.php", "mwmbl": "/api/v1/search/"}
SLOW_S = 1.0  # each engine's answer: every search below arrives while the first is still waiting for it
CALLERS = 20


def engines_server() -> FakeServer:
    hits = [{"title": f"Rust async runtime {i}", "snippet": "a rust async runtime"} for i in range(6)]
    server = FakeServer(lifetime_s=300)
    wiki = json.dumps({"query": {"search": hits}}).encode()
    server.route(ENGINE_PATHS["wikipedia"], Reply(200, JSON, wiki, delay_s=SLOW_S))
    mwmbl = (FIXTURES / "mwmbl_results_handmade.json").read_bytes()
    server.route(ENGINE_PATHS["mwmbl"], Reply(200, JSON, mwmbl, delay_s=SLOW_S))
    return server


def asked_for(engines: FakeServer, route: str, query: str = QUERY) -> int:
    """The requests ``route`` received for ``query`` (Wikipedia's srsearch, Mwmbl's s)."""
    return sum(query in (s.query.get("srsearch") or s.query.get("s") or [""]) for s in engines.seen(route))


def warm(base: str) -> None:
    """One search of another query first: a process's first search loads the word tables, which on a busy
    machine can outlast the engines' answer and let the burst's first search land before the others arrive."""
    status, _, _ = http("GET", f"{base}/v1/search?q=tokio+scheduler&engines={','.join(ENGINE_PATHS)}")
    assert status == 200


def test_twenty_identical_searches_at_once_make_one_request_per_engine(tmp_path):
    dead = f"http://127.0.0.1:{free_port()}"
    with engines_server() as engines:
        env = {base_url_env(name): engines.url for name in ENGINE_PATHS}
        env.update(
            HTTP_PROXY=dead, HTTPS_PROXY=dead, ALL_PROXY=dead, NO_PROXY="127.0.0.1",
            SERPFUSE_RATE_LIMIT_BURST="1000",
        )  # fmt: skip
        server = start_serpfuse(tmp_path, ["--no-cache"], env)  # no cache: only single-flight can share
        try:
            warm(server.base)
            asked = f"q={quote(QUERY)}&engines={','.join(ENGINE_PATHS)}"
            # Half as serpfuse's own API, half as a SearXNG client: the same search, so one fan-out for all.
            paths = [f"/v1/search?{asked}", f"/search?{asked}&format=json"] * (CALLERS // 2)
            with ThreadPoolExecutor(CALLERS) as pool:
                answers = list(pool.map(lambda path: http("GET", server.base + path), paths))
            bodies = [json.loads(raw) for status, _, raw in answers if status == 200]
            assert len(bodies) == CALLERS, [a[:1] for a in answers]
            for name, route in ENGINE_PATHS.items():
                assert asked_for(engines, route) == 1, (name, asked_for(engines, route))
            assert sorted(b["shared"] for b in bodies) == [False] + [True] * (CALLERS - 1)
            urls = [[r["url"] for r in b["results"]] for b in bodies]
            assert urls[0] and all(u == urls[0] for u in urls)
            assert all(b["outcome"]["status"] == "results" for b in bodies)

            # Once it landed, a new search is a new fan-out (no cache here): sharing is only while in flight.
            status, _, raw = http("GET", server.base + paths[0])
            assert status == 200 and json.loads(raw)["shared"] is False
            assert all(asked_for(engines, route) == 2 for route in ENGINE_PATHS.values())
        finally:
            stop(server.proc)


# --- in process: what the callers share ----------------------------------------------------------------------


@pytest.fixture
async def service(server, tmp_path):
    modules = [fake_engine("alpha"), fake_engine("beta")]
    keys = KeyStore(env={}, keys_file=tmp_path / "keys.json", infos={m.INFO.name: m.INFO for m in modules})
    cooldowns = InMemoryCooldownStore()
    source = LiveSource(
        keys,
        cooldowns,
        Transport(trust_env=False),
        engines=modules,
        base_urls={m.INFO.name: server.url for m in modules},
        timeout_s=5.0,
        owns_transport=True,
    )
    svc = SearchService(Settings(cache="off"), source, cooldowns=cooldowns)
    yield svc
    await svc.aclose()


def slow(server: FakeServer, delay_s: float = 0.5) -> None:
    urls = [f"https://example.org/rust-async-runtime-{i}" for i in range(5)]
    server.route("/alpha", ok(urls, delay_s=delay_s))
    server.route("/beta", ok(urls[::-1], delay_s=delay_s))


async def test_a_caller_that_goes_away_does_not_cancel_the_search_for_the_others(server, service):
    slow(server)
    request = SearchRequest(query=QUERY)
    first = asyncio.ensure_future(service.search(request))
    await asyncio.sleep(0.1)
    others = [asyncio.ensure_future(service.search(request)) for _ in range(3)]
    await asyncio.sleep(0.1)
    first.cancel()  # the first caller's client disconnected
    answers = await asyncio.gather(*others)
    assert all(a.shared and a.results for a in answers)
    assert len(server.seen("/alpha")) == 1 and len(server.seen("/beta")) == 1
    assert service._flights == {}  # nothing left in flight once it landed


async def test_different_searches_are_not_shared(server, service):
    slow(server, 0.2)
    plain, explained, other = await asyncio.gather(
        service.search(SearchRequest(query=QUERY)),
        service.search(SearchRequest(query=QUERY), explain=True),
        service.search(SearchRequest(query=QUERY, limit=3)),
    )
    assert not (plain.shared or explained.shared or other.shared)
    assert explained.candidates is not None and plain.candidates is None
    assert len(server.seen("/alpha")) == 3


async def test_a_shared_failure_is_every_callers(server, service):
    request = SearchRequest(query=QUERY, strategy="no-such-ranker")
    results = await asyncio.gather(*(service.search(request) for _ in range(3)), return_exceptions=True)
    assert all(isinstance(r, ValueError) and "no-such-ranker" in str(r) for r in results)

    server.route("/alpha", Reply(503, delay_s=0.3))
    server.route("/beta", Reply(503, delay_s=0.3))
    answers = await asyncio.gather(*(service.search(SearchRequest(query=QUERY)) for _ in range(5)))
    assert all(a.outcome.status == "failed" for a in answers)
    assert [a.shared for a in answers].count(False) == 1
    assert len(server.seen("/alpha")) == 1


async def test_search_json_shares_too(server, service):
    slow(server, 0.3)
    request = SearchRequest(query=QUERY)
    bodies = await asyncio.gather(*(service.search_json(request) for _ in range(4)))
    assert sorted(json.loads(b)["shared"] for b in bodies) == [False, True, True, True]
    assert len(server.seen("/alpha")) == 1


# --- across a fleet: processes sharing one Redis -------------------------------------------------------------


def test_with_redis_identical_searches_on_two_servers_make_one_request_per_engine(tmp_path, redis_url):
    dead = f"http://127.0.0.1:{free_port()}"
    with engines_server() as engines:
        env = {base_url_env(name): engines.url for name in ENGINE_PATHS}
        env.update(
            HTTP_PROXY=dead, HTTPS_PROXY=dead, ALL_PROXY=dead, NO_PROXY="127.0.0.1",
            SERPFUSE_RATE_LIMIT_BURST="1000",
        )  # fmt: skip
        args = ["--no-cache", "--redis", redis_url]  # no result cache: only the flights can share
        servers = [start_serpfuse(tmp_path / name, args, env) for name in ("one", "two")]
        try:
            for server in servers:
                warm(server.base)
            path = f"/v1/search?q={quote(QUERY)}&engines={','.join(ENGINE_PATHS)}"
            urls = [s.base + path for s in servers] * (CALLERS // 2)
            with ThreadPoolExecutor(CALLERS) as pool:
                answers = list(pool.map(lambda url: http("GET", url), urls))
            bodies = [json.loads(raw) for status, _, raw in answers if status == 200]
            assert len(bodies) == CALLERS, [a[:1] for a in answers]
            for name, route in ENGINE_PATHS.items():
                assert asked_for(engines, route) == 1, (name, asked_for(engines, route))
            assert sorted(b["shared"] for b in bodies) == [False] + [True] * (CALLERS - 1)
            urls_found = [[r["url"] for r in b["results"]] for b in bodies]
            assert urls_found[0] and all(u == urls_found[0] for u in urls_found)
        finally:
            for server in servers:
                stop(server.proc)


async def test_a_fleet_claim_is_its_holders_and_its_answer_its_tokens(redis_url):
    from serpfuse.state.flights import ANSWER_PREFIX, FLIGHT_PREFIX, RedisFlights
    from serpfuse.state.redis_store import redis_client

    client = redis_client(redis_url)
    flights = RedisFlights(client)
    try:
        token = await flights.claim("k", 5.0)
        assert token is not None and await flights.claim("k", 5.0) is None  # one claimant
        assert await flights.holder("k") == token
        await flights.abandon("k", "not-the-token")  # a claim that expired and was taken again is not let go
        assert await flights.holder("k") == token
        await flights.land("k", token, b'{"answer": 1}')
        assert await flights.peek("k", token) == (None, '{"answer": 1}')  # landed, and the claim gone
        assert await flights.peek("k", "older") == (None, None)  # never another claim's answer
        again = await flights.claim("k", 0.2)
        assert again not in (None, token)
        assert 0 < await client.pttl(FLIGHT_PREFIX + "k") <= 200  # a dead claimant's claim expires
        assert 0 < await client.pttl(f"{ANSWER_PREFIX}k:{token}") <= 5000
        await flights.abandon("k", again)
        assert await flights.holder("k") is None
    finally:
        await client.delete(FLIGHT_PREFIX + "k", f"{ANSWER_PREFIX}k:{token}")
        await client.aclose()
