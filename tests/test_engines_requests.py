"""What each engine puts on the wire (exact request bodies), key hygiene, the status mapper, the registry."""

from __future__ import annotations

import datetime as dt
import email.utils
import inspect
import json
from urllib.parse import parse_qs

import pytest

from conftest import REPO
from serpfuse.engines import ENGINES, UnknownEngine, classifier, get_engine, has_preflight, is_multi_step
from serpfuse.engines.base import (
    AccessDenied,
    ChallengeDetected,
    EngineError,
    EngineQuery,
    ParseFailure,
    QueryNotServed,
    RateLimited,
    RequestSpec,
    classify_http,
)
from serpfuse.engines.dates import parse_published
from serpfuse.engines.locale import split_locale

KEY = "sk-TEST-SECRET-0123456789"
TODAY = dt.date.today()


# A home page that sets a cookie jar, for engines whose search is built from their first page (Bing's).
HOME_PAGE = (200, {"set-cookie": "MUID=0123ABCD; path=/"}, b"<html></html>")


def build(engine: str, **kwargs) -> RequestSpec | None:
    kwargs.setdefault("text", "rust async runtime")
    module = get_engine(engine)
    if has_preflight(module) and engine in ("bing", "bing-cn"):
        return module.build_request(EngineQuery(**kwargs), HOME_PAGE)
    return module.build_request(EngineQuery(**kwargs))


# --- DuckDuckGo ---------------------------------------------------------------------------------------------


def test_ddg_form_fields() -> None:
    spec = build("ddg")
    assert spec.method == "POST" and spec.url == "https://html.duckduckgo.com/html/"
    assert spec.data == {"q": "rust async runtime", "b": "", "kl": "wt-wt"}
    # posted from the site's own page (its Referer); no Origin or Content-Type of the engine's own, which could
    # only go after the browser's headers (searxng#6596); no region chosen, so no kl cookie
    assert spec.headers == {"Referer": "https://html.duckduckgo.com/"}
    assert spec.cookies is None and spec.params is None and spec.json is None


def test_ddg_region_and_time_range_go_in_form_and_cookies() -> None:
    spec = build("ddg", region="us-en", time_range="week")
    assert spec.data == {"q": "rust async runtime", "b": "", "kl": "us-en", "df": "w"}
    assert spec.cookies == {"kl": "us-en", "df": "w"}
    assert build("ddg", time_range="day").cookies == {"df": "d"}  # kl=wt-wt is no setting anybody saves
    assert build("ddg", region="wt-wt").cookies is None
    assert build("ddg", language="zh", region="CN").data["kl"] == "cn-zh"
    assert {build("ddg", time_range=t).data["df"] for t in ("day", "week", "month", "year")} == {
        "d",
        "w",
        "m",
        "y",
    }


@pytest.mark.parametrize(
    ("region", "language", "kl"),
    [
        ("gb", None, "uk-en"),  # DuckDuckGo's United Kingdom is uk-en, not gb-en
        ("uk", None, "uk-en"),
        ("en-GB", None, "uk-en"),
        ("uk-en", None, "uk-en"),  # DuckDuckGo's own code is taken as it is ("uk" is also Ukrainian)
        ("jp", None, "jp-jp"),
        (None, "ja-JP", "jp-jp"),
        ("kr", "ko", "kr-kr"),
        ("tw", None, "tw-tzh"),
        ("zh-TW", None, "tw-tzh"),
        ("hk", "zh", "hk-tzh"),
        ("ua", None, "ua-uk"),
        ("si", None, "sl-sl"),
        ("sa", "ar", "xa-ar"),
        ("us", "es", "ue-es"),
        ("ch", "fr", "ch-fr"),
        ("ch", None, "ch-de"),  # a country's first listed code is its default
        ("be", "fr", "be-fr"),
        ("de", "en", "de-de"),  # a language DuckDuckGo has no code for there: the country's default
        ("eg", "ar", "wt-wt"),  # no DuckDuckGo region: all regions, never an invented "eg-ar"
        ("wt-wt", None, "wt-wt"),
        (None, "de", "wt-wt"),  # a language alone names no region (it goes in Accept-Language)
    ],
)
def test_ddg_region_table(region, language, kl) -> None:
    spec = build("ddg", region=region, language=language)
    assert spec.data["kl"] == kl
    assert (spec.cookies or {}).get("kl") == (None if kl == "wt-wt" else kl)


def test_ddg_every_table_code_is_accepted_as_given() -> None:
    table = json.loads((REPO / "src/serpfuse/data/ddg_regions.json").read_text())["regions"]
    assert {"uk-en", "jp-jp", "kr-kr", "tw-tzh", "hk-tzh", "xa-ar", "ue-es"} <= set(table)
    for code in table:
        assert build("ddg", region=code).data["kl"] == code


def test_ddg_sends_the_language_as_accept_language() -> None:
    assert build("ddg", region="de", language="de").headers["Accept-Language"] == "de-DE,de;q=0.9"
    assert "Accept-Language" not in build("ddg").headers


@pytest.mark.parametrize(
    ("region", "language", "accept"),
    [
        ("de", None, "de-DE,de;q=0.9"),  # a region alone: the language its code serves
        ("uk-en", None, "en-GB,en;q=0.9"),  # DuckDuckGo's own code: English in the United Kingdom
        ("tw", None, "zh-TW,zh;q=0.9"),
        ("ch", "fr", "fr-CH,fr;q=0.9"),
        (None, "ja", "ja,en;q=0.5"),
    ],
)
def test_ddg_accept_language_follows_the_region(region, language, accept) -> None:
    assert build("ddg", region=region, language=language).headers["Accept-Language"] == accept


@pytest.mark.parametrize(
    ("region", "language", "accept"),
    [
        ("de", None, "de-DE,de;q=0.9"),
        ("en-GB", None, "en-GB,en;q=0.9"),
        ("jp", None, "ja-JP,ja;q=0.9"),
        (None, "ko", "ko,en;q=0.5"),
    ],
)
def test_bing_accept_language_follows_the_region(region, language, accept) -> None:
    for engine in ("bing", "bing-cn"):
        assert build(engine, region=region, language=language).headers["Accept-Language"] == accept
    assert build("bing").headers is None  # no region: the browser's own header stands


@pytest.mark.parametrize(
    ("query", "sent"),
    [
        ("!w rust", "'!w' rust"),
        ("rust async !gh", "rust async '!gh'"),
        ("what does !important do", "what does '!important' do"),  # quoting a non-bang costs nothing
        ("wow! rust", "wow! rust"),  # only a leading ! makes a bang
        ("a ! b", "a ! b"),
        ("!维基 上海", "'!维基' 上海"),
    ],
)
def test_ddg_quotes_bangs(query, sent) -> None:
    assert build("ddg", text=query).data["q"] == sent


def test_ddg_refuses_500_characters_and_says_why() -> None:
    assert build("ddg", text="a" * 499).data["q"] == "a" * 499
    with pytest.raises(QueryNotServed) as info:
        build("ddg", text="a" * 500)
    assert str(info.value) == "query is 500 characters; DuckDuckGo takes at most 499"


def test_ddg_cannot_apply_explicit_dates() -> None:
    assert build("ddg", date_from=dt.date(2024, 1, 1)) is None


# --- Bing ---------------------------------------------------------------------------------------------------


def test_bing_sends_setlang_and_cc_not_mkt() -> None:
    spec = build("bing", limit=50, region="de", language="de")
    assert spec.method == "GET" and spec.url == "https://www4.bing.com/search"
    assert spec.params == {"q": "rust async runtime", "form": "QBRE", "setlang": "de", "cc": "de"}
    assert build("bing", region="en-GB").params["cc"] == "gb"


def test_bing_always_names_a_language() -> None:
    # Without setlang Bing answers from the query's first word: the query's script names it when nobody did.
    assert build("bing").params == {"q": "rust async runtime", "form": "QBRE", "setlang": "en"}
    assert build("bing", text="東京 天気").params["setlang"] == "zh-hans"
    assert build("bing", text="東京の天気").params["setlang"] == "ja"
    assert build("bing", text="서울 날씨").params["setlang"] == "ko"
    assert build("bing", language="zh", region="tw").params["setlang"] == "zh-hant"


@pytest.mark.parametrize("engine", ["bing", "bing-cn"])
def test_bing_asks_its_home_page_first_and_searches_with_its_cookies_without_count(engine) -> None:
    # free-search-mcp 0.16.0 (PyPI, 2026-10) engines/bing.py, measured 2026-09-21: count=10 or no cookie jar
    # gives a first-word decoy; the home page's jar, form=QBRE and no count give real answers.
    module = get_engine(engine)
    first = module.build_preflight(EngineQuery(text="rust async runtime"))
    assert first.method == "GET" and first.url.endswith(".bing.com/") and first.params is None
    assert module.INFO.preflight_reuse_s == 1800.0
    home = (
        200,
        {
            "set-cookie": "MUID=AB; domain=.bing.com; expires=Sat, 02 Jan 2027 00:00:00 GMT; path=/, _EDGE_S=F=1; path=/"
        },
        b"<html></html>",
    )
    spec = module.build_request(EngineQuery(text="rust async runtime", limit=20), home)
    assert spec.cookies == {"MUID": "AB", "_EDGE_S": "F=1"}
    assert spec.params["form"] == "QBRE" and "count" not in spec.params
    # A home page that set nothing still lets the search go (the decoy check judges its answer).
    assert module.build_request(EngineQuery(text="q"), (200, {}, b"<html></html>")).cookies is None


def test_bing_home_page_captcha_is_a_challenge() -> None:
    captcha = (200, {}, b'<html><div id="b_captcha"><script src="/turing/captcha/challenge"></script></div>')
    with pytest.raises(ChallengeDetected):
        get_engine("bing").build_request(EngineQuery(text="q"), captcha)


@pytest.mark.parametrize("country", ["us", "cn", "ru"])
def test_bing_leaves_out_the_cc_that_returns_garbage(country) -> None:
    params = build("bing", region=country).params
    assert "cc" not in params and params["setlang"]


@pytest.mark.parametrize("engine", ["bing", "bing-cn"])
def test_bing_declares_no_time_range_and_sends_no_filter(engine) -> None:
    info = get_engine(engine).INFO
    assert not info.time_range_support and not info.date_range_support
    assert "filters" not in build(engine, time_range="week").params


def test_bing_cn_defaults_to_chinese() -> None:
    spec = build("bing-cn", text="异步 运行时")
    assert spec.url == "https://cn.bing.com/search"
    assert spec.params == {"q": "异步 运行时", "form": "QBRE", "setlang": "zh-hans"}
    assert spec.headers["Accept-Language"].startswith("zh")
    assert (
        get_engine("bing-cn")
        .build_preflight(EngineQuery(text="异步"))
        .headers["Accept-Language"]
        .startswith("zh")
    )
    assert build("bing-cn", language="en", region="gb").params == {
        "q": "rust async runtime",
        "form": "QBRE",
        "setlang": "en",
        "cc": "gb",
    }


# --- Yahoo, Mojeek, Wikipedia -------------------------------------------------------------------------------


def test_yahoo_params_and_unsupported_ranges() -> None:
    spec = build("yahoo", time_range="month")
    assert spec.url == "https://search.yahoo.com/search"
    # iscqry: without it Yahoo answers a single result
    assert spec.params == {"p": "rust async runtime", "ei": "UTF-8", "iscqry": "", "btf": "m"}
    assert build("yahoo", time_range="year") is None
    assert build("yahoo", date_from=dt.date(2024, 1, 1)) is None


def test_yahoo_language_goes_in_the_sb_cookie_not_the_url() -> None:
    spec = build("yahoo", language="de")
    assert "vl" not in spec.params
    prefs = parse_qs(spec.cookies["sB"])
    assert prefs["vl"] == ["lang_de"] and prefs["v"] == ["1"]
    assert parse_qs(build("yahoo", language="zh").cookies["sB"])["vl"] == ["lang_zh_chs"]
    assert parse_qs(build("yahoo").cookies["sB"])["vl"] == ["lang_any"]


@pytest.mark.parametrize(
    ("region", "host"),
    [
        ("de", "de.search.yahoo.com"),
        ("en-GB", "uk.search.yahoo.com"),
        ("uk", "uk.search.yahoo.com"),
        ("es", "espanol.search.yahoo.com"),
        ("my", "malaysia.search.yahoo.com"),
        ("us", "search.yahoo.com"),
        ("eg", "search.yahoo.com"),  # no regional host: the main one
        (None, "search.yahoo.com"),
    ],
)
def test_yahoo_regional_hosts(region, host) -> None:
    assert build("yahoo", region=region).url == f"https://{host}/search"


def test_mojeek_since_and_never_s0() -> None:
    spec = build("mojeek")
    assert spec.params == {"q": "rust async runtime"}  # s=0 on page 1 trips Mojeek's rate limiter
    week = build("mojeek", time_range="week")
    assert week.params == {
        "q": "rust async runtime",
        "since": (TODAY - dt.timedelta(days=7)).strftime("%Y%m%d"),
    }
    assert build("mojeek", date_from=dt.date(2024, 2, 29)).params["since"] == "20240229"
    assert build("mojeek", date_to=dt.date(2024, 2, 29)) is None
    assert build("mojeek", region="gb", language="en").cookies == {"lb": "en", "arc": "gb"}


def test_wikipedia_user_agent_names_the_operator_as_wikimedia_asks() -> None:
    from serpfuse.version import __version__

    default = build("wikipedia").headers["User-Agent"]
    assert default == f"serpfuse/{__version__} (https://pypi.org/project/serpfuse/)"
    mine = build("wikipedia", contact="ops@example.org").headers["User-Agent"]
    assert mine == f"serpfuse/{__version__} (ops@example.org; https://pypi.org/project/serpfuse/)"
    assert get_engine("wikipedia").INFO.user_agent_contact
    assert not [n for n, m in ENGINES.items() if m.INFO.user_agent_contact and n != "wikipedia"]


@pytest.mark.parametrize(
    ("text", "language", "host"),
    [
        ("rust async runtime", None, "en.wikipedia.org"),
        ("Rust 异步运行时", None, "zh.wikipedia.org"),
        ("非同期 ランタイム", None, "ja.wikipedia.org"),
        ("비동기 런타임", None, "ko.wikipedia.org"),
        ("rust async runtime", "de", "de.wikipedia.org"),
        ("rust async runtime", "zh-CN", "zh.wikipedia.org"),
        ("rust async runtime", "evil.example/x?", "en.wikipedia.org"),  # never a host from raw input
    ],
)
def test_wikipedia_language_picks_the_host(text: str, language: str | None, host: str) -> None:
    spec = build("wikipedia", text=text, language=language)
    assert spec.url == f"https://{host}/w/api.php"
    assert spec.params == {
        "action": "query",
        "list": "search",
        "srsearch": text,
        "srprop": "snippet|timestamp",
        "srlimit": 10,
        "format": "json",
        "formatversion": 2,
        "utf8": 1,
    }


# --- AnySearch ----------------------------------------------------------------------------------------------


def test_anysearch_anonymous_and_keyed() -> None:
    anon = build("anysearch", limit=50)
    assert anon.method == "POST" and anon.url == "https://api.anysearch.com/v1/search"
    assert anon.json == {"query": "rust async runtime", "max_results": 10, "format": "json", "zone": "intl"}
    assert "Authorization" not in anon.headers
    keyed = build("anysearch", limit=3, api_key=KEY)
    assert keyed.json["max_results"] == 3
    assert keyed.headers["Authorization"] == f"Bearer {KEY}"
    assert build("anysearch", limit=0).json["max_results"] == 1
    assert build("anysearch", time_range="day") is None


@pytest.mark.parametrize(
    ("text", "region", "language", "zone", "sent_language"),
    [
        ("rust async runtime", None, None, "intl", None),  # Latin script names no language: none invented
        ("rust async runtime", "de", "de", "intl", "de"),
        ("东数西算", None, None, "cn", "zh"),  # a Chinese query: AnySearch's Chinese sources
        ("rust", "cn", None, "cn", None),
        ("台北 天氣", "tw", "zh", "intl", "zh"),  # Chinese outside the mainland: the international zone
        ("東京の天気", None, None, "intl", "ja"),
        ("서울 날씨", None, None, "intl", "ko"),
        ("weather", None, "zh-CN", "cn", "zh"),
    ],
)
def test_anysearch_sends_zone_and_language(text, region, language, zone, sent_language) -> None:
    body = build("anysearch", text=text, region=region, language=language).json
    assert body["zone"] == zone and body.get("language") == sent_language


def test_anysearch_is_a_router_with_no_index_of_its_own() -> None:
    assert get_engine("anysearch").INFO.own_index is False
    assert [n for n, m in ENGINES.items() if not m.INFO.own_index] == ["anysearch"]


# --- Brave --------------------------------------------------------------------------------------------------


def test_brave_request() -> None:
    assert build("brave") is None  # no key: nothing to send
    spec = build("brave", api_key=KEY, limit=50, region="de", language="de")
    assert spec.method == "GET" and spec.url == "https://api.search.brave.com/res/v1/web/search"
    assert spec.params == {
        "q": "rust async runtime",
        "count": 20,
        "text_decorations": "false",
        "country": "DE",
        "search_lang": "de",
    }
    assert spec.headers == {"Accept": "application/json", "X-Subscription-Token": KEY}


@pytest.mark.parametrize(
    ("region", "language", "country", "search_lang"),
    [
        (None, "zh", None, "zh-hans"),  # Brave's enum has no plain "zh"
        ("cn", "zh", "CN", "zh-hans"),
        ("tw", "zh", "TW", "zh-hant"),
        (None, "zh-Hant", None, "zh-hant"),  # a script, not a country
        (None, "zh-TW", "TW", "zh-hant"),
        ("jp", "ja", "JP", "jp"),  # Brave spells Japanese "jp"
        (None, "pt-BR", "BR", "pt-br"),
        ("pt", "pt", "PT", "pt-pt"),
        ("no", "no", "NO", "nb"),
        ("uk", "en", "GB", "en-gb"),  # the United Kingdom is GB in Brave's enum
        ("en-GB", None, "GB", "en-gb"),
        ("gr", "el", None, None),  # outside Brave's enums: left out, since Brave answers 422 to it
        ("eg", "ar", None, "ar"),
        (None, "xx", None, None),
        ("all", None, None, None),
    ],
)
def test_brave_sends_only_its_own_language_and_country_codes(region, language, country, search_lang) -> None:
    params = build("brave", api_key=KEY, region=region, language=language).params
    assert (params.get("country"), params.get("search_lang")) == (country, search_lang)


def test_brave_enums_are_brave_spellings() -> None:
    table = json.loads((REPO / "src/serpfuse/data/brave_locales.json").read_text())
    assert {"zh-hans", "zh-hant", "jp", "pt-br", "pt-pt", "nb", "en-gb"} <= set(table["search_lang"])
    assert not {"zh", "ja", "pt", "no"} & set(table["search_lang"])
    assert "GB" in table["country"] and "UK" not in table["country"]


@pytest.mark.parametrize(
    ("time_range", "freshness"), [("day", "pd"), ("week", "pw"), ("month", "pm"), ("year", "py")]
)
def test_brave_freshness_for_time_ranges(time_range: str, freshness: str) -> None:
    assert build("brave", api_key=KEY, time_range=time_range).params["freshness"] == freshness


def test_brave_freshness_for_dates() -> None:
    spec = build("brave", api_key=KEY, date_from=dt.date(2024, 1, 1), date_to=dt.date(2024, 2, 1))
    assert spec.params["freshness"] == "2024-01-01to2024-02-01"
    open_end = build("brave", api_key=KEY, date_from=dt.date(2024, 1, 1))
    assert open_end.params["freshness"] == f"2024-01-01to{TODAY.isoformat()}"
    assert "freshness" not in build("brave", api_key=KEY).params


def test_brave_declares_its_free_plan_rate_limit() -> None:
    assert get_engine("brave").INFO.min_interval_s == 1.0


# --- Exa, Tavily, Firecrawl ---------------------------------------------------------------------------------


def test_exa_body() -> None:
    assert build("exa") is None
    spec = build(
        "exa",
        api_key=KEY,
        limit=7,
        date_from=dt.date(2024, 1, 1),
        date_to=dt.date(2024, 3, 31),
        include_domains=("tokio.rs",),
        exclude_domains=("pinterest.com",),
    )
    assert spec.method == "POST" and spec.url == "https://api.exa.ai/search"
    assert spec.json == {
        "query": "rust async runtime",
        "type": "auto",
        "numResults": 7,
        "contents": {"highlights": {"maxCharacters": 300}},
        "startPublishedDate": "2024-01-01T00:00:00.000Z",
        "endPublishedDate": "2024-03-31T23:59:59.999Z",
        "includeDomains": ["tokio.rs"],
        "excludeDomains": ["pinterest.com"],
    }
    assert spec.headers["x-api-key"] == KEY
    assert "userLocation" not in spec.json  # no region asked
    # a region's country as ISO 3166 (exa-py's user_location), uk spelt GB
    assert build("exa", api_key=KEY, region="uk").json["userLocation"] == "GB"
    assert build("exa", api_key=KEY, language="de", region="de-DE").json["userLocation"] == "DE"
    week = build("exa", api_key=KEY, time_range="week").json
    assert week["startPublishedDate"] == f"{(TODAY - dt.timedelta(days=7)).isoformat()}T00:00:00.000Z"


def test_tavily_body() -> None:
    assert build("tavily") is None
    spec = build("tavily", api_key=KEY, limit=5, include_domains=("tokio.rs",))
    assert spec.method == "POST" and spec.url == "https://api.tavily.com/search"
    assert spec.json == {
        "query": "rust async runtime",
        "search_depth": "basic",
        "max_results": 5,
        "include_answer": False,
        "include_raw_content": False,
        "include_domains": ["tokio.rs"],
    }
    assert spec.headers["Authorization"] == f"Bearer {KEY}"
    assert "api_key" not in spec.json  # the key travels in the header only


def test_tavily_never_sends_time_range_and_dates_together() -> None:
    both = build(
        "tavily", api_key=KEY, time_range="week", date_from=dt.date(2024, 1, 1), date_to=dt.date(2024, 2, 1)
    )
    assert both.json["time_range"] == "week"
    assert "start_date" not in both.json and "end_date" not in both.json
    dates = build("tavily", api_key=KEY, date_from=dt.date(2024, 1, 1), date_to=dt.date(2024, 2, 1))
    assert dates.json["start_date"] == "2024-01-01" and dates.json["end_date"] == "2024-02-01"
    assert "time_range" not in dates.json


@pytest.mark.parametrize(
    ("time_range", "tbs"), [("day", "qdr:d"), ("week", "qdr:w"), ("month", "qdr:m"), ("year", "qdr:y")]
)
def test_firecrawl_tbs(time_range: str, tbs: str) -> None:
    spec = build("firecrawl", api_key=KEY, time_range=time_range, limit=4)
    assert spec.url == "https://api.firecrawl.dev/v1/search"
    assert spec.json == {"query": "rust async runtime", "limit": 4, "tbs": tbs}
    assert spec.headers["Authorization"] == f"Bearer {KEY}"


# --- SearXNG ------------------------------------------------------------------------------------------------


def test_searxng_needs_a_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SERPFUSE_SEARXNG_URL", raising=False)
    assert build("searxng") is None
    monkeypatch.setenv("SERPFUSE_SEARXNG_URL", "http://127.0.0.1:8888/")
    spec = build("searxng", time_range="month", language="en", region="us")
    assert spec.url == "http://127.0.0.1:8888/search"
    assert spec.params == {
        "q": "rust async runtime",
        "format": "json",
        "time_range": "month",
        "language": "en-US",
    }
    assert build("searxng", base_url="http://10.0.0.2:8080").url == "http://10.0.0.2:8080/search"


# --- keys never leak ----------------------------------------------------------------------------------------

KEYED = ["brave", "exa", "tavily", "firecrawl", "anysearch"]


@pytest.mark.parametrize("engine", KEYED)
def test_key_only_in_headers_and_masked_in_repr(engine: str) -> None:
    spec = build(engine, api_key=KEY)
    assert any(KEY in v for v in spec.headers.values()), "the key must be sent"
    assert KEY not in spec.url
    assert (
        KEY not in str(spec.params or "")
        and KEY not in str(spec.json or "")
        and KEY not in str(spec.data or "")
    )
    for text in (repr(spec), str(spec), f"{spec}", f"{spec!r}"):
        assert KEY not in text
        assert "***" in text


def test_request_spec_repr_masks_secret_body_fields_too() -> None:
    spec = RequestSpec(
        "POST", "https://api.example/", json={"api_key": KEY, "query": "x"}, params={"key": KEY}
    )
    assert KEY not in repr(spec) and "'query': 'x'" in repr(spec)


def test_engine_query_repr_hides_the_key() -> None:
    q = EngineQuery(text="x", api_key=KEY)
    assert KEY not in repr(q) and KEY not in str(q)


# --- the central status mapper ------------------------------------------------------------------------------


def test_classify_http_basic_statuses() -> None:
    assert classify_http(200, {}, b"") is None
    assert classify_http(204, {}, b"") is None
    err = classify_http(500, {}, b"Internal error: SECRET-BODY")
    assert type(err) is EngineError and err.status == "error" and "SECRET" not in str(err)
    assert classify_http(302, {"Location": "https://x"}, b"").status == "error"
    for status in (401, 402, 403):
        denied = classify_http(status, {}, b"password=SECRET-BODY")
        assert isinstance(denied, AccessDenied) and denied.cooldown_s == 180
        assert "SECRET" not in str(denied) and "SECRET" not in repr(denied)


def test_classify_http_retry_after() -> None:
    assert classify_http(429, {"Retry-After": "42"}, b"").retry_after_s == 42
    assert classify_http(429, {"retry-after": "42"}, b"").cooldown_s == 42  # case-insensitive on a plain dict
    default = classify_http(429, {}, b"")
    assert isinstance(default, RateLimited) and default.retry_after_s is None and default.cooldown_s == 180
    when = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=120)
    dated = classify_http(429, {"Retry-After": email.utils.format_datetime(when, usegmt=True)}, b"")
    assert 100 <= dated.retry_after_s <= 121
    assert classify_http(429, {"Retry-After": "soon"}, b"").cooldown_s == 180


def test_classify_http_challenges() -> None:
    cf = {"Server": "cloudflare"}
    challenge = classify_http(503, cf, b"<script src='/cdn-cgi/challenge-platform/h/b/orchestrate'></script>")
    assert isinstance(challenge, ChallengeDetected) and challenge.status == "challenge"
    assert isinstance(classify_http(403, cf, b"__cf_chl_captcha_tk__=abc"), ChallengeDetected)
    assert isinstance(classify_http(403, {"cf-mitigated": "challenge"}, b""), ChallengeDetected)
    firewall = classify_http(403, cf, b'<span class="cf-error-code">1020</span>')
    assert isinstance(firewall, AccessDenied) and firewall.cooldown_s == 86400
    recaptcha = classify_http(503, {}, b'<script src="https://www.google.com/recaptcha/api.js"></script>')
    assert isinstance(recaptcha, ChallengeDetected)
    # The markers only count from Cloudflare itself: a 403 from elsewhere stays "access denied".
    assert type(classify_http(403, {"Server": "nginx"}, b"/cdn-cgi/challenge-platform/")) is AccessDenied


def test_error_types_carry_statuses() -> None:
    assert ParseFailure().status == "error" and ParseFailure().message
    assert RateLimited(retry_after_s=3).status == "rate-limited"
    assert ChallengeDetected().cooldown_s is None  # the engine's INFO.challenge_cooldown_s decides


# --- registry -----------------------------------------------------------------------------------------------

EXPECTED_ENGINES = {
    "ddg": ("primary", "global"),
    "bing": ("primary", "global"),
    "bing-cn": ("primary", "cjk"),
    "baidu": ("primary", "cjk"),
    "sogou": ("primary", "cjk"),
    "so360": ("primary", "cjk"),
    "naver": ("primary", "cjk"),
    "yahoo": ("fallback", "global"),
    "google": ("primary", "global"),
    "google-cse": ("primary", "global"),
    "mojeek": ("primary", "global"),
    "brave-web": ("primary", "global"),
    "startpage": ("primary", "global"),
    "yep": ("primary", "global"),
    "mwmbl": ("primary", "global"),
    "wikipedia": ("primary", "both"),
    "anysearch": ("primary", "both"),
    "exa-free": ("primary", "both"),
    "keenable": ("primary", "both"),
    "parallel": ("primary", "both"),
    "you-free": ("fallback", "both"),
    "tavily-free": ("fallback", "both"),
    "brave": ("primary", "both"),
    "exa": ("primary", "both"),
    "tavily": ("primary", "both"),
    "firecrawl": ("fallback", "global"),
    "searxng": ("primary", "both"),
    "ddg-news": ("primary", "global"),
    "bing-news": ("primary", "global"),
    "brave-news": ("primary", "global"),
    "google-news": ("primary", "global"),
}


def test_registry_lists_every_engine_with_its_tier_and_region() -> None:
    assert {name: (m.INFO.tier, m.INFO.region) for name, m in ENGINES.items()} == EXPECTED_ENGINES


@pytest.mark.parametrize("name", sorted(EXPECTED_ENGINES))
def test_engine_modules_follow_the_contract(name: str) -> None:
    module = get_engine(name)
    info = module.INFO
    assert info.name == name
    assert callable(module.parse)
    if is_multi_step(module):
        assert inspect.iscoroutinefunction(module.run)
    else:
        assert callable(module.build_request)
    assert callable(classifier(module))
    # Only SearXNG (its 403), AnySearch (body-blind) and Google (its "sorry" wall) refine the central mapper.
    assert (classifier(module) is classify_http) == (
        name not in {"searxng", "anysearch", "google", "google-news"}
    )
    if info.needs_key or info.accepts_key:
        assert info.key_envs and info.key_envs[0] == f"SERPFUSE_{name.upper().replace('-', '_')}_API_KEY"
    assert info.rows_per_request >= 1 and info.timeout_s > 0


# Engines whose transport is not their kind's: Google's feature-phone page goes as the plain client (a phone's
# User-Agent over a desktop browser's TLS fingerprint is no phone); Yep's and DuckDuckGo News' JSON and Bing
# News' feed are their sites' own endpoints, behind the sites' bot checks.
TRANSPORT_EXCEPTIONS = {
    "google": "api",
    "google-news": "api",
    "google-cse": "browser",  # its loader script and JSONP are a page's scripts, loaded by a browser
    "yep": "browser",
    "ddg-news": "browser",
    "bing-news": "browser",
}


def test_each_engine_declares_its_transport() -> None:
    # Scraped pages go as a browser (bot walls read the TLS fingerprint); JSON and MCP APIs as the library.
    for name, module in ENGINES.items():
        info = module.INFO
        expected = TRANSPORT_EXCEPTIONS.get(name, "browser" if info.kind == "html" else "api")
        assert info.transport == expected, name
    assert {n for n, m in ENGINES.items() if m.INFO.transport == "browser"} >= {
        "ddg",
        "bing",
        "bing-cn",
        "yahoo",
    }


def test_correlated_groups() -> None:
    assert {n for n, m in ENGINES.items() if m.INFO.group == "bing"} == {
        "ddg", "bing", "bing-cn", "yahoo", "ddg-news", "bing-news",
    }  # fmt: skip
    assert {n for n, m in ENGINES.items() if m.INFO.group == "exa"} == {"exa", "exa-free"}


def test_unknown_engine_lists_valid_names() -> None:
    with pytest.raises(UnknownEngine) as info:
        get_engine("googel")
    assert isinstance(info.value, ValueError)
    message = str(info.value)
    assert "googel" in message and "ddg" in message and "searxng" in message and "\n" not in message


# --- shared helpers -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("region", "language", "expected"),
    [
        ("us-en", None, ("us", "en")),
        ("en-US", None, ("us", "en")),
        (None, "zh-CN", ("cn", "zh")),
        ("cn", "zh", ("cn", "zh")),
        ("wt-wt", None, (None, None)),
        (None, None, (None, None)),
    ],
)
def test_split_locale(region: str | None, language: str | None, expected: tuple) -> None:
    assert split_locale(region, language) == expected


def test_parse_published() -> None:
    now = dt.datetime(2024, 5, 10, 12, tzinfo=dt.UTC)
    assert parse_published("3 days ago", now) == now - dt.timedelta(days=3)
    assert parse_published("an hour ago", now) == now - dt.timedelta(hours=1)
    assert parse_published("yesterday", now) == now - dt.timedelta(days=1)
    assert parse_published("2023-09-09T15:55:05", now) == dt.datetime(2023, 9, 9, 15, 55, 5, tzinfo=dt.UTC)
    assert parse_published("2024-03-12T00:00:00.000Z", now) == dt.datetime(2024, 3, 12, tzinfo=dt.UTC)
    assert parse_published("September 9, 2023", now) == dt.datetime(2023, 9, 9, tzinfo=dt.UTC)
    for junk in ("", "N/A", "soon", None, 12):
        assert parse_published(junk, now) is None


async def test_engines_without_time_range_support_are_skipped_not_queried_unfiltered(
    server, tmp_path
) -> None:
    # Bing's filter needs JavaScript now: its rows would be unfiltered, so a time-range search never asks it,
    # and nothing of it reaches the time-range filter looking filtered.
    from serpfuse.models import SearchRequest
    from serpfuse.secrets import KeyStore
    from serpfuse.sources.live import LiveSource
    from serpfuse.sources.transport import Transport
    from serpfuse.state.cooldown import InMemoryCooldownStore

    async with Transport(trust_env=False) as t:
        source = LiveSource(
            KeyStore(env={}, keys_file=tmp_path / "keys.json"),
            InMemoryCooldownStore(),
            t,
            engines=["bing", "bing-cn", "ddg"],
            base_urls={name: server.url + "/" + name for name in ("bing", "bing-cn", "ddg")},
        )
        request = SearchRequest(query="rust async runtime", time_range="week")
        slots = {slot.name: slot for slot in source.slots(request)}
        answers = {n: await source.ask(n, "rust async runtime", request) for n in ("bing", "bing-cn")}
    for name in ("bing", "bing-cn"):
        assert not slots[name].available and slots[name].unavailable_reason == "cannot filter by time range"
        assert answers[name].status == "skipped" and answers[name].rows == []
    assert slots["ddg"].available
    assert server.requests == []  # not one request went out for them
