"""The CJK tier: baidu, sogou, so360 (360 Search) and naver, keyless, as peers ask them (requests pinned in
test_engines_peers: dhole-mcp 17.3, 2026-10, and SearXNG 9fea412's baidu/sogou/360search/naver modules, 2026).

- Baidu's parser on the real AQL captures (webis-de/archive-query-log ae66d2d, 2026-05-07: www.baidu.com/s pages
  of 2018-2019), every expected URL in order at its rank with its title; the 2026 layouts dhole describes, and the
  other three engines, on hand-made pages written from the peers' selectors (``…_handmade``);
- redirect links resolved to the page the engine names (Baidu's ``mu``, Sogou's ``data-url``, 360's
  ``data-mdurl``), the redirector kept where the named target is unusable;
- block pages as challenges;
- what consecutive searches send, on 127.0.0.1 through each engine's base-URL setting;
- the region policy: a Chinese query leads with at least two CJK-native engines outside Microsoft's index; an
  English one does not ask the CJK tier at all.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from conftest import need
from fakeserver import Reply, Seen, fake_engine, ok
from serpfuse.engines import default_keyless_primaries, get_engine
from serpfuse.engines.base import ChallengeDetected, EngineQuery
from serpfuse.models import SearchRequest
from serpfuse.ranking.query import analyze_query
from serpfuse.secrets import KeyStore
from serpfuse.sources.fanout import NOT_A_CJK_QUERY, fan_out, lead_engines
from serpfuse.sources.live import LiveSource
from serpfuse.state.cooldown import InMemoryCooldownStore
from test_engines_captures import _plain, _records, _split_http, in_order_hits

FIXTURES = Path(__file__).parent / "fixtures" / "engines"
HTML = {"content-type": "text/html; charset=utf-8"}
Q = EngineQuery(text="rust 异步运行时")


def page(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def parse(engine: str, name: str):
    return get_engine(engine).parse(200, HTML, page(name), Q)


# --- Baidu on real pages ------------------------------------------------------------------------------------------


def baidu_captures(data_dir: Path):
    """(name, status, headers, body, expected) of every AQL Baidu web-search capture AQL approved results for."""
    folder = need(data_dir / "aql-serps" / "warcs")
    out, left = [], {}
    for warc in sorted(folder.glob("baidu-*.warc.gz")):
        name = warc.name.removesuffix(".warc.gz")
        approved = folder.parent / "expected" / f"{name}.approved.txt"
        expected = json.loads(approved.read_text(encoding="utf-8")) if approved.is_file() else None
        if not isinstance(expected, dict) or not expected.get("results"):
            left[name] = "no approved results"
            continue
        if urlsplit(expected["url"]).path != "/s":
            left[name] = f"not a web results page ({urlsplit(expected['url']).netloc})"
            continue
        if int(name.rsplit("-", 1)[1]) < 1514764800:  # before 2018: a layout Baidu retired a decade ago
            left[name] = "a layout before 2018"
            continue
        for fields, block in _records(gzip.decompress(warc.read_bytes())):
            if fields.get("warc-type") == "response":
                status, headers, body = _split_http(block)
                headers.pop("content-encoding", None)
                out.append((name, status, headers, body, expected["results"]))
                break
    return out, left


def test_baidu_parses_every_real_capture_in_order_at_its_rank_with_its_title(data_dir: Path) -> None:
    captures, left = baidu_captures(data_dir)
    assert len(captures) >= 10, left
    assert left.get("baidu-eru-1525597474", "").startswith("not a web results page (tieba")
    total = found = titled = 0
    for name, status, headers, body, expected in captures:
        rows = get_engine("baidu").parse(status, headers, body, EngineQuery(text="q"))
        by_url = {r.url: r for r in rows}
        urls = [e["url"] for e in expected]
        total += len(urls)
        found += in_order_hits(urls, [r.url for r in rows])
        for item in expected:
            row = by_url.get(item["url"])
            if row is None:
                continue
            assert row.rank == item["rank"], f"{name}: {item['url']} at {row.rank}, expected {item['rank']}"
            mine, theirs = _plain(row.title), _plain(item["title"])
            titled += bool(mine) and (mine in theirs or theirs in mine)
    # Measured when written: 120 of 120 URLs in order, at their ranks.
    assert found >= 0.95 * total and titled >= 0.95 * total, (found, titled, total)


# --- the 2026 layouts and the other engines, hand-made ---------------------------------------------------------------


def test_baidu_takes_mu_then_the_data_log_mu_and_keeps_the_redirector_when_mu_is_unusable() -> None:
    rows = parse("baidu", "baidu_2026_layouts_handmade.html")
    assert [(r.rank, r.url) for r in rows] == [
        (1, "https://tokio.rs/"),  # "A": mu
        (2, "https://rust-lang.github.io/async-book/"),  # "B": data-log's mu
        (3, "http://www.baidu.com/link?url=CCCC3333"),  # two URLs joined in mu: the redirector
        (4, "https://docs.rs/smol"),  # the ad and the title-less box take no rank
    ]
    assert rows[0].title == "Tokio - Rust 的异步运行时" and rows[1].snippet.startswith("async/await")


def test_baidus_security_check_is_a_challenge() -> None:
    with pytest.raises(ChallengeDetected):
        parse("baidu", "baidu_security_check_handmade.html")


def test_sogou_takes_data_url_and_skips_related_searches_and_click_counters() -> None:
    rows = parse("sogou", "sogou_results_handmade.html")
    assert [(r.rank, r.url) for r in rows] == [
        (1, "https://tokio.rs/"),
        (2, "https://www.sogou.com/link?url=ZZZZ"),  # a WeChat counter is no page: the redirector
        (3, "https://rust-lang.github.io/async-book/"),  # the older div.rb card
    ]
    assert rows[0].published is not None and rows[0].published.date().isoformat() == "2024-11-22"
    assert rows[2].published is not None and rows[2].published.date().isoformat() == "2023-05-10"


def test_so360_takes_data_mdurl_unless_it_joins_several() -> None:
    rows = parse("so360", "so360_results_handmade.html")
    assert [(r.rank, r.url) for r in rows] == [
        (1, "https://tokio.rs/"),
        (2, "https://www.so.com/link?m=ewDEF456"),
        (3, "https://docs.rs/smol"),
    ]
    assert rows[2].snippet == "A small and fast async runtime for Rust."


def test_naver_takes_the_first_link_that_is_not_its_keep_service() -> None:
    rows = parse("naver", "naver_results_handmade.html")
    assert [(r.rank, r.url) for r in rows] == [
        (1, "https://tokio.rs/"),
        (2, "https://rust-lang.github.io/async-book/"),
    ]
    assert rows[0].title == "Tokio - 러스트 비동기 런타임"


@pytest.mark.parametrize("engine", ["baidu", "sogou", "so360", "naver"])
def test_a_page_that_is_neither_results_nor_a_block_is_a_layout_change(engine) -> None:
    from serpfuse.engines.base import ParseFailure

    with pytest.raises(ParseFailure):
        get_engine(engine).parse(200, HTML, b"<html><body><div id='other'>new</div></body></html>", Q)


# --- on the wire ---------------------------------------------------------------------------------------------------


def source(server, transport, tmp_path, engines, base_urls=None) -> LiveSource:
    return LiveSource(
        KeyStore(env={}, keys_file=tmp_path / "keys.json"),
        InMemoryCooldownStore(),
        transport,
        engines=engines,
        base_urls=base_urls or {e: server.url for e in engines if isinstance(e, str)},
        timeout_s=5.0,
    )


def value(seen: Seen, name: str) -> str | None:
    return next((v for k, v in seen.lines if k.lower() == name), None)


QUERIES = ("rust 异步运行时", "tokio 异步运行时")  # the fixtures answer both: no decoy


@pytest.mark.parametrize(
    ("engine", "path", "fixture", "field", "language"),
    [
        ("baidu", "/s", "baidu_2026_layouts_handmade.html", "wd", "zh-CN"),
        ("sogou", "/web", "sogou_results_handmade.html", "query", "zh-CN"),
        ("naver", "/search.naver", "naver_results_handmade.html", "query", "ko-KR"),
    ],
)
async def test_consecutive_searches_send_one_get_each_with_the_same_headers(
    server, transport, tmp_path, engine, path, fixture, field, language
) -> None:
    server.route(path, Reply(200, {"Content-Type": "text/html; charset=utf-8"}, page(fixture)))
    src = source(server, transport, tmp_path, [engine])
    for query in QUERIES:
        answer = await src.ask(engine, query, SearchRequest(query=query))
        assert answer.status == "ok", answer.reason
    sent = server.requests
    assert [(s.method, s.path) for s in sent] == [("GET", path)] * len(QUERIES)
    assert [s.query[field] for s in sent] == [[q] for q in QUERIES]
    assert all(value(s, "accept-language").startswith(language) for s in sent)
    assert len({tuple(k.lower() for k, _ in s.lines) for s in sent}) == 1


async def test_so360_opens_its_home_page_once_then_searches_with_its_cookie(
    server, transport, tmp_path
) -> None:
    server.route(
        "/",
        Reply(200, {"Content-Type": "text/html", "Set-Cookie": "QiHooGUID=G1; path=/"}, b"<html>360</html>"),
    )
    server.route(
        "/s", Reply(200, {"Content-Type": "text/html; charset=utf-8"}, page("so360_results_handmade.html"))
    )
    src = source(server, transport, tmp_path, ["so360"])
    for query in QUERIES:
        assert (await src.ask("so360", query, SearchRequest(query=query))).status == "ok"
    assert [(s.method, s.path) for s in server.requests] == [("GET", "/"), ("GET", "/s"), ("GET", "/s")]
    for seen, query in zip(server.requests[1:], QUERIES, strict=True):
        assert seen.query == {"q": [query]}
        assert "QiHooGUID=G1" in (value(seen, "cookie") or "")
        assert (
            value(
                seen,
                "referer",
            )
            == f"{server.url}/"
            or value(seen, "referer") == "https://www.so.com/"
        )


async def test_a_redirect_to_baidus_captcha_is_a_challenge(server, transport, tmp_path) -> None:
    server.route("/s", Reply(302, {"Location": f"{server.url}/static/captcha/tuxing.html?ak=x"}, b""))
    server.route_prefix(
        "/static",
        Reply(200, {"Content-Type": "text/html; charset=utf-8"}, page("baidu_security_check_handmade.html")),
    )
    src = source(server, transport, tmp_path, ["baidu"])
    answer = await src.ask("baidu", QUERIES[0], SearchRequest(query=QUERIES[0]))
    assert answer.status == "challenge"


# --- the region policy -------------------------------------------------------------------------------------------


def test_a_chinese_query_leads_with_two_cjk_native_engines_outside_microsofts_index() -> None:
    from serpfuse.data import json as data_json
    from serpfuse.sources.base import EngineSlot

    groups = data_json("engine_weights.json")["groups"]
    primaries = default_keyless_primaries()
    slots = [EngineSlot(name=n, region=get_engine(n).INFO.region) for n in primaries]
    leads = lead_engines(slots, analyze_query("异步运行时 教程"))
    native = {n for n in leads if get_engine(n).INFO.region == "cjk" and groups.get(n, n) != "bing"}
    assert {"baidu", "sogou", "so360"} <= native and len(native) >= 2
    assert "naver" in lead_engines(slots, analyze_query("비동기 런타임"))


async def test_an_english_query_asks_no_cjk_engine_and_a_chinese_one_asks_them(
    server, transport, tmp_path
) -> None:
    server.route(
        "/s",
        Reply(200, {"Content-Type": "text/html; charset=utf-8"}, page("baidu_2026_layouts_handmade.html")),
    )
    server.route(
        "/web", Reply(200, {"Content-Type": "text/html; charset=utf-8"}, page("sogou_results_handmade.html"))
    )
    server.route("/other", ok(["https://tokio.rs/", "https://docs.rs/smol"]))
    other = fake_engine("other", path="/other", region="global")
    engines = ["baidu", "sogou", other]
    src = source(
        server, transport, tmp_path, engines, {"baidu": server.url, "sogou": server.url, "other": server.url}
    )

    english = SearchRequest(query="rust async runtime")
    result = await fan_out(src, english, analyze_query(english.query), deadline_s=5.0, gate=None)
    by_engine = {a.engine: a for a in result.answers}
    assert by_engine["baidu"].status == by_engine["sogou"].status == "skipped"
    assert by_engine["baidu"].reason == NOT_A_CJK_QUERY and by_engine["other"].status == "ok"
    assert server.seen("/s") == [] and server.seen("/web") == []

    chinese = SearchRequest(query="rust 异步运行时")
    result = await fan_out(src, chinese, analyze_query(chinese.query), deadline_s=5.0, gate=None)
    assert {a.engine: a.status for a in result.answers} == {"baidu": "ok", "sogou": "ok", "other": "ok"}
    assert {"baidu", "sogou"} <= set(result.lead_engines)
    # A zh language on an English query, or the engine named, asks them too.
    named = SearchRequest(query="rust async runtime", engines=["baidu"])
    result = await fan_out(src, named, analyze_query(named.query), deadline_s=5.0, gate=None)
    assert [a.status for a in result.answers] == ["ok"]
    zh = SearchRequest(query="rust async runtime", language="zh")
    result = await fan_out(src, zh, analyze_query(zh.query), deadline_s=5.0, gate=None)
    assert {a.engine: a.status for a in result.answers}["sogou"] == "ok"
