"""brave-web: Brave Search's HTML page. Request shape, the real 2022 captures (AQL), the current layout on a
hand-made fixture, the no-results page, the bot check and an unknown page."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from selectolax.lexbor import LexborHTMLParser

from conftest import need
from serpfuse.engines import ENGINES, get_engine
from serpfuse.engines.base import ChallengeDetected, EngineQuery, ParseFailure
from serpfuse.urls import unwrap_redirect
from test_engines_captures import _plain, in_order_hits, load_capture

FIXTURES = Path(__file__).parent / "fixtures" / "engines"
HTML = {"content-type": "text/html; charset=utf-8"}
Q = EngineQuery(text="rust async runtime")
ENGINE = get_engine("brave-web")


def parse(name: str, status: int = 200) -> list:
    return ENGINE.parse(status, HTML, (FIXTURES / name).read_bytes(), Q)


# --- request ------------------------------------------------------------------------------------------------


def test_request_is_the_search_box_navigation() -> None:
    spec = ENGINE.build_request(Q)
    assert spec.method == "GET" and spec.url == "https://search.brave.com/search"
    assert spec.params == {"q": "rust async runtime", "source": "web"}
    assert spec.headers["Sec-Fetch-Mode"] == "navigate" and spec.headers["Sec-Fetch-Dest"] == "document"
    assert spec.headers["Sec-Fetch-Site"] == "same-origin"
    assert spec.headers["Referer"] == "https://search.brave.com/"
    # the region is ours to say, not Brave's guess from the IP; no AI summary in the page
    assert spec.cookies == {"useLocation": "0", "summarizer": "0", "country": "all"}
    assert spec.data is None and spec.json is None


def test_time_range_region_and_dates() -> None:
    spec = ENGINE.build_request(EngineQuery(text="q", time_range="week", region="de-DE"))
    assert spec.params == {"q": "q", "source": "web", "tf": "pw"}
    assert spec.cookies["country"] == "de"
    tfs = {
        t: ENGINE.build_request(EngineQuery(text="q", time_range=t)).params["tf"]
        for t in ("day", "month", "year")
    }
    assert tfs == {"day": "pd", "month": "pm", "year": "py"}
    assert ENGINE.build_request(EngineQuery(text="q", date_from=dt.date(2024, 1, 1))) is None
    assert ENGINE.INFO.time_range_support and not ENGINE.INFO.date_range_support


def test_registered_as_a_keyless_primary_html_engine_of_its_own_group() -> None:
    info = ENGINES["brave-web"].INFO
    assert (info.tier, info.kind, info.needs_key, info.group) == ("primary", "html", False, "brave")


# --- the current layout (hand-made) -------------------------------------------------------------------------


def test_current_layout_rows_titles_snippets_dates_and_ranks() -> None:
    rows = parse("brave_web_results_handmade.html")
    assert [(r.rank, r.url) for r in rows] == [
        (1, "https://tokio.rs/"),
        # the relative link (rank 2 of the web results) is dropped without promoting the rows below it;
        # the FAQ block is not a web result and uses no rank
        (3, "https://docs.rs/async-std/latest/async_std/"),
        (4, "https://smol-rs.github.io/smol/"),
    ]
    assert rows[0].title == "Tokio - An asynchronous Rust runtime"
    assert rows[0].snippet == (
        "Tokio is an asynchronous runtime for the Rust programming language & its ecosystem."
    )
    assert rows[0].published == dt.datetime(2026, 2, 13, tzinfo=dt.UTC)
    assert rows[1].title == "async_std - Rust <Vec<T>>"  # escaped markup stays visible text
    assert rows[1].snippet.startswith("Async version") and rows[1].published is None
    assert rows[2].published is not None and rows[2].snippet == "A small and fast async runtime for Rust."
    assert {r.engine for r in rows} == {"brave-web"}


def test_no_results_page_is_empty() -> None:
    assert parse("brave_web_noresults_handmade.html") == []


def test_bot_check_is_a_challenge() -> None:
    with pytest.raises(ChallengeDetected) as info:
        parse("brave_web_captcha_handmade.html")
    assert info.value.status == "challenge"


def test_a_page_that_is_not_a_results_page_is_a_parse_failure() -> None:
    with pytest.raises(ParseFailure):
        ENGINE.parse(200, HTML, b"<html><body><div class='new-layout'>hello</div></body></html>", Q)


def test_rate_limit_status_is_not_an_empty_page() -> None:
    from serpfuse.engines.base import RateLimited

    with pytest.raises(RateLimited):
        ENGINE.parse(429, HTML, (FIXTURES / "brave_web_noresults_handmade.html").read_bytes(), Q)


# --- the real 2022 captures ---------------------------------------------------------------------------------


def _not_web_results(body: bytes) -> set[str]:
    """URLs Brave showed outside its web results: sitelinks under a result (``.result-cluster``) and the
    snippets of other blocks (video carousels: ``div.snippet`` without ``data-type="web"``). AQL lists them as
    results of their own; serpfuse keeps one row per web result. Found with selectors the parser does not use."""
    tree = LexborHTMLParser(body.decode("utf-8", "replace"))
    links = tree.css(".result-cluster a") + tree.css('div.snippet:not([data-type="web"]) a')
    return {unwrap_redirect(a.attributes.get("href") or "") for a in links}


def test_aql_brave_captures_parse_in_order_with_titles(data_dir: Path) -> None:
    folder = need(data_dir / "aql-serps" / "warcs")
    expected_total = found_total = titled_total = 0
    used = 0
    for path in sorted(folder.glob("brave-*.warc.gz")):
        expected_file = (
            data_dir / "aql-serps" / "expected" / f"{path.name.removesuffix('.warc.gz')}.approved.txt"
        )
        if expected_file.read_text().strip() == "null":
            continue  # AQL approved no parse for this capture
        capture = load_capture(path)
        if capture.status != 200 or not capture.expected:
            continue
        used += 1
        rows = ENGINE.parse(capture.status, capture.headers, capture.body, EngineQuery(text="q"))
        assert [r.rank for r in rows] == list(range(1, len(rows) + 1)), capture.name  # no gaps on real pages
        cluster = _not_web_results(capture.body)
        expected = [e for e in capture.expected if unwrap_redirect(e["url"]) not in cluster]
        urls = [unwrap_redirect(e["url"]) for e in expected]
        by_url = {r.url: r for r in rows}
        found = in_order_hits(urls, [r.url for r in rows])
        titled = 0
        for item, url in zip(expected, urls, strict=True):
            mine, theirs = _plain(by_url[url].title) if url in by_url else "", _plain(item["title"])
            titled += bool(mine) and (mine in theirs or theirs in mine)
        assert found >= 0.95 * len(urls), f"{capture.name}: {found}/{len(urls)} in order"
        expected_total += len(urls)
        found_total += found
        titled_total += titled
    assert used >= 40, f"only {used} usable brave captures"
    assert expected_total >= 900
    # 2026-12-01: every one of the 922 web results of the 49 captures, in order, with its title.
    assert found_total == expected_total, (found_total, expected_total)
    assert titled_total == expected_total, (titled_total, expected_total)


# --- `serpfuse engines`: the new engines are keyless primaries of their own groups --------------------------


def test_engines_command_lists_brave_web_and_startpage_as_independent_keyless_primaries(
    tmp_path, monkeypatch
):
    import json

    from typer.testing import CliRunner

    from test_record import cli_app, isolated_env

    isolated_env(monkeypatch, tmp_path)
    result = CliRunner().invoke(cli_app(), ["engines", "--json"])
    assert result.exit_code == 0, result.output
    rows = {r["engine"]: r for r in json.loads(result.output)}
    for name, group in (("brave-web", "brave"), ("startpage", "google")):
        row = rows[name]
        assert (row["tier"], row["group"], row["key"], row["status"]) == (
            "primary",
            group,
            "not needed",
            "ready",
        )
    keyless_primary_groups = {
        r["group"] for r in rows.values() if r["tier"] == "primary" and r["key"] == "not needed"
    }
    # Microsoft's index (ddg, bing), Brave's, Google's (startpage), plus the rest: at least four independent ones.
    assert {"bing", "brave", "google"} <= keyless_primary_groups and len(keyless_primary_groups) >= 4


# --- through the browser transport: Brave answers browsers with brotli ----------------------------------------


async def test_brotli_page_through_the_browser_transport(server, tmp_path):
    brotli = pytest.importorskip("brotli")
    pytest.importorskip("curl_cffi")
    from fakeserver import Reply
    from serpfuse.models import SearchRequest
    from serpfuse.secrets import KeyStore
    from serpfuse.sources.live import LiveSource
    from serpfuse.sources.transport import Transport
    from serpfuse.state.cooldown import InMemoryCooldownStore

    page = (FIXTURES / "brave_web_results_handmade.html").read_bytes()
    server.route(
        "/brave/search",
        Reply(
            200, {"Content-Type": "text/html; charset=utf-8", "Content-Encoding": "br"}, brotli.compress(page)
        ),
    )
    keys = KeyStore(env={}, keys_file=tmp_path / "keys.json", infos={"brave-web": ENGINE.INFO})
    async with Transport(trust_env=False, impersonate=True) as transport:
        source = LiveSource(
            keys,
            InMemoryCooldownStore(),
            transport,
            engines=["brave-web"],
            base_urls={"brave-web": f"{server.url}/brave"},
            timeout_s=5.0,
        )
        answer = await source.ask(
            "brave-web", "rust async runtime", SearchRequest(query="rust async runtime")
        )
    assert answer.status == "ok", answer.reason
    assert [r.url for r in answer.rows][0] == "https://tokio.rs/"
    seen = server.seen("/brave/search")[0]
    assert "br" in seen.headers.get("accept-encoding", "")  # the impersonated browser asks for brotli
    assert seen.headers["sec-fetch-mode"] == "navigate" and seen.query["source"] == ["web"]
    assert "useLocation=0" in seen.headers["cookie"]


# --- a 429 in a search ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("retry_after", "cooldown_s"), [("120", 120.0), (None, 180.0)])
async def test_a_429_cools_brave_web_down_and_nothing_more_is_sent_in_the_search(
    server, transport, tmp_path, retry_after, cooldown_s
):
    from fakeserver import Reply
    from serpfuse.models import SearchRequest
    from serpfuse.ranking.query import analyze_query
    from serpfuse.secrets import KeyStore
    from serpfuse.sources.fanout import fan_out
    from serpfuse.sources.live import LiveSource
    from serpfuse.state.cooldown import InMemoryCooldownStore

    headers = {"Content-Type": "text/html", **({"Retry-After": retry_after} if retry_after else {})}
    server.route("/search", Reply(429, headers, b"<html><body>Too many requests</body></html>"))
    now = 1000.0
    cooldowns = InMemoryCooldownStore(clock=lambda: now)
    source = LiveSource(
        KeyStore(env={}, keys_file=tmp_path / "keys.json"),
        cooldowns,
        transport,
        engines=["brave-web"],
        base_urls={"brave-web": server.url},
        clock=lambda: now,
    )
    request = SearchRequest(query="tokio OR async-std")  # two variants: two calls of the engine in one search
    query = analyze_query(request.query)
    assert len(query.variants) == 2
    result = await fan_out(source, request, query, deadline_s=10)
    statuses = sorted((a.status, a.retry_after_s) for a in result.answers)
    assert statuses == [("rate-limited", None if retry_after is None else cooldown_s), ("skipped", None)]
    assert len(server.requests) == 1  # the second variant, queued behind the 429, was never sent
    assert cooldowns.snapshot()["brave-web"]["until"] - now == cooldown_s
    again = await fan_out(source, request, query, deadline_s=10)
    assert {a.status for a in again.answers} == {"skipped"} and len(server.requests) == 1
