"""The independent indexes asked without a key: Yep (Ahrefs) and Mwmbl, their requests pinned to what SearXNG's
engines send and their parsers on hand-made answers of the documented shapes; and the count of independent
general-web index groups among the default keyless primaries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakeserver import Reply
from serpfuse.config import engine_table
from serpfuse.engines import (
    ENGINES,
    NOT_OWN_WEB_INDEX,
    default_keyless_primaries,
    get_engine,
    web_index_groups,
)
from serpfuse.engines.base import AccessDenied, EngineQuery, ParseFailure, RateLimited
from serpfuse.models import SearchRequest
from serpfuse.secrets import KeyStore
from serpfuse.sources.live import LiveSource
from serpfuse.state.cooldown import InMemoryCooldownStore

FIXTURES = Path(__file__).parent / "fixtures" / "engines"
JSON = {"content-type": "application/json"}
Q = EngineQuery(text="rust async runtime")


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


# --- Yep ----------------------------------------------------------------------------------------------------


def test_yep_request_is_the_sites_own_fetch() -> None:
    # SearXNG's yep engine after its PR #6223: this path and these names, and the Sec-Fetch-* of a cross-site fetch
    spec = get_engine("yep").build_request(Q)
    assert (spec.method, spec.url) == ("GET", "https://api.yep.com/search")
    assert spec.params == {"query": "rust async runtime", "safeSearch": "off", "limit": 10}
    assert spec.headers == {
        "Accept": "*/*",
        "Origin": "https://yep.com",
        "Referer": "https://yep.com/",
        "Sec-Fetch-Dest": "empty",
        "Sec-Fetch-Mode": "cors",
        "Sec-Fetch-Site": "same-site",
    }


def test_yep_language_and_limit() -> None:
    spec = get_engine("yep").build_request(EngineQuery(text="bahn", language="de-DE", limit=50))
    assert spec.params["hl"] == "de" and spec.params["limit"] == 20


def test_yep_rows_keep_their_ranks_and_drop_markup() -> None:
    rows = get_engine("yep").parse(200, JSON, fixture("yep_results_handmade.json"), Q)
    assert [(r.rank, r.url) for r in rows] == [
        (1, "https://tokio.rs/"),
        # ranks 2 and 3 had no usable URL: dropped, and they promote nobody
        (4, "https://docs.rs/async-std/latest/async_std/"),
        (5, "https://smol-rs.github.io/smol/"),
    ]
    assert rows[0].snippet == (
        "Tokio is an asynchronous runtime for the Rust programming language & its ecosystem."
    )
    assert rows[1].snippet == "Async version of the Rust standard library: Vec<T>."
    assert {r.engine for r in rows} == {"yep"}


@pytest.mark.parametrize("body", [b"{}", b"[]", b'["Ok"]', b'["Ok", []]', b'["Ok", {"results": 3}]'])
def test_yep_other_shapes_are_parse_failures(body: bytes) -> None:
    with pytest.raises(ParseFailure):
        get_engine("yep").parse(200, JSON, body, Q)


def test_yep_empty_result_list_is_empty_and_access_denied_is_an_error() -> None:
    assert get_engine("yep").parse(200, JSON, b'["Ok", {"results": []}]', Q) == []
    with pytest.raises(AccessDenied):
        get_engine("yep").parse(403, JSON, b'{"error": "access denied"}', Q)


# --- Mwmbl --------------------------------------------------------------------------------------------------


def test_mwmbl_request() -> None:
    spec = get_engine("mwmbl").build_request(Q)
    assert (spec.method, spec.url, spec.params) == (
        "GET",
        "https://api.mwmbl.org/api/v1/search/",
        {"s": "rust async runtime"},
    )
    assert spec.headers is None  # an open API: the library's own honest headers


def test_mwmbl_rows_join_the_title_and_extract_pieces() -> None:
    rows = get_engine("mwmbl").parse(200, JSON, fixture("mwmbl_results_handmade.json"), Q)
    assert [(r.rank, r.url) for r in rows] == [
        (1, "https://tokio.rs/"),
        (3, "https://docs.rs/async-std/latest/async_std/"),
        (5, "https://smol-rs.github.io/smol/"),
    ]
    tokio, docs, smol = rows
    assert tokio.title == "Tokio - An asynchronous Rust runtime"
    assert tokio.snippet == "Tokio is an asynchronous runtime for the Rust programming language."
    assert docs.title == "async_std - Rust: Vec<T>" and docs.snippet == ""  # plain text: "<T>" stays
    assert smol.title == "smol"


def test_mwmbl_shapes_and_statuses() -> None:
    assert get_engine("mwmbl").parse(200, JSON, b"[]", Q) == []
    with pytest.raises(ParseFailure):
        get_engine("mwmbl").parse(200, JSON, b'{"results": []}', Q)
    with pytest.raises(RateLimited):
        get_engine("mwmbl").parse(429, JSON, b"", Q)


# --- both through the live source, on loopback ----------------------------------------------------------------


async def test_yep_and_mwmbl_answer_through_the_live_source(server, transport, tmp_path):
    server.route("/yep/search", Reply(200, JSON, fixture("yep_results_handmade.json")))
    server.route("/mwmbl/api/v1/search/", Reply(200, JSON, fixture("mwmbl_results_handmade.json")))
    source = LiveSource(
        KeyStore(env={}, keys_file=tmp_path / "keys.json"),
        InMemoryCooldownStore(),
        transport,
        engines=["yep", "mwmbl"],
        base_urls={"yep": server.url + "/yep", "mwmbl": server.url + "/mwmbl"},
        timeout_s=5.0,
    )
    request = SearchRequest(query="rust async runtime")
    yep = await source.ask("yep", "rust async runtime", request)
    mwmbl = await source.ask("mwmbl", "rust async runtime", request)
    assert (yep.status, len(yep.rows), mwmbl.status, len(mwmbl.rows)) == ("ok", 3, "ok", 3)
    (to_yep,) = server.seen("/yep/search")
    assert to_yep.headers["origin"] == "https://yep.com" and to_yep.headers["sec-fetch-mode"] == "cors"
    assert to_yep.headers["sec-fetch-site"] == "same-site"
    (to_mwmbl,) = server.seen("/mwmbl/api/v1/search/")
    assert to_mwmbl.query == {"s": ["rust async runtime"]}
    assert to_mwmbl.headers["user-agent"].startswith("serpfuse/")


def test_time_range_searches_skip_both() -> None:
    assert not ENGINES["yep"].INFO.time_range_support and not ENGINES["mwmbl"].INFO.time_range_support


# --- independent indexes ------------------------------------------------------------------------------------


def test_default_keyless_primaries_span_at_least_five_independent_web_indexes() -> None:
    primaries = default_keyless_primaries()
    groups = web_index_groups(primaries, engine_table()["groups"])
    assert {"google", "bing", "brave", "yep", "mwmbl"} <= groups, groups
    assert len(groups) >= 5
    # what does not count: engines without an index of their own, and keyed or self-hosted ones
    assert not groups & NOT_OWN_WEB_INDEX
    assert "brave" in primaries or "brave-web" in primaries
    assert not {"exa", "tavily", "firecrawl", "searxng", "brave"} & set(primaries)


def test_index_groups_count_one_index_behind_several_engines_once() -> None:
    table = json.loads((Path(__file__).parents[1] / "src/serpfuse/data/engine_weights.json").read_text())
    groups = table["groups"]
    assert web_index_groups(["bing", "ddg", "yahoo"], groups) == {"bing"}
    assert web_index_groups(["google", "startpage"], groups) == {"google"}
    assert web_index_groups(["wikipedia", "anysearch", "searxng"], groups) == set()
    assert web_index_groups(["someindex"], groups) == {"someindex"}  # not listed: its own group
    assert groups["yep"] == "yep" and groups["mwmbl"] == "mwmbl" and groups["google"] == "google"
