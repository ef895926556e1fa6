"""Google's feature-phone page (``/wml/search``): the request SearXNG's google engine sends since PR #6546 (a
Nokia User-Agent, an empty ``lr`` per its #6684), the parser on a hand-made page of the documented layout, and
the "sorry" wall as a long challenge, through the live source on loopback."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from fakeserver import Reply
from serpfuse.engines import ENGINES, classifier, get_engine
from serpfuse.engines.base import ChallengeDetected, EngineQuery, ParseFailure, RateLimited
from serpfuse.models import SearchRequest
from serpfuse.secrets import KeyStore
from serpfuse.sources.live import LiveSource
from serpfuse.state.cooldown import InMemoryCooldownStore, fit_to_engine

FIXTURES = Path(__file__).parent / "fixtures" / "engines"
HTML = {"content-type": "text/html; charset=utf-8"}
ENGINE = get_engine("google")
Q = EngineQuery(text="rust async runtime")


def page(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


# --- the request --------------------------------------------------------------------------------------------


def test_request_is_the_feature_phone_page_with_an_empty_lr() -> None:
    spec = ENGINE.build_request(Q)
    assert (spec.method, spec.url) == ("GET", "https://www.google.com/wml/search")
    assert spec.params == {
        "q": "rust async runtime", "sca_esv": "1", "hl": "en", "lr": "", "ie": "utf8", "oe": "utf8",
    }  # fmt: skip
    assert spec.headers["User-Agent"] in ENGINE.USER_AGENTS
    assert spec.headers["User-Agent"].startswith("Nokia") and spec.headers["Accept"] == "*/*"
    assert spec.cookies == {"CONSENT": "YES+"}


def test_language_sets_hl_never_lr() -> None:
    german = ENGINE.build_request(EngineQuery(text="bahn", language="de", region="de"))
    assert german.params["hl"] == "de" and german.params["lr"] == ""
    assert ENGINE.build_request(EngineQuery(text="天气", language="zh", region="tw")).params["hl"] == "zh-TW"
    assert ENGINE.build_request(EngineQuery(text="天气", language="zh-CN")).params["hl"] == "zh-CN"


@pytest.mark.parametrize(("time_range", "tbs"), [("day", "d"), ("week", "w"), ("month", "m"), ("year", "y")])
def test_time_range_is_tbs_qdr(time_range: str, tbs: str) -> None:
    assert ENGINE.build_request(EngineQuery(text="q", time_range=time_range)).params["tbs"] == f"qdr:{tbs}"


def test_explicit_dates_are_not_served() -> None:
    assert ENGINE.build_request(EngineQuery(text="q", date_from=dt.date(2024, 1, 1))) is None


def test_registered_as_a_keyless_primary_in_the_google_group() -> None:
    info = ENGINES["google"].INFO
    assert (info.tier, info.needs_key, info.group) == ("primary", False, "google")
    # A feature phone's User-Agent over a desktop browser's TLS fingerprint is no phone: the plain client.
    assert (info.kind, info.transport) == ("html", "api")
    assert info.challenge_cooldown_s >= 6 * 3600


# --- the page -----------------------------------------------------------------------------------------------


def test_rows_skip_the_ad_and_other_sections_and_keep_ranks() -> None:
    rows = ENGINE.parse(200, HTML, page("google_wml_handmade.html"), Q)
    assert [(r.rank, r.url) for r in rows] == [
        (1, "https://tokio.rs/"),
        # the ad, the "people also ask" block and the related search take no rank; the unusable link takes
        # rank 2 and is dropped
        (3, "https://docs.rs/async-std/latest/async_std/?search=task"),
        (4, "https://smol-rs.github.io/smol/"),
    ]
    tokio, docs, smol = rows
    assert tokio.title == "Tokio - An asynchronous Rust runtime"  # the site name beside it is not the title
    assert (
        tokio.snippet == "Tokio is an asynchronous runtime for the Rust programming language & its ecosystem."
    )
    assert tokio.published is None
    assert docs.snippet == "Async version of the Rust standard library: Vec<T>."  # the date is metadata
    now = dt.datetime.now(dt.UTC)
    assert now - dt.timedelta(days=4) < docs.published < now - dt.timedelta(days=2)
    assert smol.snippet == "A small and fast async runtime. Works with Rust."
    assert {r.engine for r in rows} == {"google"}


def test_renamed_classes_fall_back_to_the_redirect_links() -> None:
    renamed = page("google_wml_handmade.html").replace(b"zMzFAb", b"Xy12Ab").replace(b"fuLhoc", b"Qq9Zz")
    rows = ENGINE.parse(200, HTML, renamed, Q)
    # one row per target, the footer's link back into Google left out
    assert [r.url for r in rows] == [
        "https://tokio.rs/",
        "https://docs.rs/async-std/latest/async_std/?search=task",
        "https://smol-rs.github.io/smol/",
    ]
    assert rows[0].title.startswith("Tokio - An asynchronous Rust runtime")


def test_sorry_page_is_a_challenge_with_googles_long_cooldown() -> None:
    for status in (200, 429):
        with pytest.raises(ChallengeDetected) as info:
            ENGINE.parse(status, HTML, page("google_sorry_handmade.html"), Q)
        assert not isinstance(info.value, RateLimited)
        assert fit_to_engine(ENGINE.INFO, info.value).cooldown_s == ENGINE.INFO.challenge_cooldown_s


def test_every_shape_of_the_sorry_wall_is_a_challenge() -> None:
    classify = classifier(ENGINE)
    assert classify is ENGINE.classify
    redirect = classify(302, {"Location": "https://www.google.com/sorry/index?continue=x&q=y"}, b"")
    assert isinstance(redirect, ChallengeDetected)
    assert isinstance(
        classify(302, {"location": "https://sorry.google.com/sorry/Captcha"}, b""), ChallengeDetected
    )
    assert isinstance(classify(429, {"Retry-After": "5"}, b""), ChallengeDetected)
    stub = b'<html><meta http-equiv="refresh" content="0;url=/sorry/index?continue=x"></html>'
    assert isinstance(classify(200, HTML, stub), ChallengeDetected)
    # anything else is the central mapper's
    assert classify(200, HTML, page("google_wml_handmade.html")[:16384]) is None
    assert (
        type(classify(302, {"Location": "https://www.google.com/wml/search?q=x"}, b"")).__name__
        == "EngineError"
    )
    assert classify(500, {}, b"").status == "error"


def test_results_page_without_results_is_empty_and_an_unknown_page_fails() -> None:
    empty = b'<html><body><form action="/wml/search"><input name="q" value="zzzq"></form><div id="main"></div></body></html>'
    assert ENGINE.parse(200, HTML, empty, Q) == []
    with pytest.raises(ParseFailure, match="not a results page"):
        ENGINE.parse(200, HTML, b"<html><body><p>maintenance</p></body></html>", Q)


# --- through the live source, on loopback --------------------------------------------------------------------


def _source(server, transport, tmp_path) -> LiveSource:
    return LiveSource(
        KeyStore(env={}, keys_file=tmp_path / "keys.json"),
        InMemoryCooldownStore(),
        transport,
        engines=["google"],
        base_urls={"google": server.url},
        timeout_s=5.0,
    )


async def test_live_call_sends_the_nokia_agent_and_reads_the_page(server, transport, tmp_path):
    server.route("/wml/search", Reply(200, HTML, page("google_wml_handmade.html")))
    answer = await _source(server, transport, tmp_path).ask(
        "google", "rust async runtime", SearchRequest(query="q")
    )
    assert answer.status == "ok" and [r.rank for r in answer.rows] == [1, 3, 4]
    (seen,) = server.requests
    assert seen.query["q"] == ["rust async runtime"] and seen.headers["user-agent"].startswith("Nokia")
    assert "sec-ch-ua" not in seen.headers and "CONSENT=YES+" in seen.headers["cookie"]


async def test_live_redirect_to_the_sorry_page_suspends_google_for_hours(server, transport, tmp_path):
    server.route("/wml/search", Reply(302, {"Location": "/sorry/index?continue=x"}, b""))
    server.route("/sorry/index", Reply(429, HTML, page("google_sorry_handmade.html")))
    source = _source(server, transport, tmp_path)
    answer = await source.ask("google", "q", SearchRequest(query="q"))
    assert answer.status == "challenge"
    state = await source.cooldowns.get("google")
    assert state is not None and state.remaining_s(state.since) >= 6 * 3600 - 1
    again = await source.ask("google", "q", SearchRequest(query="q"))
    assert again.status == "skipped" and len(server.requests) == 2  # not asked again


# --- real pages: AQL's archived Google SERPs -----------------------------------------------------------------


def test_real_no_javascript_pages_are_read_through_their_redirect_links(data_dir: Path) -> None:
    """AQL's captures of Google's no-JavaScript web results page link every result through ``/url?q=``, as the
    feature-phone page does, in another layout: the parser's link reading must find 95 % of the expected URLs
    in order, each with its title. What it leaves out is Google's own (more searches) and the Books links
    that page puts in without the redirector."""
    from urllib.parse import parse_qs, urlsplit

    from conftest import need
    from serpfuse.urls import unwrap_redirect
    from test_engines_captures import _plain, in_order_hits, load_capture

    root = need(data_dir / "aql-serps")
    expected_total = in_order = titled = pages = 0
    for path in sorted((root / "warcs").glob("google-*.warc.gz")):
        if not (root / "expected" / path.name.replace(".warc.gz", ".approved.txt")).exists():
            continue
        capture = load_capture(path)
        query = parse_qs(urlsplit(capture.archived_url).query)
        vertical = "tbm" in query or any("bks" in v for v in query.get("tbs", []))  # images, books, news
        if vertical or b'href="/url?q=' not in capture.body or not capture.expected:
            continue
        pages += 1
        rows = ENGINE.parse(capture.status, capture.headers, capture.body, EngineQuery(text="q"))
        assert [r.rank for r in rows] == sorted({r.rank for r in rows}), capture.name
        expected = [unwrap_redirect(item["url"]) for item in capture.expected]
        expected_total += len(expected)
        in_order += in_order_hits(expected, [r.url for r in rows])
        by_url = {r.url: r for r in rows}
        for item, url in zip(capture.expected, expected, strict=True):
            row = by_url.get(url)
            mine, theirs = _plain(row.title if row else ""), _plain(item.get("title"))
            titled += bool(mine) and (mine in theirs or theirs in mine)
    assert pages >= 30, pages
    assert in_order >= 0.95 * expected_total, (in_order, expected_total)
    assert titled >= 0.95 * expected_total, (titled, expected_total)
