"""startpage: the home page's ``sc`` token, then the POST form. Request shapes, the hand-made result payload,
the CAPTCHA on either page, and the two requests end to end through the live source on a loopback server."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from urllib.parse import parse_qs

import pytest

from fakeserver import Reply
from serpfuse.engines import ENGINES, get_engine, has_preflight
from serpfuse.engines.base import ChallengeDetected, EngineQuery, ParseFailure
from serpfuse.models import SearchRequest
from serpfuse.secrets import KeyStore
from serpfuse.sources.live import LiveSource
from serpfuse.state.cooldown import InMemoryCooldownStore

FIXTURES = Path(__file__).parent / "fixtures" / "engines"
HTML = {"content-type": "text/html; charset=utf-8"}
Q = EngineQuery(text="rust async runtime")
ENGINE = get_engine("startpage")


def page(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def home(name: str = "startpage_home_handmade.html"):
    return (200, HTML, page(name))


# --- requests -----------------------------------------------------------------------------------------------


def test_first_request_is_the_home_page() -> None:
    assert has_preflight(ENGINE)
    spec = ENGINE.build_preflight(Q)
    assert spec.method == "GET" and spec.url == "https://www.startpage.com/"
    assert spec.headers["Sec-Fetch-Site"] == "none" and spec.headers["Sec-Fetch-Mode"] == "navigate"
    assert spec.params is None and spec.data is None


def prefs(spec) -> dict[str, str]:
    return dict(pair.split("EEE") for pair in spec.cookies["preferences"].split("N1N"))


def test_search_is_the_form_post_as_searxng_sends_it() -> None:
    # Pinned against SearXNG 9fea41204 (searx/engines/startpage.py, request()): no abp (Startpage answers it
    # with instant blocks), qsr=all, the family filter by name in the form (qadf) and the cookie, the settings
    # cookie's fields; the form's own hidden inputs (t, lui, cat) as the home page holds them.
    spec = ENGINE.build_request(Q, home())
    assert spec.method == "POST" and spec.url == "https://www.startpage.com/sp/search"
    assert spec.data == {
        "query": "rust async runtime",
        "t": "device",
        "lui": "english",
        "sc": "Q7Mt5TRqowKB00",
        "cat": "web",
        "abd": "1",
        "abe": "1",
        "with_date": "",
        "qsr": "all",
        "qadf": "moderate",
    }
    assert list(spec.data)[:5] == [
        "query",
        "t",
        "lui",
        "sc",
        "cat",
    ]  # the form's own order, as a browser posts
    assert spec.headers["Origin"] == "https://www.startpage.com"
    assert spec.headers["Referer"] == "https://www.startpage.com/"
    assert spec.headers["Sec-Fetch-Site"] == "same-origin"
    assert prefs(spec) == {
        "date_time": "world",
        "disable_family_filter": "moderate",
        "disable_open_in_new_window": "0",
        "enable_post_method": "1",
        "enable_proxy_safety_suggest": "1",
        "enable_stay_control": "1",
        "instant_answers": "1",
        "lang_homepage": "s/device/en/",
        "num_of_results": "10",
        "suggestions": "1",
        "wt_unit": "celsius",
    }


def test_a_form_without_hidden_inputs_still_sends_what_every_search_sends() -> None:
    spec = ENGINE.build_request(Q, home("startpage_home_json_token_handmade.html"))
    assert {k: spec.data[k] for k in ("cat", "t", "abd", "abe", "qsr", "qadf")} == {
        "cat": "web",
        "t": "device",
        "abd": "1",
        "abe": "1",
        "qsr": "all",
        "qadf": "moderate",
    }
    assert "abp" not in spec.data


@pytest.mark.parametrize(
    ("region", "language", "name", "results_region"),
    [
        (None, "de", "deutsch", None),
        ("de-DE", None, "deutsch", "de_DE"),
        ("gb", "en", "english", "en-GB_GB"),
        ("br", "pt", "brazilian", "pt-BR_BR"),
        ("tw", "zh", "fantizhengwen", "zh-TW_TW"),
        (None, "zh-CN", "jiantizhongwen", "zh-CN_CN"),
        ("no", "no", "norsk", "no_NO"),
        ("jp", None, None, "ja_JP"),  # a country alone picks its region, not a language
        (None, "xx-unknown", None, None),  # what Startpage does not list is left to it
    ],
)
def test_language_and_region_by_startpages_own_names(region, language, name, results_region) -> None:
    spec = ENGINE.build_request(EngineQuery(text="q", region=region, language=language), home())
    cookie = prefs(spec)
    if name:
        assert spec.data["language"] == spec.data["lui"] == name
        assert cookie["language"] == cookie["language_ui"] == name
    else:
        assert "language" not in spec.data and spec.data["lui"] == "english"  # the home page's own
        assert "language" not in cookie
    assert cookie.get("search_results_region") == results_region


def test_token_from_the_bootstrap_json_when_the_form_has_none() -> None:
    spec = ENGINE.build_request(Q, home("startpage_home_json_token_handmade.html"))
    assert spec.data["sc"] == "Zx9Lq0pWmE4k21"


def test_time_range_and_unsupported_dates() -> None:
    days = {
        t: ENGINE.build_request(EngineQuery(text="q", time_range=t), home()).data["with_date"]
        for t in ("day", "week", "month", "year")
    }
    assert days == {"day": "d", "week": "w", "month": "m", "year": "y"}
    assert ENGINE.build_preflight(EngineQuery(text="q", date_to=dt.date(2024, 1, 1))) is None


def test_captcha_instead_of_the_home_page_is_a_challenge() -> None:
    with pytest.raises(ChallengeDetected):
        ENGINE.build_request(Q, home("startpage_captcha_handmade.html"))


def test_home_page_without_a_token_is_a_layout_failure_not_a_challenge() -> None:
    with pytest.raises(ParseFailure) as info:
        ENGINE.build_request(Q, home("startpage_home_changed_handmade.html"))
    assert not isinstance(info.value, ChallengeDetected) and "sc token" in info.value.message


def test_registered_as_a_keyless_primary_in_the_google_group() -> None:
    info = ENGINES["startpage"].INFO
    assert (info.tier, info.kind, info.needs_key, info.group) == ("primary", "html", False, "google")


# --- parsing ------------------------------------------------------------------------------------------------


def test_web_rows_from_the_payload_skip_ads_news_and_internal_links() -> None:
    rows = ENGINE.parse(200, HTML, page("startpage_results_handmade.html"), Q)
    assert [(r.rank, r.url) for r in rows] == [
        (1, "https://tokio.rs/"),
        # the Google ad is not a result (no rank); the relative link is a result without a usable URL (rank 2)
        (3, "https://docs.rs/async-std/"),
        (4, "https://smol-rs.github.io/smol/"),
    ]
    assert all("ads.example" not in r.url and "news.example" not in r.url for r in rows)
    tokio, docs, smol = rows
    assert tokio.title == "Tokio - An asynchronous Rust runtime"  # <b> stripped
    assert tokio.snippet.startswith("Tokio is an asynchronous runtime") and "..." not in tokio.snippet
    assert tokio.published is not None and tokio.published < dt.datetime.now(dt.UTC) - dt.timedelta(days=4)
    assert docs.title == "async-std })} - Rust"  # a "})" inside a string does not cut the payload
    assert docs.snippet == "Async version of the Rust standard library: Vec<T>."
    assert docs.published == dt.datetime(2014, 9, 2, tzinfo=dt.UTC)
    assert smol.published is None and {r.engine for r in rows} == {"startpage"}


def test_payload_without_web_rows_is_empty() -> None:
    assert ENGINE.parse(200, HTML, page("startpage_noresults_handmade.html"), Q) == []


def test_captcha_page_is_a_challenge() -> None:
    with pytest.raises(ChallengeDetected):
        ENGINE.parse(200, HTML, page("startpage_captcha_handmade.html"), Q)


def test_page_without_payload_is_a_parse_failure() -> None:
    with pytest.raises(ParseFailure) as info:
        ENGINE.parse(200, HTML, page("startpage_home_handmade.html"), Q)
    assert not isinstance(info.value, ChallengeDetected)
    broken = b'<script>React.createElement(UIStartpage.AppSerpWeb, {"render": </script>'
    with pytest.raises(ParseFailure):
        ENGINE.parse(200, HTML, broken, Q)


# --- both requests through the live source, on loopback -----------------------------------------------------


def _source(server, transport, tmp_path, **kw) -> LiveSource:
    keys = KeyStore(env={}, keys_file=tmp_path / "keys.json", infos={"startpage": ENGINE.INFO})
    return LiveSource(
        keys,
        InMemoryCooldownStore(),
        transport,
        engines=["startpage"],
        base_urls={"startpage": server.url + "/sp-site"},
        timeout_s=5.0,
        **kw,
    )


async def test_live_call_fetches_the_token_then_posts_the_form(server, transport, tmp_path):
    server.route("/sp-site/", Reply(200, HTML, page("startpage_home_handmade.html")))
    server.route("/sp-site/sp/search", Reply(200, HTML, page("startpage_results_handmade.html")))
    recorded = []
    source = _source(server, transport, tmp_path, on_response=lambda e, v, r: recorded.append((e, r.body)))
    answer = await source.ask("startpage", "rust async runtime", SearchRequest(query="rust async runtime"))
    assert answer.status == "ok" and [r.rank for r in answer.rows] == [1, 3, 4]
    first, second = server.requests
    assert (first.method, first.path) == ("GET", "/sp-site/")
    assert (second.method, second.path) == ("POST", "/sp-site/sp/search")
    form = parse_qs(second.body.decode())
    assert form["sc"] == ["Q7Mt5TRqowKB00"] and form["query"] == ["rust async runtime"]
    assert "preferences=" in second.headers["cookie"]
    # only the page parse reads is recorded, so a replay can parse it again
    assert recorded == [("startpage", page("startpage_results_handmade.html"))]


async def test_the_home_pages_token_serves_later_searches_until_one_fails(server, transport, tmp_path):
    results = Reply(200, HTML, page("startpage_results_handmade.html"))
    server.route("/sp-site/", Reply(200, HTML, page("startpage_home_handmade.html")))
    server.route("/sp-site/sp/search", results, results, Reply(500, HTML, b"down"), results)
    now = [1000.0]
    cooldowns = InMemoryCooldownStore(clock=lambda: now[0])
    keys = KeyStore(env={}, keys_file=tmp_path / "keys.json", infos={"startpage": ENGINE.INFO})
    source = LiveSource(
        keys,
        cooldowns,
        transport,
        engines=["startpage"],
        base_urls={"startpage": server.url + "/sp-site"},
        clock=lambda: now[0],
    )
    request = SearchRequest(query="q")
    statuses = []
    for _ in range(4):
        statuses.append((await source.ask("startpage", "q", request)).status)
        now[0] += 600  # past any cooldown, within the token's hour
    assert statuses == ["ok", "ok", "error", "ok"]
    # one home page for the first two searches; the failed search drops it, so the next one fetches it anew
    assert [s.path.removeprefix("/sp-site") for s in server.requests] == [
        "/",
        "/sp/search",
        "/sp/search",
        "/sp/search",
        "/",
        "/sp/search",
    ]
    assert {parse_qs(s.body.decode())["sc"][0] for s in server.seen("/sp-site/sp/search")} == {
        "Q7Mt5TRqowKB00"
    }


async def test_live_captcha_on_the_home_page_stops_before_the_search(server, transport, tmp_path):
    server.route("/sp-site/", Reply(200, HTML, page("startpage_captcha_handmade.html")))
    recorded = []
    source = _source(server, transport, tmp_path, on_response=lambda e, v, r: recorded.append(e))
    answer = await source.ask("startpage", "q", SearchRequest(query="q"))
    assert answer.status == "challenge"
    assert [s.path for s in server.requests] == ["/sp-site/"]
    assert recorded == ["startpage"]  # the block page is what this call saw
    again = await source.ask("startpage", "q", SearchRequest(query="q"))
    assert again.status == "skipped" and "cool" in (again.reason or "")  # suspended, not asked again


async def test_live_http_error_on_the_home_page_is_the_engines_status(server, transport, tmp_path):
    server.route("/sp-site/", Reply(429, {"Retry-After": "30"}, b""))
    source = _source(server, transport, tmp_path)
    answer = await source.ask("startpage", "q", SearchRequest(query="q"))
    assert answer.status == "rate-limited" and answer.retry_after_s == 30
    assert len(server.requests) == 1


async def test_a_recording_keeps_the_search_page_and_replays_it_through_todays_parser(server, tmp_path):
    from serpfuse.cli.record import record_queries
    from serpfuse.sources.replay import load_recording

    server.route("/sp-site/", Reply(200, HTML, page("startpage_home_handmade.html")))
    server.route("/sp-site/sp/search", Reply(200, HTML, page("startpage_results_handmade.html")))
    from serpfuse.sources.transport import Transport

    async with Transport(trust_env=False) as transport:
        source = _source(server, transport, tmp_path)
        await record_queries(source, ["rust async runtime"], tmp_path / "rec", core_variant=False)
    entry = json.loads((tmp_path / "rec" / "001-rust-async-runtime.json").read_text())
    recorded = entry["engines"]["startpage"]
    assert recorded["status"] == "ok" and "raw_files" not in recorded  # one page: the one parse reads
    assert (tmp_path / "rec" / recorded["raw_file"]).read_bytes() == page("startpage_results_handmade.html")
    # Wipe the recorded rows: what comes back is today's parser reading the saved page again.
    for answers in (entry["engines"], *entry["variants"].values()):
        answers["startpage"].update(rows=[], status="empty")
    (tmp_path / "rec" / "001-rust-async-runtime.json").write_text(json.dumps(entry))
    replayed = load_recording(tmp_path / "rec")["rust async runtime"].variants["rust async runtime"][
        "startpage"
    ]
    assert replayed.status == "ok" and [r.rank for r in replayed.rows] == [1, 3, 4]
