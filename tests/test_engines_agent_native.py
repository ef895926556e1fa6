"""The agent-native keyless sources, each its own engine and index group: Keenable's public endpoint, Parallel's
free Search MCP, You.com's free MCP profile. Requests are pinned in test_engines_peers (SearXNG 0be6f8780 for
Keenable, 2026-07-15; parallel-web/search-mcp 18b4f4f SKILL.md for Parallel; You.com's setup guide and
free-search-mcp 0.16.0 youcom.py, 2026-10, for You.com). Here: parsers on hand-made answers written from the
documented layouts (no capture exists), their limits as cooldowns, their quotas in ``serpfuse engines``, no
vendor or key header where none is asked for, and what consecutive searches send on 127.0.0.1 through each
engine's base-URL setting."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakeserver import Reply, Seen
from serpfuse.engines import default_keyless_primaries, get_engine, web_index_groups
from serpfuse.engines.base import EngineQuery, ParseFailure, RateLimited
from serpfuse.models import SearchRequest
from serpfuse.secrets import KeyStore
from serpfuse.sources.live import LiveSource
from serpfuse.sources.request_headers import API_USER_AGENT
from serpfuse.state.cooldown import InMemoryCooldownStore

FIXTURES = Path(__file__).parent / "fixtures" / "engines"
JSON = {"content-type": "application/json"}
Q = EngineQuery(text="rust async runtime")
KEY = "kn-TEST-0123456789abcdef"


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def tool_reply(text: str, *, is_error: bool = False) -> bytes:
    result = {"content": [{"type": "text", "text": text}], "isError": is_error}
    return json.dumps({"jsonrpc": "2.0", "id": 3, "result": result}).encode()


# --- parsers ------------------------------------------------------------------------------------------------------


def test_keenable_rows_keep_their_rank_and_take_the_publication_date_not_the_fetch_date() -> None:
    rows = get_engine("keenable").parse(200, JSON, fixture("keenable_results_handmade.json"), Q)
    assert [(r.rank, r.url) for r in rows] == [
        (1, "https://tokio.rs/"),
        (2, "https://docs.rs/async-std"),
        (4, "https://without.boats/blog/why-async-rust/"),
    ]
    assert rows[0].published is not None and rows[0].published.date().isoformat() == "2026-03-02"
    assert rows[1].published is None  # acquired_at is when Keenable fetched it, not a publication date
    assert rows[1].snippet == "Async version of the Rust standard library."  # description empty: snippet
    with pytest.raises(ParseFailure):
        get_engine("keenable").parse(200, JSON, b'{"detail": "changed"}', Q)


def test_keenables_hourly_limit_is_a_cooldown_for_its_retry_after() -> None:
    with pytest.raises(RateLimited) as caught:
        get_engine("keenable").parse(429, {"retry-after": "1200"}, b'{"detail": "rate limit"}', Q)
    assert caught.value.cooldown_s == 1200.0


def test_parallel_rows_come_from_the_tools_search_json_first_excerpt_as_snippet() -> None:
    body = tool_reply(fixture("parallel_search_text_handmade.json").decode())
    rows = get_engine("parallel").parse(200, JSON, body, Q)
    assert [(r.rank, r.url) for r in rows] == [
        (1, "https://tokio.rs/"),
        (2, "https://rust-lang.github.io/async-book/"),
        (4, "https://docs.rs/smol"),
    ]
    assert rows[0].snippet.startswith("Tokio is an event-driven") and len(rows[0].snippet) <= 300
    assert rows[0].published is not None and rows[1].snippet == ""
    structured = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 3,
            "result": {
                "content": [],
                "structuredContent": json.loads(fixture("parallel_search_text_handmade.json")),
            },
        }
    ).encode()
    assert [r.url for r in get_engine("parallel").parse(200, JSON, structured, Q)] == [r.url for r in rows]
    with pytest.raises(ParseFailure):
        get_engine("parallel").parse(200, JSON, tool_reply("Title: a text layout\nURL: https://x.org/"), Q)


def test_you_rows_are_web_then_news_and_only_news_carries_a_date() -> None:
    body = tool_reply(fixture("you_search_text_handmade.json").decode())
    rows = get_engine("you-free").parse(200, JSON, body, Q)
    assert [(r.rank, r.url) for r in rows] == [
        (1, "https://tokio.rs/"),
        (2, "https://docs.rs/async-std"),
        (3, "https://example.org/news/tokio-2"),
    ]
    assert rows[0].published is None  # a web item's page_age may be a crawl time
    assert rows[2].published is not None and rows[2].published.day == 20
    assert rows[1].snippet == "Async version of the Rust standard library."


def test_yous_spent_daily_allowance_cools_it_an_hour() -> None:
    body = tool_reply("You have exceeded the daily quota for the free profile.", is_error=True)
    with pytest.raises(RateLimited) as caught:
        get_engine("you-free").parse(200, JSON, body, Q)
    assert caught.value.cooldown_s == 3600.0


def test_each_is_its_own_index_and_the_default_keyless_primaries_reach_eight_groups() -> None:
    from serpfuse.data import json as data_json

    groups = data_json("engine_weights.json")["groups"]
    assert {groups[n] for n in ("keenable", "parallel", "you-free")} == {"keenable", "parallel", "you"}
    primaries = default_keyless_primaries()
    assert {"keenable", "parallel"} <= set(primaries) and "you-free" not in primaries  # 100 a day: fallback
    reached = web_index_groups(primaries, groups)
    assert len(reached) >= 8, sorted(reached)
    assert {"bing", "google", "brave", "mojeek", "yep", "mwmbl", "exa", "keenable", "parallel"} <= reached


def test_quotas_show_in_serpfuse_engines(tmp_path, monkeypatch) -> None:
    from typer.testing import CliRunner

    from serpfuse.cli import app

    for name in ("SERPFUSE_CONFIG", "SERPFUSE_KEYS_FILE"):
        monkeypatch.setenv(name, "" if name == "SERPFUSE_CONFIG" else str(tmp_path / "keys.json"))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["engines", "--json"])
    assert result.exit_code == 0, result.output
    rows = {row["engine"]: row for row in json.loads(result.stdout)}
    assert rows["keenable"]["quota"] == "1,000 an hour per IP"
    assert rows["you-free"]["quota"] == "100 a day per IP"
    assert rows["parallel"]["quota"] == "free tier, limit unstated"
    assert rows["ddg"]["quota"] is None


# --- on the wire --------------------------------------------------------------------------------------------------


def source(server, transport, tmp_path, engine: str, env: dict[str, str] | None = None) -> LiveSource:
    return LiveSource(
        KeyStore(env=env or {}, keys_file=tmp_path / "keys.json"),
        InMemoryCooldownStore(),
        transport,
        engines=[engine],
        base_urls={engine: server.url},
        timeout_s=5.0,
    )


def lower(seen: Seen) -> dict[str, str]:
    return {k.lower(): v for k, v in seen.lines}


QUERIES = ("rust async runtime", "tokio scheduler internals")


async def test_keenable_searches_go_to_the_public_endpoint_with_no_attribution_or_key_header(
    server, transport, tmp_path
) -> None:
    server.route(
        "/v1/search/public",
        Reply(200, {"Content-Type": "application/json"}, fixture("keenable_results_handmade.json")),
    )
    src = source(server, transport, tmp_path, "keenable")
    for query in QUERIES:
        answer = await src.ask("keenable", query, SearchRequest(query=query))
        assert answer.status == "ok" and len(answer.rows) == 3
    sent = server.seen("/v1/search/public")
    assert [json.loads(s.body) for s in sent] == [{"query": q, "mode": "pro"} for q in QUERIES]
    for seen in sent:
        headers = lower(seen)
        assert headers["user-agent"] == API_USER_AGENT
        assert not {"x-keenable-title", "x-api-key", "authorization", "cookie"} & set(headers)
    assert len({tuple(sorted(lower(s))) for s in sent}) == 1


async def test_keenable_with_a_key_sends_it_to_the_keyed_path_only(server, transport, tmp_path) -> None:
    server.route_prefix(
        "/", Reply(200, {"Content-Type": "application/json"}, fixture("keenable_results_handmade.json"))
    )
    src = source(server, transport, tmp_path, "keenable", {"SERPFUSE_KEENABLE_API_KEY": KEY})
    answer = await src.ask("keenable", QUERIES[0], SearchRequest(query=QUERIES[0]))
    assert answer.status == "ok"
    (seen,) = server.requests
    assert seen.path == "/v1/search" and lower(seen)["x-api-key"] == KEY
    assert KEY not in json.dumps([r.model_dump(mode="json") for r in answer.rows])


def mcp_server(text: bytes, *, limited_after: int | None = None):
    """A Streamable-HTTP MCP server: a session id on initialize, 202 for the notification, ``text`` for the tool
    (or, from the ``limited_after``-th call on, HTTP 429)."""
    calls = [0]

    def handler(seen: Seen) -> Reply:
        message = json.loads(seen.body)
        if message.get("method") == "initialize":
            result = {
                "protocolVersion": "2025-03-26",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "x"},
            }
            body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
            return Reply(200, {"Content-Type": "application/json", "Mcp-Session-Id": f"s-{calls[0]}"}, body)
        if "id" not in message:
            return Reply(202)
        calls[0] += 1
        if limited_after is not None and calls[0] >= limited_after:
            return Reply(
                429, {"Retry-After": "600", "Content-Type": "application/json"}, b'{"error": "rate limit"}'
            )
        return Reply(200, {"Content-Type": "application/json"}, tool_reply(text.decode()))

    return handler


@pytest.mark.parametrize(
    ("engine", "text", "tool"),
    [
        ("parallel", "parallel_search_text_handmade.json", "web_search"),
        ("you-free", "you_search_text_handmade.json", "you-search"),
    ],
)
async def test_each_search_is_one_mcp_session_without_credentials_and_a_429_cools_it(
    server, transport, tmp_path, engine, text, tool
) -> None:
    server.route("/mcp", mcp_server(fixture(text), limited_after=3))
    src = source(server, transport, tmp_path, engine)
    answers = [await src.ask(engine, q, SearchRequest(query=q)) for q in (*QUERIES, "third", "fourth")]
    assert [a.status for a in answers] == ["ok", "ok", "rate-limited", "skipped"]
    assert answers[2].retry_after_s == 600.0
    sent = server.seen("/mcp")
    methods = [json.loads(s.body)["method"] for s in sent]
    assert methods == ["initialize", "notifications/initialized", "tools/call"] * 3  # the fourth: not sent
    calls = [json.loads(s.body)["params"] for s in sent if json.loads(s.body)["method"] == "tools/call"]
    assert [c["name"] for c in calls] == [tool] * 3
    assert calls[0]["arguments"].get("query", calls[0]["arguments"].get("objective")) == QUERIES[0]
    for seen in sent:
        headers = lower(seen)
        assert "authorization" not in headers and "x-api-key" not in headers
        assert headers["user-agent"] == API_USER_AGENT
        if engine == "you-free":
            assert seen.query == {"profile": ["free"]}
    # Each search its own session: the tool call carries the id its own initialize handed out.
    sessions = [lower(s).get("mcp-session-id") for s in sent if json.loads(s.body)["method"] == "tools/call"]
    assert sessions == ["s-0", "s-1", "s-2"]


async def test_tavily_free_asks_in_its_documented_keyless_mode_and_never_carries_the_keyed_engines_key(
    server, transport, tmp_path
) -> None:
    # docs.tavily.com/documentation/keyless (2026-12): the X-Tavily-Access-Mode: keyless header, the standard body.
    answer_body = json.dumps(
        {
            "results": [
                {"url": "https://tokio.rs/", "title": "Tokio", "content": "An asynchronous Rust runtime."}
            ]
        }
    ).encode()
    server.route("/search", Reply(200, {"Content-Type": "application/json"}, answer_body))
    src = source(server, transport, tmp_path, "tavily-free", {"TAVILY_API_KEY": KEY})
    for query in QUERIES:
        answer = await src.ask("tavily-free", query, SearchRequest(query=query))
        assert answer.status == "ok" and [r.url for r in answer.rows] == ["https://tokio.rs/"]
    sent = server.seen("/search")
    assert [json.loads(s.body)["query"] for s in sent] == list(QUERIES)
    for seen in sent:
        headers = lower(seen)
        assert headers["x-tavily-access-mode"] == "keyless"
        assert "authorization" not in headers and KEY not in seen.body.decode()
    with pytest.raises(RateLimited):
        get_engine("tavily-free").parse(429, {}, b'{"detail": {"error": "rate limit"}}', Q)
