"""Input bounds and the parser thread: no engine answer can cost more than linear work, stall the event loop
or count against an engine for the caller's mistake (issue 10, items 1-3, 7 and 9)."""

from __future__ import annotations

import asyncio
import json
import time
import tracemalloc

import pytest

from fakeserver import Reply, fake_engine, ok
from serpfuse.engines import bing, searxng, wikipedia
from serpfuse.engines.base import (
    MIN_RETRY_AFTER_S,
    EngineQuery,
    ParseFailure,
    ParseOverrun,
    RequestSpec,
    classify_http,
)
from serpfuse.engines.bounds import MAX_DEPTH, MAX_ITEMS, markup_problem
from serpfuse.models import EngineRow, SearchRequest
from serpfuse.secrets import KeyStore
from serpfuse.sources.live import LiveSource, cap_rows
from serpfuse.sources.parsing import parse_in_thread
from serpfuse.state.cooldown import InMemoryCooldownStore

Q = EngineQuery(text="x")
REQ = SearchRequest(query="rust async runtime")


def live(server, transport, tmp_path, engines, **kw) -> LiveSource:
    keys = KeyStore(env={}, keys_file=tmp_path / "keys.json", infos={e.INFO.name: e.INFO for e in engines})
    return LiveSource(
        keys,
        kw.pop("cooldowns", None) or InMemoryCooldownStore(),
        transport,
        engines=engines,
        base_urls=kw.pop("base_urls", {e.INFO.name: server.url for e in engines}),
        timeout_s=5.0,
        **kw,
    )


# --- markup --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("tag", ["div", "b", "a", "span", "font"])
def test_deep_markup_is_refused_before_a_tree_is_built(tag):
    page = f"<{tag}>".encode() * 40_000
    assert "deep" in (markup_problem(page.decode()) or "")
    with pytest.raises(ParseFailure, match="deep"):
        bing.parse(200, {"content-type": "text/html"}, page, Q)


def test_a_page_of_too_many_elements_is_refused():
    assert "elements" in (markup_problem("<p>x</p>" * 40_000) or "")


def test_ordinary_markup_passes_the_bounds():
    # Unclosed <p>/<li>, void elements, scripts holding "<" and comments add no depth.
    page = "<html><body>" + "<ul>" + "<li><p>row<br><img src=x>" * 5000 + "</ul>"
    page += "<script>for (i = 0; i<b; i++) { x = '<div>' }</script><!-- <div><div> -->" * 500
    assert markup_problem(page) is None
    assert markup_problem("<div>" * (MAX_DEPTH - 5)) is None


# --- rows ----------------------------------------------------------------------------------------------------


def test_a_flood_of_rows_is_read_only_up_to_the_cap():
    items = [
        {"title": f"t{i}", "pageid": i, "snippet": "s", "timestamp": "2024-01-01T00:00:00Z"}
        for i in range(30_000)
    ]
    body = json.dumps({"query": {"search": items}}).encode()
    rows = wikipedia.parse(200, {}, body, Q)
    assert 0 < len(rows) <= MAX_ITEMS


def test_cap_rows_keeps_each_engines_best_ranked_rows():
    rows = [
        EngineRow(engine=e, rank=r, url=f"https://{e}.example/{r}")
        for e in ("a", "b")
        for r in range(50, 0, -1)
    ]
    capped = cap_rows(rows, 10)
    assert [(r.engine, r.rank) for r in capped] == [(e, r) for e in ("a", "b") for r in range(1, 11)]


@pytest.mark.parametrize("n", [10, 11, 40])
def test_the_searxng_solver_is_bounded_before_it_enumerates(n):
    engines = [f"e{i}" for i in range(n)]
    result = {
        "engine": "e0",
        "engines": engines,
        "positions": list(range(1, n + 1)),
        "url": "https://a.example/",
    }
    tracemalloc.start()
    try:
        pairs = searxng.assign_positions([result, dict(result, url="https://b.example/")])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 5_000_000  # 10 engines once took 839 MB
    assert pairs[0][0] == ("e0", 1)
    assert len(pairs[0]) == min(n, searxng.MAX_SIGHTINGS)


def test_a_searxng_flood_is_read_up_to_the_cap():
    results = [
        {"url": f"https://a.example/{i}", "title": "t", "engine": "x", "engines": ["x"], "positions": [i + 1]}
        for i in range(30_000)
    ]
    rows = searxng.parse(200, {}, json.dumps({"results": results}).encode(), Q)
    assert len(rows) == MAX_ITEMS


# --- the parser thread -------------------------------------------------------------------------------------


async def test_a_parse_runs_off_the_loop_and_an_overrun_is_abandoned():
    ticks = []

    async def tick():
        while True:
            ticks.append(time.monotonic())
            await asyncio.sleep(0.01)

    ticker = asyncio.create_task(tick())
    try:
        with pytest.raises(ParseOverrun):
            await parse_in_thread(lambda: time.sleep(1.0) or [], 0.3)
    finally:
        ticker.cancel()
    assert len(ticks) >= 10  # the loop kept running while the parse blocked its thread


async def test_an_overrunning_parse_is_its_own_status_and_cools_the_engine(
    server, transport, tmp_path, monkeypatch
):
    server.route("/slow", ok(["https://a.example/"]))
    engine = fake_engine("slow")
    real_parse = engine.parse
    engine.parse = lambda *args: time.sleep(1.0) or real_parse(*args)
    monkeypatch.setattr("serpfuse.sources.live.PARSE_BUDGET_S", 0.2)
    cooldowns = InMemoryCooldownStore()
    source = live(server, transport, tmp_path, [engine], cooldowns=cooldowns)
    answer = await source.ask("slow", "q", REQ)
    assert answer.status == "parse-timeout" and "abandoned" in answer.reason
    assert (await cooldowns.get("slow")) is not None


async def test_a_request_the_callers_input_broke_never_cools_the_engine(server, transport, tmp_path):
    engine = fake_engine("strict")
    engine.build_request = lambda q: RequestSpec("GET", f"http://{q.region}.127.0.0.1:{server.port}/x")
    broken = fake_engine("broken")
    broken.build_request = lambda q: 1 / 0
    cooldowns = InMemoryCooldownStore()
    # No base URL: a base URL's host would stand in for the broken one.
    source = live(server, transport, tmp_path, [engine, broken], cooldowns=cooldowns, base_urls={})
    request = SearchRequest.model_construct(**{**REQ.model_dump(), "region": "ab\n-zz"})
    for name in ("strict", "broken"):
        answer = await source.ask(name, "q", request)
        assert answer.status == "skipped", answer
        assert (await cooldowns.get(name)) is None
    assert server.seen("/x") == []


def test_retry_after_zero_still_cools_down():
    error = classify_http(429, {"Retry-After": "0"}, b"")
    assert error is not None and error.cooldown_s == MIN_RETRY_AFTER_S


@pytest.mark.parametrize("reply", [Reply(200, {"Content-Type": "text/html"}, b"<div>" * 100_000)])
async def test_a_nested_page_is_a_layout_error_that_cools(server, transport, tmp_path, reply):
    server.route("/page", reply)
    engine = fake_engine("page")
    engine.parse = bing.parse
    cooldowns = InMemoryCooldownStore()
    source = live(server, transport, tmp_path, [engine], cooldowns=cooldowns)
    answer = await source.ask("page", "q", REQ)
    assert answer.status == "error" and "deep" in answer.reason
    assert (await cooldowns.get("page")) is not None


async def test_a_garbage_page_cools_the_engine_and_an_empty_results_page_does_not(
    server, transport, tmp_path
):
    """A 200 page that parses to nothing is "empty" only when it is the engine's results page; anything else
    is a layout error that cools the engine (it would otherwise repeat on every search)."""
    html = {"Content-Type": "text/html"}
    server.route("/garbage", Reply(200, html, b"<html><body><h1>Under maintenance</h1></body></html>"))
    server.route("/empty", Reply(200, html, b'<html><body><ol id="b_results"></ol></body></html>'))
    engines = [fake_engine("garbage"), fake_engine("empty")]
    for engine in engines:
        engine.parse = bing.parse
    cooldowns = InMemoryCooldownStore()
    source = live(server, transport, tmp_path, engines, cooldowns=cooldowns)
    garbage = await source.ask("garbage", "q", REQ)
    assert garbage.status == "error" and "not a results page" in garbage.reason
    assert (await cooldowns.get("garbage")) is not None
    empty = await source.ask("empty", "q", REQ)
    assert empty.status == "empty" and (await cooldowns.get("empty")) is None
