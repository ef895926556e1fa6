"""News search: the news engines' requests (pinned to what peers send), their parsers on hand-made answers,
engine selection by category, and a news search end to end through every face, against loopback fakes."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from pydantic import ValidationError
from typer.testing import CliRunner

from fakeserver import Reply, challenge_page
from serpfuse.engines import ENGINES, category_of, default_keyless_primaries, get_engine
from serpfuse.engines.base import ChallengeDetected, EngineQuery, ParseFailure
from serpfuse.models import SearchRequest
from serpfuse.secrets import KeyStore
from serpfuse.serve.http_api import create_app
from serpfuse.serve.mcp_server import build_server
from serpfuse.service import SearchService
from serpfuse.settings import Settings, validation_message
from serpfuse.sources.base import EngineSlot
from serpfuse.sources.fanout import NoEngineInCategory, UnknownEngine, select_slots
from serpfuse.sources.live import LiveSource
from serpfuse.state.cooldown import InMemoryCooldownStore

FIXTURES = Path(__file__).parent / "fixtures" / "engines"
HTML = {"content-type": "text/html; charset=utf-8"}
JSON = {"content-type": "application/json"}
RSS = {"content-type": "application/rss+xml; charset=utf-8"}
Q = EngineQuery(text="rust async runtime")
NEWS_ENGINES = ("ddg-news", "bing-news", "brave-news", "google-news")


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


# --- the registry and the request model ------------------------------------------------------------------------


def test_news_engines_are_keyless_primaries_of_the_news_category() -> None:
    assert default_keyless_primaries("news") == list(NEWS_ENGINES)
    assert not set(NEWS_ENGINES) & set(default_keyless_primaries())  # a web search never asks them
    for name in NEWS_ENGINES:
        assert category_of(name) == "news" and ENGINES[name].INFO.group in ("bing", "brave", "google")
    assert category_of("bing") == category_of("duckduckgo") == "general"  # any other name: the web


def test_category_defaults_to_the_web_and_an_unknown_one_is_a_one_line_error() -> None:
    assert SearchRequest(query="q").category == "general"
    assert SearchRequest(query="q", category="News").category == "news"
    with pytest.raises(ValidationError) as info:
        SearchRequest(query="q", category="images")
    message = validation_message(info.value)
    assert message == "category: unknown category 'images' (choose from: general, news)"
    assert "\n" not in message


# --- DuckDuckGo News ----------------------------------------------------------------------------------------


def test_ddg_news_asks_the_results_page_for_the_token_then_news_js() -> None:
    # SearXNG's duckduckgo_extra (news) and ddgs' news: the vqd from the page, then news.js with o=json
    engine = get_engine("ddg-news")
    first = engine.build_preflight(EngineQuery(text="!w rust", region="de", time_range="week"))
    assert (first.method, first.url) == ("GET", "https://duckduckgo.com/")
    assert first.params == {"q": "'!w' rust", "iar": "news", "t": "h_"}  # a bang would leave DuckDuckGo
    page = (200, HTML, fixture("ddg_news_page_handmade.html"))
    spec = engine.build_request(EngineQuery(text="!w rust", region="de", time_range="week"), page)
    assert (spec.method, spec.url) == ("GET", "https://duckduckgo.com/news.js")
    assert spec.params == {
        "o": "json",
        "q": "'!w' rust",
        "l": "de-de",
        "vqd": "4-211234567890123456789012345678901234567",
        "noamp": "1",
        "df": "w",
    }
    assert spec.headers["Referer"] == "https://duckduckgo.com/" and spec.headers["Sec-Fetch-Mode"] == "cors"
    assert (
        "df" not in engine.build_request(Q, page).params
        and engine.build_request(Q, page).params["l"] == "wt-wt"
    )


def test_ddg_news_serves_no_year_no_dates_and_no_long_query() -> None:
    engine = get_engine("ddg-news")
    assert engine.build_preflight(EngineQuery(text="q", time_range="year")) is None
    assert engine.build_preflight(EngineQuery(text="q", date_from=dt.date(2025, 1, 1))) is None
    from serpfuse.engines.base import QueryNotServed

    with pytest.raises(QueryNotServed):
        engine.build_preflight(EngineQuery(text="a" * 500))


def test_ddg_news_token_page_without_a_token() -> None:
    engine = get_engine("ddg-news")
    with pytest.raises(ChallengeDetected):
        engine.build_request(Q, (202, HTML, fixture("ddg_news_page_handmade.html")))
    blocked = challenge_page().body
    with pytest.raises(ChallengeDetected):
        engine.build_request(Q, (200, HTML, blocked))
    with pytest.raises(ParseFailure, match="vqd"):
        engine.build_request(Q, (200, HTML, b"<html><body>new layout</body></html>"))


def test_ddg_news_rows_carry_their_publication_dates() -> None:
    rows = get_engine("ddg-news").parse(200, JSON, fixture("ddg_news_results_handmade.json"), Q)
    assert [(r.rank, r.url) for r in rows] == [
        (1, "https://news.example/tokio-2"),
        (3, "https://devweekly.example/async-runtimes"),
        (4, "https://oss.example/smol-five"),
    ]
    tokio, dev, smol = rows
    assert tokio.published == dt.datetime(2025, 12, 1, 12, tzinfo=dt.UTC)
    assert tokio.snippet == "The Tokio team shipped a new async runtime release for Rust."  # <b> stripped
    assert dev.published is None and dev.title == "Why Rust's async runtimes differ"  # entities decoded
    assert smol.published == dt.datetime(2025, 11, 29, 12, tzinfo=dt.UTC)


def test_ddg_news_shapes() -> None:
    engine = get_engine("ddg-news")
    assert engine.parse(200, JSON, b'{"results": []}', Q) == []
    for junk in (b"[]", b'{"results": 1}', b"<html></html>"):
        with pytest.raises(ParseFailure):
            engine.parse(200, JSON, junk, Q)
    with pytest.raises(ChallengeDetected):
        engine.parse(202, JSON, b'{"results": []}', Q)


# --- Bing News ----------------------------------------------------------------------------------------------


def test_bing_news_asks_for_the_rss_feed_in_bings_market() -> None:
    spec = get_engine("bing-news").build_request(EngineQuery(text="bahn streik", region="de", language="de"))
    assert (spec.method, spec.url) == ("GET", "https://www.bing.com/news/search")
    assert spec.params == {"q": "bahn streik", "format": "rss", "setlang": "de", "cc": "de"}
    assert spec.headers == {
        "Accept-Language": "de-DE,de;q=0.9"
    }  # the region's browser, as for the web search
    day = get_engine("bing-news").build_request(EngineQuery(text="q", time_range="day"))
    assert day.params["qft"] == 'interval="7"'
    assert get_engine("bing-news").build_request(EngineQuery(text="q", time_range="year")) is None


def test_bing_news_rows_open_the_click_redirector_and_keep_the_dates() -> None:
    rows = get_engine("bing-news").parse(200, RSS, fixture("bing_news_handmade.rss"), Q)
    assert [(r.rank, r.url) for r in rows] == [
        (1, "https://news.example/tokio-2"),
        (3, "https://benchmarks.example/rust-runtimes"),
        (4, "https://oss.example/smol-five"),
    ]
    tokio, bench, smol = rows
    assert tokio.snippet == "The Tokio team shipped a new async runtime release for Rust."
    assert tokio.published == dt.datetime(2025, 12, 1, 12, tzinfo=dt.UTC)
    assert bench.published is None
    assert smol.published == dt.datetime(2025, 11, 29, 9, 30, tzinfo=dt.UTC)


def test_bing_news_refuses_what_is_no_feed() -> None:
    engine = get_engine("bing-news")
    assert engine.parse(200, RSS, b"<rss><channel><title>none</title></channel></rss>", Q) == []
    with pytest.raises(ChallengeDetected):
        engine.parse(200, HTML, fixture("synthetic_bing_captcha.html"), Q)
    with pytest.raises(ParseFailure, match="not an RSS feed"):
        engine.parse(200, HTML, b"<html><body>maintenance</body></html>", Q)
    laughs = b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaa">]><rss><channel><item><title>&a;</title>'
    with pytest.raises(ParseFailure, match="not an RSS feed"):  # a feed needs no DTD: never expanded
        engine.parse(200, RSS, laughs + b"</item></channel></rss>", Q)


# --- Brave News and Google News -----------------------------------------------------------------------------


def test_brave_news_request() -> None:
    spec = get_engine("brave-news").build_request(EngineQuery(text="q", region="gb"))
    assert (spec.method, spec.url, spec.params) == (
        "GET",
        "https://search.brave.com/news",
        {"q": "q", "source": "web"},
    )
    assert spec.cookies == {"useLocation": "0", "summarizer": "0", "country": "gb"}
    assert spec.headers["Sec-Fetch-Mode"] == "navigate"
    assert not ENGINES["brave-news"].INFO.time_range_support  # Brave's tf works on web search only


def test_brave_news_rows_take_the_cards_date_not_the_texts() -> None:
    rows = get_engine("brave-news").parse(200, HTML, fixture("brave_news_results_handmade.html"), Q)
    assert [(r.rank, r.url) for r in rows] == [
        (1, "https://news.example/tokio-2"),
        (3, "https://devweekly.example/async-runtimes"),
        (4, "https://oss.example/smol-five"),
        (5, "https://braveonly.example/runtime-notes"),
    ]
    tokio, dev, smol, notes = rows
    assert tokio.published == dt.datetime(2025, 12, 1, 12, tzinfo=dt.UTC)
    two_days_ago = dt.datetime.now(dt.UTC) - dt.timedelta(days=2)
    assert abs(notes.published - two_days_ago) < dt.timedelta(minutes=5)  # its age: "2 days ago"
    assert dev.published == dt.datetime(2025, 11, 28, 10, tzinfo=dt.UTC)  # the <time>, not "3 days ago"
    assert smol.published is None
    assert tokio.title == "Tokio 2.0 brings a faster async runtime to Rust"


def test_google_news_request_is_the_feature_phone_news_tab() -> None:
    spec = get_engine("google-news").build_request(Q)  # no lr: SearXNG's google news leaves it out
    assert (spec.method, spec.url) == ("GET", "https://www.google.com/wml/search")
    assert spec.params == {
        "q": "rust async runtime", "sca_esv": "1", "hl": "en", "ie": "utf8", "oe": "utf8", "tbm": "nws",
    }  # fmt: skip
    assert spec.headers["User-Agent"].startswith("Nokia") and spec.cookies == {"CONSENT": "YES+"}


def test_google_news_rows_one_per_article_with_publisher_and_age() -> None:
    rows = get_engine("google-news").parse(200, HTML, fixture("google_news_handmade.html"), Q)
    assert [(r.rank, r.url, r.snippet) for r in rows] == [
        (1, "https://news.example/tokio-2", "Rust News"),
        (2, "https://devweekly.example/async-runtimes", "Dev Weekly"),
        (3, "https://oss.example/smol-five", "Open Source Today"),
    ]
    assert rows[0].published == dt.datetime(2025, 12, 1, tzinfo=dt.UTC)
    assert rows[1].published == dt.datetime(2025, 11, 28, tzinfo=dt.UTC) and rows[2].published is None
    with pytest.raises(ChallengeDetected):
        get_engine("google-news").parse(429, HTML, fixture("google_sorry_handmade.html"), Q)


# --- engine selection by category ---------------------------------------------------------------------------

SLOTS = [
    EngineSlot(name) for name in ("ddg", "bing", "wikipedia", "brave", "ddg-news", "bing-news", "brave-news")
]


def names(request: SearchRequest) -> list[str]:
    return [s.name for s in select_slots(SLOTS, request)]


def test_a_search_asks_only_the_engines_of_its_category() -> None:
    assert names(SearchRequest(query="q")) == ["ddg", "bing", "wikipedia", "brave"]
    assert names(SearchRequest(query="q", category="news")) == ["ddg-news", "bing-news", "brave-news"]


def test_a_named_engine_stands_for_its_counterpart_in_the_category() -> None:
    news = SearchRequest(query="q", category="news", engines=["bing", "duckduckgo", "wikipedia"])
    assert names(news) == ["bing-news", "ddg-news"]  # wikipedia has no news search: left out
    assert names(SearchRequest(query="q", engines=["bing-news", "ddg"])) == ["bing", "ddg"]
    with pytest.raises(NoEngineInCategory) as info:
        names(SearchRequest(query="q", category="news", engines=["wikipedia"]))
    assert (
        str(info.value) == "no news search among 'wikipedia'; news engines: bing-news, brave-news, ddg-news"
    )
    assert isinstance(info.value, UnknownEngine)  # every face already answers it as bad input
    with pytest.raises(UnknownEngine, match="nosuch"):
        names(SearchRequest(query="q", category="news", engines=["nosuch"]))


# --- end to end, against loopback fakes ---------------------------------------------------------------------


def route_news(server) -> dict[str, str]:
    """Every news engine's fake, and a web engine's that must stay unasked; their base URLs."""
    server.route("/ddgn/", Reply(200, HTML, fixture("ddg_news_page_handmade.html")))
    server.route("/ddgn/news.js", Reply(200, JSON, fixture("ddg_news_results_handmade.json")))
    server.route("/bingn/news/search", Reply(200, RSS, fixture("bing_news_handmade.rss")))
    server.route("/braven/news", Reply(200, HTML, fixture("brave_news_results_handmade.html")))
    server.route("/googlen/wml/search", Reply(200, HTML, fixture("google_news_handmade.html")))
    server.route("/bing/search", Reply(500, HTML, b"a web engine was asked"))
    return {
        "ddg-news": server.url + "/ddgn",
        "bing-news": server.url + "/bingn",
        "brave-news": server.url + "/braven",
        "google-news": server.url + "/googlen",
        "bing": server.url + "/bing",
    }


@pytest.fixture
async def news_service(server, transport, tmp_path):
    base_urls = route_news(server)
    cooldowns = InMemoryCooldownStore()
    source = LiveSource(
        KeyStore(env={}, keys_file=tmp_path / "keys.json"),
        cooldowns,
        transport,
        engines=list(base_urls),
        base_urls=base_urls,
        timeout_s=5.0,
    )
    service = SearchService(Settings(cache="off", deadline_s=10.0), source, cooldowns=cooldowns)
    yield service
    await service.aclose()


DATED = {
    "https://news.example/tokio-2",  # dated by all four engines, on the same day
    "https://devweekly.example/async-runtimes",
    "https://oss.example/smol-five",
    "https://braveonly.example/runtime-notes",  # by its age on Brave's card
}


def check_news_answer(server, results: list[dict], engines: list[str]) -> None:
    assert set(engines) == set(NEWS_ENGINES)
    assert not server.seen("/bing/search")  # the web engine was never asked
    urls = {r["url"] for r in results}
    assert urls >= DATED and "https://benchmarks.example/rust-runtimes" in urls
    for r in results:  # a date wherever an engine gave one
        dated = r["url"] in DATED
        assert (r["published"] is not None) == dated, r


async def test_news_search_fuses_the_news_endpoints_with_their_dates(news_service, server):
    request = news_service.make_request(query="rust async runtime", category="news")
    resp = await news_service.search(request, explain=False, use_cache=False, interface="python")
    data = resp.to_json_dict()
    assert {e["engine"]: e["status"] for e in data["engines"]} == dict.fromkeys(NEWS_ENGINES, "ok")
    check_news_answer(server, data["results"], [e["engine"] for e in data["engines"]])
    tokio = next(r for r in data["results"] if r["url"] == "https://news.example/tokio-2")
    assert set(tokio["engines"]) == set(NEWS_ENGINES)  # one story, four engines: fused into one result
    ddg_news_calls = [s.path for s in server.requests if s.path.startswith("/ddgn")]
    assert ddg_news_calls == ["/ddgn/", "/ddgn/news.js"]
    assert server.seen("/ddgn/news.js")[0].query["vqd"] == ["4-211234567890123456789012345678901234567"]


async def test_every_face_asks_for_news(news_service, server):
    app = create_app(news_service)
    async with httpx2.AsyncClient(
        transport=httpx2.ASGITransport(app=app), base_url="http://serpfuse"
    ) as http:
        native = (await http.get("/v1/search", params={"q": "rust async runtime", "category": "news"})).json()
        posted = (
            await http.post("/v1/search", json={"query": "rust async runtime", "category": "news"})
        ).json()
        searxng = (
            await http.get(
                "/search", params={"q": "rust async runtime", "format": "json", "categories": "news"}
            )
        ).json()
        tavily = (
            await http.post(
                "/tavily/search",
                json={"query": "rust async runtime", "topic": "news", "auto_parameters": True},
            )
        ).json()
        bad = await http.get("/v1/search", params={"q": "rust", "category": "images"})
        bad_searxng = await http.get("/search", params={"q": "rust", "format": "json", "categories": "it"})
    for body in (native, posted):
        check_news_answer(server, body["results"], [e["engine"] for e in body["engines"]])
    assert {r["url"] for r in searxng["results"]} >= DATED
    assert all(r["publishedDate"] for r in searxng["results"] if r["url"] in DATED)
    assert {r["url"] for r in tavily["results"]} >= DATED and tavily["auto_parameters"]["topic"] == "news"
    assert all(r.get("published_date") for r in tavily["results"] if r["url"] in DATED)
    for response in (bad, bad_searxng):
        assert response.status_code == 400
        message = response.json()["error"]["message"]
        assert message.startswith("category: unknown category") and "\n" not in message
    async with Client(build_server(news_service)) as client:
        result = await client.call_tool("web_search", {"query": "rust async runtime", "category": "news"})
        refused = await client.call_tool("web_search", {"query": "rust", "category": "images"})
    rows = result.structured_content["results"]
    assert {r["url"] for r in rows} >= DATED
    assert refused.is_error


def test_cli_search_category_news_on_a_recording(tmp_path, monkeypatch):
    from test_record import isolated_env

    isolated_env(monkeypatch, tmp_path)
    row = {"engine": "", "rank": 1, "url": "", "title": "Tokio 2.0 brings a faster async runtime to Rust"}

    def answer(engine: str, url: str) -> dict:
        return {"engine": engine, "status": "ok", "rows": [{**row, "engine": engine, "url": url}]}

    recording = {
        "format": "serpfuse-replay/1",
        "queries": [
            {
                "query": "rust async runtime",
                "engines": {
                    "ddg-news": answer("ddg-news", "https://news.example/tokio-2"),
                    "bing": answer("bing", "https://web.example/tokio"),
                },
            }
        ],
    }
    path = tmp_path / "rec.json"
    path.write_text(json.dumps(recording))
    from serpfuse.cli import app

    runner = CliRunner()
    news = runner.invoke(
        app, ["search", "rust async runtime", "--replay", str(path), "--category", "news", "--json"]
    )
    assert news.exit_code == 0, news.output
    body = json.loads(news.stdout)
    assert [r["url"] for r in body["results"]] == ["https://news.example/tokio-2"]
    assert [e["engine"] for e in body["engines"]] == ["ddg-news"]
    web = runner.invoke(app, ["search", "rust async runtime", "--replay", str(path), "--json"])
    assert [r["url"] for r in json.loads(web.stdout)["results"]] == ["https://web.example/tokio"]
    bad = runner.invoke(app, ["search", "rust", "--replay", str(path), "--category", "images"])
    assert bad.exit_code == 2
    assert "unknown category 'images'" in bad.output and len(bad.output.strip().splitlines()) == 1
