"""The live source end to end against the fake server: statuses, cooldowns, queueing, deadlines, and keys."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from pathlib import Path

import pytest

from conftest import CLIENTS
from fakeserver import Reply, challenge_page, cloudflare_challenge, echo_headers, fake_engine, ok
from serpfuse.engines import get_engine
from serpfuse.engines.base import RequestSpec
from serpfuse.models import SearchRequest
from serpfuse.ranking.query import analyze_query
from serpfuse.secrets import KeyStore
from serpfuse.sources.fanout import fan_out
from serpfuse.sources.live import LiveSource
from serpfuse.state.cooldown import InMemoryCooldownStore

SECRET = "sk-fake-SECRET-9d8c7b6a5f"


def make_source(server, transport, tmp_path, engines, *, env=None, timeout_s=5.0, **kw) -> LiveSource:
    keys = KeyStore(
        env=env or {}, keys_file=tmp_path / "keys.json", infos={e.INFO.name: e.INFO for e in engines}
    )
    return LiveSource(
        keys,
        kw.pop("cooldowns", None) or InMemoryCooldownStore(),
        transport,
        engines=engines,
        base_urls={e.INFO.name: server.url for e in engines},
        timeout_s=timeout_s,
        **kw,
    )


REQ = SearchRequest(query="rust async runtime")
REPO_FIXTURES = Path(__file__).parent / "fixtures" / "engines"


# --- slots ---------------------------------------------------------------------------------------------------


async def test_slots_report_tier_region_and_why_an_engine_is_unavailable(server, transport, tmp_path):
    engines = [
        fake_engine("free", region="global"),
        fake_engine("keyed", needs_key=True, key_envs=("KEYED_API_KEY",), tier="fallback"),
        fake_engine("dated", time_range_support=True, region="cjk"),
    ]
    source = make_source(server, transport, tmp_path, engines)
    slots = {s.name: s for s in source.slots(SearchRequest(query="q", time_range="week"))}
    assert (
        slots["free"].available is False and slots["free"].unavailable_reason == "cannot filter by time range"
    )
    assert slots["keyed"].unavailable_reason == "no API key (set KEYED_API_KEY)"
    assert slots["keyed"].tier == "fallback"
    assert slots["dated"].available and slots["dated"].region == "cjk"
    assert [s.name for s in source.slots(REQ)] == ["free", "keyed", "dated"]  # stable order


async def test_a_configured_key_is_sent_and_makes_the_engine_available(server, transport, tmp_path):
    server.route("/keyed", ok(["https://a.example/"]))
    engine = fake_engine("keyed", needs_key=True, key_envs=("KEYED_API_KEY",))
    source = make_source(server, transport, tmp_path, [engine], env={"KEYED_API_KEY": SECRET})
    assert source.slots(REQ)[0].available
    answer = await source.ask("keyed", "rust async runtime", REQ)
    assert answer.status == "ok"
    assert server.seen("/keyed")[0].headers["x-api-key"] == SECRET


async def test_skipped_engines_are_not_asked(server, transport, tmp_path):
    server.route("/keyed", ok(["https://a.example/"]))
    engine = fake_engine("keyed", needs_key=True)
    source = make_source(server, transport, tmp_path, [engine])
    answer = await source.ask("keyed", "q", REQ)
    assert answer.status == "skipped" and answer.reason == "no API key (set SERPFUSE_KEYED_API_KEY)"
    assert (await source.ask("nope", "q", REQ)).status == "skipped"
    assert server.requests == []


# --- statuses ------------------------------------------------------------------------------------------------


async def test_ok_rows_carry_engine_rank_and_variant(server, transport, tmp_path):
    server.route("/e", ok(["https://a.example/1", "not a url", "https://b.example/2"]))
    source = make_source(server, transport, tmp_path, [fake_engine("e")])
    answer = await source.ask("e", "core words", REQ)
    assert answer.status == "ok" and answer.reason is None and answer.latency_ms > 0
    assert [(r.rank, r.url, r.variant) for r in answer.rows] == [
        (1, "https://a.example/1", "core words"),
        (3, "https://b.example/2", "core words"),  # the malformed row 2 does not promote row 3
    ]
    assert server.seen("/e")[0].query["q"] == ["core words"]


async def test_no_results_is_empty_and_clears_the_cooldown(server, transport, tmp_path):
    server.route("/e", Reply(500, body=b"oops"), ok([]))
    cooldowns = InMemoryCooldownStore(clock=lambda: 0.0)  # a frozen clock: the 5 s never pass by itself
    source = make_source(server, transport, tmp_path, [fake_engine("e")], cooldowns=cooldowns)
    assert (await source.ask("e", "q", REQ)).status == "error"
    await cooldowns.record_success("e")  # as if the 5 s had passed
    source._cooling.clear()
    answer = await source.ask("e", "q", REQ)
    assert answer.status == "empty" and answer.rows == []
    assert cooldowns.snapshot() == {}


@pytest.mark.parametrize(
    ("reply", "status", "reason_part", "cooldown_s"),
    [
        (Reply(500, body=b"boom"), "error", "HTTP 500", 5),
        (Reply(401, body=b"no"), "error", "access denied (HTTP 401)", 180),
        (Reply(429, {"Retry-After": "42"}), "rate-limited", "rate limited", 42),
        (Reply(429), "rate-limited", "rate limited", 180),
        (challenge_page(), "challenge", "challenge", 3600),
        (cloudflare_challenge(), "challenge", "Cloudflare", 3600),
        (Reply(200, body=b"<html>not json"), "error", "not JSON", 5),
        (Reply(reset=True), "error", "reset", 5),
        (Reply(200, huge_bytes=6 * 1024 * 1024), "error", "too large", 5),
    ],
)
async def test_failures_become_statuses_and_cooldowns(
    server, transport, tmp_path, reply, status, reason_part, cooldown_s
):
    server.route("/e", reply)
    cooldowns = InMemoryCooldownStore(clock=lambda: 1000.0)
    source = make_source(server, transport, tmp_path, [fake_engine("e")], cooldowns=cooldowns)
    answer = await source.ask("e", "q", REQ)
    assert answer.status == status
    assert reason_part in answer.reason
    state = await cooldowns.get("e")
    assert state is not None and state.until - 1000.0 == pytest.approx(cooldown_s)


async def test_retry_after_reaches_the_answer_and_the_next_call_is_skipped(server, transport, tmp_path):
    server.route("/e", Reply(429, {"Retry-After": "42"}), ok(["https://a.example/"]))
    now = [1000.0]
    cooldowns = InMemoryCooldownStore(clock=lambda: now[0])
    source = make_source(
        server, transport, tmp_path, [fake_engine("e")], cooldowns=cooldowns, clock=lambda: now[0]
    )
    first = await source.ask("e", "q", REQ)
    assert first.retry_after_s == 42
    (slot,) = source.slots(REQ)
    assert (
        not slot.available and slot.unavailable_reason == "cooling down 42 s after: rate limited (HTTP 429)"
    )
    second = await source.ask("e", "q", REQ)
    assert second.status == "skipped" and second.reason.startswith("cooling down 42 s")
    assert len(server.seen("/e")) == 1  # the cooling engine was not asked again
    now[0] += 43
    assert source.slots(REQ)[0].available
    assert (await source.ask("e", "q", REQ)).status == "ok"


async def test_a_cooldown_in_a_shared_store_is_seen_by_another_source(server, transport, tmp_path):
    server.route("/e", challenge_page())
    cooldowns = InMemoryCooldownStore()
    one = make_source(server, transport, tmp_path, [fake_engine("e")], cooldowns=cooldowns)
    two = make_source(server, transport, tmp_path, [fake_engine("e")], cooldowns=cooldowns)
    assert (await one.ask("e", "q", REQ)).status == "challenge"
    assert two.slots(REQ)[0].available  # its mirror has not heard yet...
    await two.refresh()
    assert two.slots(REQ)[0].unavailable_reason.startswith("cooling down 3600 s")  # ...until it refreshes
    assert (await two.ask("e", "q", REQ)).status == "skipped"
    assert len(server.requests) == 1


async def test_an_engine_that_cannot_express_the_query_is_skipped_without_cooldown(
    server, transport, tmp_path
):
    engine = fake_engine("e")
    engine.build_request = lambda q: None
    cooldowns = InMemoryCooldownStore()
    source = make_source(server, transport, tmp_path, [engine], cooldowns=cooldowns)
    answer = await source.ask("e", "q", REQ)
    assert answer.status == "skipped" and "cannot serve" in answer.reason
    assert cooldowns.snapshot() == {}


async def test_a_parser_bug_is_an_error_answer_not_an_exception(server, transport, tmp_path):
    server.route("/e", Reply(200, body=b'{"no_results_key": "SECRET-LOOKING BODY TEXT"}'))
    source = make_source(server, transport, tmp_path, [fake_engine("e")])
    answer = await source.ask("e", "q", REQ)
    assert answer.status == "error" and answer.reason == "parser failed: KeyError"


async def test_multi_step_engines_get_a_bound_client(server, transport, tmp_path):
    server.route("/step1", Reply(200, body=b"token-1"))
    server.route("/step2", ok(["https://a.example/"]))
    engine = fake_engine("mcp")
    seen_hook = []

    async def run(client, q):
        status, _, token = await client.send(
            __import__("serpfuse.engines.base", fromlist=["RequestSpec"]).RequestSpec(
                "GET", q.base_url + "/step1"
            )
        )
        assert status == 200
        spec = engine.build_request(q)
        spec.url = q.base_url + "/step2"
        return await client.send(spec)  # the last reply: the source parses it with engine.parse

    engine.run = run
    source = make_source(
        server, transport, tmp_path, [engine], on_response=lambda e, v, r: seen_hook.append((e, r.status))
    )
    answer = await source.ask("mcp", "q", REQ)
    assert answer.status == "ok" and len(answer.rows) == 1
    assert seen_hook == [("mcp", 200), ("mcp", 200)]


# --- error bodies and keys -----------------------------------------------------------------------------------


async def test_an_engine_flagged_so_never_has_its_error_body_read(server, transport, tmp_path):
    creds = b'{"username": "auto-user", "password": "pw-123", "api_key": "as-generated-key"}'
    server.route("/v1/search", Reply(402, {"Content-Type": "application/json"}, creds))
    captured = []
    engine = get_engine("anysearch")  # the real engine: its INFO carries the flag
    flagged = fake_engine("other", read_error_body=False)
    server.route("/other", Reply(402, {"Content-Type": "application/json"}, creds))
    source = make_source(
        server, transport, tmp_path, [engine, flagged], on_response=lambda e, v, r: captured.append(r.body)
    )
    for name in ("anysearch", "other"):
        answer = await source.ask(name, "q", REQ)
        assert answer.status == "error" and answer.reason == "access denied (HTTP 402)"
    assert captured == [b"", b""]


async def test_a_key_never_leaks_into_answers_logs_or_json(server, transport, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    server.route("/echo500", echo_headers(500))
    server.route("/echo403", echo_headers(403))
    server.route("/echo200", lambda seen: ok([f"https://a.example/?k={seen.headers['x-api-key']}"]))
    server.route("/slow", Reply(200, delay_s=3))
    kw = {"needs_key": True, "key_envs": ("FAKE_API_KEY",)}
    engines = [
        fake_engine("e500", path="/echo500", **kw),
        fake_engine("e403", path="/echo403", **kw),
        fake_engine("e200", path="/echo200", **kw),
        fake_engine("slow", path="/slow", timeout_s=0.3, **kw),
    ]
    source = make_source(server, transport, tmp_path, engines, env={"FAKE_API_KEY": SECRET})
    answers = [await source.ask(e.INFO.name, "q", REQ) for e in engines]
    assert [a.status for a in answers] == ["error", "error", "ok", "timeout"]
    assert all(s.headers["x-api-key"] == SECRET for s in server.requests)  # it was really sent
    dumped = (
        json.dumps([a.to_json_dict() for a in answers]) + repr(answers) + repr(source) + repr(source.keys)
    )
    assert SECRET not in dumped
    assert answers[2].rows[0].url == "https://a.example/?k=***"
    assert SECRET not in caplog.text
    assert "e500: error: HTTP 500" in caplog.text  # the log line exists, it just holds no key


async def test_a_key_never_leaks_into_the_search_json(server, transport, tmp_path):
    from serpfuse.api import asearch

    server.route("/echo", lambda seen: ok([f"https://a.example/{seen.headers['x-api-key']}"]))
    server.route("/bad", echo_headers(500))
    kw = {"needs_key": True, "key_envs": ("FAKE_API_KEY",)}
    engines = [fake_engine("echo", **kw), fake_engine("bad", **kw)]
    source = make_source(server, transport, tmp_path, engines, env={"FAKE_API_KEY": SECRET})
    response = await asearch(
        SearchRequest(query="rust async runtime"), source=source, deadline_s=5, explain=True
    )
    blob = json.dumps(response.to_json_dict())
    assert {e.engine: e.status for e in response.engines} == {"echo": "ok", "bad": "error"}
    assert SECRET not in blob and "***" in blob


# --- queueing, deadlines, cancellation -----------------------------------------------------------------------


async def test_parallel_calls_to_a_rate_limited_engine_queue_instead_of_failing(server, transport, tmp_path):
    server.route("/brave", ok(["https://a.example/"]))
    server.route("/free", ok(["https://b.example/"]))
    interval = 0.2
    engines = [fake_engine("brave", min_interval_s=interval), fake_engine("free")]
    source = make_source(server, transport, tmp_path, engines)
    # The first request builds the HTTP client (TLS context, HTTP/2), which on a loaded machine takes longer
    # than one interval and would bunch the first two slots: pay for it before the measured burst.
    await transport.send(RequestSpec("GET", f"{server.url}/warm-up"))
    answers = await asyncio.gather(*(source.ask(n, "q", REQ) for n in ["brave"] * 4 + ["free"] * 4))
    assert [a.status for a in answers] == ["ok"] * 8
    brave = [s.at for s in server.seen("/brave")]
    free = [s.at for s in server.seen("/free")]
    # Slots are exactly one interval apart; arrival adds network jitter, so compare spans, not single gaps.
    assert max(brave) - min(brave) >= 3 * interval * 0.8
    # The unlimited engine's four calls arrive together: much tighter than the limited one's.
    assert (max(free) - min(free)) < (max(brave) - min(brave)) / 3


async def test_a_queue_longer_than_the_timeout_is_a_timeout_without_cooldown(server, transport, tmp_path):
    server.route("/brave", ok(["https://a.example/"]))
    cooldowns = InMemoryCooldownStore()
    engine = fake_engine("brave", min_interval_s=10.0)
    source = make_source(server, transport, tmp_path, [engine], timeout_s=1.0, cooldowns=cooldowns)
    first, second = await asyncio.gather(source.ask("brave", "q", REQ), source.ask("brave", "q", REQ))
    assert first.status == "ok"
    assert second.status == "timeout" and "queue" in second.reason
    assert cooldowns.snapshot() == {}


async def test_the_engine_timeout_is_a_timeout_status(server, transport, tmp_path):
    server.route("/slow", Reply(200, body=b'{"results": []}', delay_s=5))
    source = make_source(server, transport, tmp_path, [fake_engine("slow", path="/slow")], timeout_s=0.3)
    started = time.monotonic()
    answer = await source.ask("slow", "q", REQ)
    assert answer.status == "timeout"
    assert time.monotonic() - started < 5 / 2


async def test_a_slow_engine_does_not_hold_the_others_and_nothing_leaks(server, transport, tmp_path):
    server.route("/fast", ok(["https://fast.example/"]))
    server.route("/slow", Reply(200, body=b'{"results": []}', delay_s=6))
    server.route("/drip", Reply(200, body=b'{"results": []}' * 20, drip_interval_s=0.05))
    engines = [fake_engine("fast"), fake_engine("slow", path="/slow"), fake_engine("drip", path="/drip")]
    source = make_source(server, transport, tmp_path, engines, timeout_s=15)
    # The client's own lasting machinery (libcurl's multi and its timer task) starts with its first call.
    await source.ask("fast", "q", REQ)
    before = asyncio.all_tasks()
    started = time.monotonic()
    result = await fan_out(source, REQ, analyze_query(REQ.query), deadline_s=0.6)
    elapsed = time.monotonic() - started
    status = {a.engine: a.status for a in result.answers}
    assert status == {"fast": "ok", "slow": "timeout", "drip": "timeout"}
    assert elapsed < 6 / 3, "the deadline did not cut the slow engine off"
    assert asyncio.all_tasks() == before  # cancelled engine calls are gone, not running on
    # The shared client survives the cancellations and still serves the next search.
    again = await source.ask("fast", "q", REQ)
    assert again.status == "ok"


async def test_cancelling_an_ask_propagates_and_records_no_failure(server, transport, tmp_path):
    server.route("/slow", Reply(200, delay_s=5))
    cooldowns = InMemoryCooldownStore()
    source = make_source(
        server, transport, tmp_path, [fake_engine("slow", path="/slow")], cooldowns=cooldowns
    )
    task = asyncio.ensure_future(source.ask("slow", "q", REQ))
    while not server.seen("/slow"):
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert cooldowns.snapshot() == {}


# --- through the lead's fan-out: tier gate and retry guard ----------------------------------------------------


async def test_fallback_tier_runs_only_when_every_primary_is_empty(server, transport, tmp_path):
    server.route("/p", ok([]))
    server.route("/fb", ok(["https://fallback.example/"]))
    engines = [fake_engine("p"), fake_engine("fb", tier="fallback")]
    source = make_source(server, transport, tmp_path, engines)
    result = await fan_out(source, REQ, analyze_query(REQ.query), deadline_s=5)
    assert result.fallback_used and {a.engine: a.status for a in result.answers if a.engine == "fb"} == {
        "fb": "ok"
    }

    server.route("/p", ok(["https://primary.example/"]))
    before = len(server.seen("/fb"))
    result = await fan_out(source, REQ, analyze_query(REQ.query), deadline_s=5)
    assert not result.fallback_used
    assert len(server.seen("/fb")) == before  # the fallback engine was never asked
    (fb,) = [a for a in result.answers if a.engine == "fb"]
    assert fb.status == "skipped" and fb.reason == "fallback tier not needed"


async def test_a_primary_that_fails_counts_as_empty_for_the_gate(server, transport, tmp_path):
    server.route("/p", Reply(429))
    server.route("/fb", ok(["https://fallback.example/"]))
    source = make_source(server, transport, tmp_path, [fake_engine("p"), fake_engine("fb", tier="fallback")])
    result = await fan_out(source, REQ, analyze_query(REQ.query), deadline_s=5)
    assert result.fallback_used
    assert {a.engine: a.status for a in result.answers} == {"p": "rate-limited", "fb": "ok"}


async def test_core_word_retry_runs_only_when_no_row_survives_the_gate(server, transport, tmp_path):
    request = SearchRequest(query="how to fix a flaky pytest")
    query = analyze_query(request.query)
    assert query.core_variant == "fix flaky pytest"
    server.route("/p", ok(["https://a.example/"]))
    source = make_source(server, transport, tmp_path, [fake_engine("p")])

    result = await fan_out(source, request, query, deadline_s=5, gate=lambda row: True)
    assert not result.retried
    assert [s.query["q"] for s in server.seen("/p")] == [["how to fix a flaky pytest"]]

    result = await fan_out(source, request, query, deadline_s=5, gate=lambda row: False)
    assert result.retried
    assert [s.query["q"][0] for s in server.seen("/p")][1:] == [
        "how to fix a flaky pytest",
        "fix flaky pytest",
    ]
    retry = [a for a in result.answers if a.variant == "fix flaky pytest"]
    assert retry and all(r.variant == "fix flaky pytest" for r in retry[0].rows)


# --- real engine modules, pointed at the fake server ------------------------------------------------------------


async def test_real_ddg_challenge_and_real_anysearch_402_through_the_live_source(server, transport, tmp_path):
    from serpfuse.engines import get_engine

    creds = b'{"username": "u-1", "password": "pw-generated", "api_key": "as-generated"}'
    server.route("/html/", challenge_page())
    server.route("/v1/search", Reply(402, {"Content-Type": "application/json"}, creds))
    bodies = []
    ddg, anysearch = get_engine("ddg"), get_engine("anysearch")
    source = LiveSource(
        KeyStore(env={}, keys_file=tmp_path / "keys.json"),
        InMemoryCooldownStore(),
        transport,
        engines=["ddg", "anysearch"],
        base_urls={"ddg": server.url, "anysearch": server.url},
        on_response=lambda e, v, r: bodies.append((e, r.body)),
    )
    assert source.modules == {"ddg": ddg, "anysearch": anysearch}
    answers = {a.engine: a for a in await asyncio.gather(*(source.ask(n, "q", REQ) for n in source.modules))}
    assert answers["ddg"].status == "challenge"
    assert answers["anysearch"].status == "error" and "402" in answers["anysearch"].reason
    assert dict(bodies)["anysearch"] == b""  # never read, so never logged, saved or echoed
    assert b"pw-generated" not in json.dumps([a.to_json_dict() for a in answers.values()]).encode()


async def test_an_engines_expected_time_follows_its_answers_and_not_its_failures(server, transport, tmp_path):
    from serpfuse.sources.live import LATENCY_WEIGHT

    server.route("/slow", ok(["https://a.example/"], delay_s=0.2))
    server.route("/broken", Reply(status=500, delay_s=0.3))
    source = make_source(server, transport, tmp_path, [fake_engine("slow"), fake_engine("broken")])
    assert source.expected_s("slow") is None  # nothing known before an answer
    first = await source.ask("slow", "q", REQ)
    assert first.status == "ok" and abs(source.expected_s("slow") - first.latency_ms / 1000) < 1e-3
    server.route("/slow", ok(["https://a.example/"]))  # now it answers at once: the average moves toward it
    second = await source.ask("slow", "q", REQ)
    want = first.latency_ms / 1000 + LATENCY_WEIGHT * (second.latency_ms - first.latency_ms) / 1000
    assert abs(source.expected_s("slow") - want) < 1e-3
    assert (await source.ask("broken", "q", REQ)).status == "error"
    assert source.expected_s("broken") is None  # a failure says nothing about how long an answer takes


# --- one browser per engine ----------------------------------------------------------------------------------


async def test_a_browser_engine_keeps_its_browser_until_it_draws_a_challenge(server, tmp_path, monkeypatch):
    from serpfuse.sources.transport import Transport

    results = (REPO_FIXTURES / "synthetic_ddg_results.html").read_bytes()
    page = Reply(200, {"Content-Type": "text/html"}, results)
    server.route("/html/", page, page, challenge_page(), page, page)
    now = [1000.0]
    async with Transport(trust_env=False, impersonate=True) as transport:
        releases = iter(["chrome152", "firefox154", "safari270"])
        monkeypatch.setattr(transport, "pick_profile", lambda: next(releases))
        source = LiveSource(
            KeyStore(env={}, keys_file=tmp_path / "keys.json"),
            InMemoryCooldownStore(clock=lambda: now[0]),
            transport,
            engines=["ddg"],
            base_urls={"ddg": server.url},
            clock=lambda: now[0],
        )
        statuses = []
        for _ in range(5):
            statuses.append((await source.ask("ddg", "q", REQ)).status)
            now[0] += 60  # past the challenge's 30 s
    assert statuses == ["ok", "ok", "challenge", "ok", "ok"]
    agents = [s.headers["user-agent"] for s in server.seen("/html/")]
    # the same browser for every call until the 202; the next browser from then on
    assert len(set(agents[:3])) == 1 and "Chrome/152." in agents[0]
    assert len(set(agents[3:])) == 1 and "Firefox/154." in agents[3]


# --- exa-free's keyless rate limit ----------------------------------------------------------------------------


async def test_exa_frees_json_rpc_rate_limit_is_a_rate_limit_cooldown(server, transport, tmp_path):
    limit = {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {"code": -32000, "message": "You've hit Exa's free MCP rate limit"},
    }
    server.route("/mcp", Reply(400, {"Content-Type": "application/json"}, json.dumps(limit).encode()))
    cooldowns = InMemoryCooldownStore(clock=lambda: 1000.0)
    source = LiveSource(
        KeyStore(env={}, keys_file=tmp_path / "keys.json"),
        cooldowns,
        transport,
        engines=["exa-free"],
        base_urls={"exa-free": server.url},
        clock=lambda: 1000.0,
    )
    answer = await source.ask("exa-free", "q", REQ)
    assert answer.status == "rate-limited" and "rate limit" in answer.reason
    state = cooldowns.snapshot()["exa-free"]
    assert state["status"] == "rate-limited" and state["until"] - 1000.0 == 180.0  # not the 5 s error backoff
    assert len(server.requests) == 1


# --- one source, several event loops -------------------------------------------------------------------------


@pytest.mark.parametrize("impersonate", list(CLIENTS.values()), ids=list(CLIENTS))
def test_one_source_serves_search_after_search_each_on_a_loop_of_its_own(server, tmp_path, impersonate):
    """``serpfuse.search`` runs each search in an ``asyncio.run`` of its own. A source passed to several keeps
    answering (its clients made on an ended loop sent nothing: every engine timed out, then cooled down), and
    the ended loops' clients are closed, so no connection piles up."""
    import gc
    import os

    import serpfuse
    from serpfuse.sources.transport import Transport

    server.route("/e", ok(["https://a.example/1", "https://b.example/2"]))
    source = make_source(
        server, Transport(trust_env=False, impersonate=impersonate), tmp_path, [fake_engine("e")]
    )
    open_fds = []
    try:
        for i in range(12):
            response = serpfuse.search(f"rust async runtime {i}", source=source)
            assert [(e.engine, e.status) for e in response.engines] == [("e", "ok")], i
            gc.collect()  # what only the ended loop still held (httpx2's connections) goes with it
            open_fds.append(len(os.listdir("/proc/self/fd")))
    finally:
        asyncio.run(source.aclose())
    assert open_fds[-1] <= open_fds[1] + 2, open_fds


async def test_a_transport_in_use_on_another_open_loop_says_so(server, transport):
    """Two loops at once (threads, say) would take each other's transfers: one source per loop."""
    import threading

    server.route("/e", ok(["https://a.example/1"]))
    await transport.send(RequestSpec("GET", server.url + "/e"))
    errors: list[BaseException] = []

    def other_loop() -> None:
        try:
            asyncio.run(transport.send(RequestSpec("GET", server.url + "/e")))
        except RuntimeError as exc:
            errors.append(exc)

    thread = threading.Thread(target=other_loop)
    thread.start()
    thread.join(10)
    assert [str(e) for e in errors] == [
        "this transport is in use on another event loop: open one source per loop"
    ]
    await transport.send(RequestSpec("GET", server.url + "/e"))  # and it still serves its own
