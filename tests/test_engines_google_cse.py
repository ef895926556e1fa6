"""google-cse: Google's Custom Search Element, keyless, as SearXNG asks it (searx/engines/google_cse.py, #6364,
1cdf01a71 2026-07-04, enabled by default at 9fea412 2026-08-22; degoog official-extensions abfd270 2026-08-01):
the loader script's token, then the element's JSONP API. The request itself is pinned in test_engines_peers;
here the parser on hand-made answers (no capture of the element exists in aql-serps), and what consecutive
searches send on 127.0.0.1 through the engine's base-URL setting."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakeserver import Reply, Seen
from serpfuse.engines import get_engine, web_index_groups
from serpfuse.engines.base import EngineError, EngineQuery, ParseFailure, RateLimited
from serpfuse.models import SearchRequest
from serpfuse.secrets import KeyStore
from serpfuse.sources.live import LiveSource
from serpfuse.state.cooldown import InMemoryCooldownStore

FIXTURES = Path(__file__).parent / "fixtures" / "engines"
ENGINE = get_engine("google-cse")
SCRIPT = (FIXTURES / "google_cse_script_handmade.js").read_bytes()
RESULTS = (FIXTURES / "google_cse_results_handmade.jsonp").read_bytes()
JS = {"content-type": "text/javascript; charset=UTF-8"}
Q = EngineQuery(text="rust async runtime")


def test_the_token_comes_from_the_scripts_last_options_call() -> None:
    spec = ENGINE.build_request(Q, (200, JS, SCRIPT))
    assert spec.params["cse_tok"] == "AKaTTZjH2mDn0bIuQxL6wz9y3s8v:1765000000000"
    assert spec.params["cselibv"] == "f71e4ed980f4c082" and spec.params["exp"] == "cc,csqr,4000000"
    assert "gl" not in spec.params and "sort" not in spec.params


@pytest.mark.parametrize(
    "script", [b"(function(){})();", b'({"cx": "x"});', b"({not json});", b"<html>changed</html>"]
)
def test_a_script_without_a_token_is_a_parse_failure(script: bytes) -> None:
    with pytest.raises(ParseFailure):
        ENGINE.build_request(Q, (200, JS, script))


def test_rows_from_the_jsonp_answer_keep_the_elements_ranks() -> None:
    rows = ENGINE.parse(200, JS, RESULTS, Q)
    assert [(r.rank, r.url) for r in rows] == [
        (1, "https://tokio.rs/"),
        (2, "https://users.rust-lang.org/t/choosing-an-async-runtime/12345"),
        (4, "https://rust-lang.github.io/async-book/"),  # rank 3 had no URL: it keeps its place
    ]
    assert rows[0].title == "Tokio - An asynchronous Rust runtime"
    assert rows[0].snippet == "Tokio is an asynchronous runtime for the Rust programming language."


def test_an_answer_without_results_is_empty_and_an_error_object_says_why() -> None:
    assert ENGINE.parse(200, JS, b'/*O_o*/\n_({"cursor": {"resultCount": "0"}});', Q) == []
    limited = b'_({"error": {"code": 429, "message": "Rate Limit Exceeded"}});'
    with pytest.raises(RateLimited):
        ENGINE.parse(200, JS, limited, Q)
    stale = b'_({"error": {"code": 403, "message": "The token is invalid"}});'
    with pytest.raises(EngineError) as caught:
        ENGINE.parse(200, JS, stale, Q)
    assert "403" in caught.value.message and "token" not in caught.value.message  # no body text in messages
    with pytest.raises(ParseFailure):
        ENGINE.parse(200, JS, b"<html>not jsonp</html>", Q)


def test_it_is_googles_index_not_a_new_one() -> None:
    groups = json.loads((Path(__file__).parents[1] / "src/serpfuse/data/engine_weights.json").read_text())[
        "groups"
    ]
    assert ENGINE.INFO.group == "google" and groups["google-cse"] == "google"
    assert web_index_groups(["google", "google-cse", "startpage"], groups) == {"google"}


# --- on the wire ------------------------------------------------------------------------------------------------


def source(server, transport, tmp_path) -> LiveSource:
    return LiveSource(
        KeyStore(env={}, keys_file=tmp_path / "keys.json"),
        InMemoryCooldownStore(),
        transport,
        engines=["google-cse"],
        base_urls={"google-cse": server.url},
        timeout_s=5.0,
    )


def value(seen: Seen, name: str) -> str | None:
    return next((v for k, v in seen.lines if k.lower() == name), None)


async def test_consecutive_searches_fetch_the_script_once_and_carry_its_token(
    server, transport, tmp_path
) -> None:
    server.route("/cse/cse.js", Reply(200, {"Content-Type": "text/javascript"}, SCRIPT))
    server.route("/cse/element/v1", Reply(200, {"Content-Type": "text/javascript"}, RESULTS))
    src = source(server, transport, tmp_path)
    for query in ("rust async runtime", "tokio scheduler"):
        answer = await src.ask("google-cse", query, SearchRequest(query=query))
        assert answer.status == "ok" and len(answer.rows) == 3
    sent = [(s.method, s.path) for s in server.requests]
    assert sent == [("GET", "/cse/cse.js"), ("GET", "/cse/element/v1"), ("GET", "/cse/element/v1")]
    script, *searches = server.requests
    assert script.query == {"cx": ["partner-pub-8993703457585266:4862972284"]}
    assert value(script, "sec-fetch-dest") == "script" and value(script, "referer") is None
    for seen, query in zip(searches, ("rust async runtime", "tokio scheduler"), strict=True):
        assert seen.query["q"] == [query] and seen.query["callback"] == ["_"]
        assert seen.query["cse_tok"] == ["AKaTTZjH2mDn0bIuQxL6wz9y3s8v:1765000000000"]
        assert value(seen, "referer") == "https://cse.google.com/"
        assert "CONSENT=YES+" in (value(seen, "cookie") or "")
        assert value(seen, "sec-fetch-mode") == "no-cors" and value(seen, "upgrade-insecure-requests") is None
    assert len({tuple(k.lower() for k, _ in s.lines) for s in searches}) == 1  # the same headers each time


async def test_a_refused_token_fetches_the_script_anew_on_the_next_search(
    server, transport, tmp_path
) -> None:
    server.route("/cse/cse.js", Reply(200, {"Content-Type": "text/javascript"}, SCRIPT))
    server.route(
        "/cse/element/v1",
        Reply(
            200, {"Content-Type": "text/javascript"}, b'_({"error": {"code": 403, "message": "bad token"}});'
        ),
        Reply(200, {"Content-Type": "text/javascript"}, RESULTS),
    )
    src = source(server, transport, tmp_path)
    request = SearchRequest(query="rust async runtime")
    first = await src.ask("google-cse", "rust async runtime", request)
    assert first.status == "error"
    await src.cooldowns.record_success("google-cse")  # the plain error's short backoff, skipped
    second = await src.ask("google-cse", "rust async runtime", request)
    assert second.status == "ok"
    assert [s.path for s in server.requests] == ["/cse/cse.js", "/cse/element/v1"] * 2
