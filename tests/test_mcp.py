"""The MCP tools, in process (``mcp.Client(server)``) and once through a real ``serpfuse mcp`` over stdio.

All on the crw56 SearXNG recording: no network.
"""

from __future__ import annotations

import re
import sys
from importlib.metadata import version

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from redis_server import CLI, isolated_env, start_serpfuse, stop
from serpfuse.engines.base import RateLimited
from serpfuse.secrets import KeyStore
from serpfuse.serve.mcp_render import fit_blocks
from serpfuse.serve.mcp_server import build_server, one_line_error
from serpfuse.service import SearchService
from serpfuse.settings import Settings
from serpfuse.sources.live import LiveSource
from serpfuse.sources.transport import Transport
from serpfuse.state.cooldown import InMemoryCooldownStore

QUERY = "top restaurants in belgrad"
ROW_START = re.compile(r"^\d+\. ", re.M)


@pytest.fixture
async def service(recording):
    svc = SearchService.from_settings(Settings(replay=recording, cache="off"))
    yield svc
    await svc.aclose()


def _text(result) -> str:
    assert len(result.content) == 1
    return result.content[0].text


async def test_tools_are_listed_with_input_and_output_schemas(service):
    async with Client(build_server(service)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == {"web_search", "explain_search", "engine_status", "read_url"}
    params = set(tools["web_search"].input_schema["properties"])
    assert params == {
        "query", "limit", "engines", "include_domains", "exclude_domains", "time_range", "date_from", "date_to",
        "region", "language", "category", "strategy", "min_score", "max_chars", "passages",
    }  # fmt: skip
    assert tools["web_search"].input_schema["required"] == ["query"]
    assert set(tools["explain_search"].input_schema["properties"]) == params
    for tool in tools.values():
        assert tool.output_schema is not None
        assert tool.annotations.read_only_hint is True
    # One signature serves both search tools; what they answer differs.
    assert "results" in tools["web_search"].output_schema["properties"]
    assert "candidates" in tools["explain_search"].output_schema["properties"]


async def test_web_search_gives_text_and_the_same_rows_as_structured_content(service):
    direct = await service.search(service.make_request(query=QUERY))
    async with Client(build_server(service)) as client:
        result = await client.call_tool("web_search", {"query": QUERY})
    assert not result.is_error
    text, data = _text(result), result.structured_content
    assert len(text) <= 6000  # the default max_chars: well under the ~10k where hosts start to complain
    assert data["query"] == QUERY and data["truncated"] is False and data["omitted"] == 0
    rows = data["results"]
    assert [r["url"] for r in rows] == [r.url for r in direct.results]
    assert 0 < len(rows) <= 8
    assert len(ROW_START.findall(text)) == len(rows)
    for i, row in enumerate(rows, start=1):
        assert set(row) == {"title", "url", "snippet", "published", "score", "engines"}
        assert row["url"] in text and f"{i}. " in text
        assert len(row["snippet"]) <= 300 and row["engines"]
    assert "Engines:" in text and "brave rate-limited" in text


@pytest.mark.parametrize("max_chars", [500, 700, 1000, 1500, 3000])
async def test_output_is_bounded_by_max_chars_and_says_so(service, max_chars):
    async with Client(build_server(service)) as client:
        result = await client.call_tool("web_search", {"query": QUERY, "max_chars": max_chars})
    text, data = _text(result), result.structured_content
    assert len(text) <= max_chars
    assert data["truncated"] is True and data["omitted"] > 0
    assert f"[truncated: showing {len(data['results'])} of " in text
    assert len(ROW_START.findall(text)) == len(data["results"])


def test_fit_blocks_keeps_leading_blocks_and_never_exceeds_the_budget():
    blocks = [f"block {i} " + "x" * 90 for i in range(10)]
    for budget in (50, 120, 333, 700, 5000):
        text, kept = fit_blocks("head", blocks, "tail", budget, lambda k, n: f"[{k} of {n}]")
        assert len(text) <= budget
        assert all(b in text for b in blocks[:kept]) and not any(b in text for b in blocks[kept:])
        assert (f"[{kept} of 10]" in text) == (kept < 10)
    assert fit_blocks("h", blocks, "t", 10_000, lambda k, n: "!")[1] == 10


async def test_explain_search_lists_every_candidate_and_why_cut_rows_were_cut(service):
    async with Client(build_server(service)) as client:
        plain = await client.call_tool("web_search", {"query": QUERY, "limit": 5})
        result = await client.call_tool("explain_search", {"query": QUERY, "limit": 5, "max_chars": 20_000})
    assert not result.is_error
    data, text = result.structured_content, _text(result)
    assert data["truncated"] is False and data["totalCandidates"] == len(data["candidates"]) > 5
    selected = [c for c in data["candidates"] if c["selected"]]
    assert [c["url"] for c in selected] == [r["url"] for r in plain.structured_content["results"]]
    assert [c["position"] for c in selected] == list(range(1, len(selected) + 1))
    assert all(c["scoreParts"] for c in selected)
    cut = [c for c in data["candidates"] if not c["selected"]]
    assert cut and all(c["cutBy"] and c["cutReason"] for c in cut)
    assert all(f"cut by {c['cutBy']}: " in text for c in cut)


@pytest.mark.parametrize(
    ("arguments", "needle"),
    [
        ({"query": ""}, "query is empty"),
        ({"query": QUERY, "strategy": "nope"}, "unknown strategy 'nope'"),
        ({"query": QUERY, "engines": ["nope"]}, "unknown engine 'nope'"),
        ({"query": QUERY, "time_range": "decade"}, "time_range"),
        ({"query": QUERY, "time_range": "week", "date_from": "2025-01-01"}, "time_range cannot be combined"),
        ({"query": QUERY, "date_from": "2025-13-01"}, "date_from"),
        ({"query": QUERY, "limit": 99}, "limit"),
        ({"query": "a query nobody recorded"}, "not in the recording"),
    ],
)
async def test_bad_input_is_a_one_line_tool_error(service, arguments, needle):
    async with Client(build_server(service)) as client:
        result = await client.call_tool("web_search", arguments)
    assert result.is_error
    text = _text(result)
    assert "\n" not in text and needle in text


def test_one_line_error_flattens_pydantic_reports():
    raw = (
        "Error executing tool web_search: 1 validation error for web_searchArguments\nlimit\n"
        "  Input should be less than or equal to 20 [type=less_than_equal, input_value=99]\n"
        "    For further information visit https://errors.pydantic.dev/2/v/less_than_equal"
    )
    assert (
        one_line_error(raw)
        == "Error executing tool web_search: limit: Input should be less than or equal to 20"
    )
    assert one_line_error("a\n b") == "a b"


async def test_engine_status_reports_cooldowns_and_key_status_never_keys(tmp_path):
    secret = "brv-secret-0123456789"
    keys = KeyStore(env={"BRAVE_API_KEY": secret}, keys_file=tmp_path / "keys.json")
    cooldowns = InMemoryCooldownStore()
    source = LiveSource(keys, cooldowns, Transport(), engines=["brave", "ddg", "exa"], owns_transport=True)
    svc = SearchService(Settings(cache="off"), source, cooldowns=cooldowns)
    await cooldowns.record_failure("ddg", RateLimited(retry_after_s=90))
    try:
        async with Client(build_server(svc)) as client:
            result = await client.call_tool("engine_status", {})
    finally:
        await svc.aclose()
    text, data = _text(result), result.structured_content
    assert secret not in text and secret not in str(data)
    by_name = {e["engine"]: e for e in data["engines"]}
    assert by_name["brave"]["key"] == "configured" and by_name["brave"]["state"] == "ready"
    assert by_name["exa"]["key"] == "missing" and by_name["exa"]["state"] == "unavailable"
    ddg = by_name["ddg"]
    assert ddg["state"] == "cooling down" and not ddg["available"]
    assert 80 <= ddg["cooldownRemainingS"] <= 90 and ddg["cooldownFailures"] == 1
    assert "rate limited" in ddg["reason"]
    assert "- ddg: cooling down" in text


async def test_cooling_engine_is_skipped_by_web_search(service):
    await service.cooldowns.record_failure("google", RateLimited(retry_after_s=600))
    async with Client(build_server(service)) as client:
        result = await client.call_tool("web_search", {"query": QUERY})
    data = result.structured_content
    google = next(e for e in data["engines"] if e["engine"] == "google")
    assert google["status"] == "skipped" and "cooling down" in google["reason"]
    assert all("google" not in r["engines"] for r in data["results"])


async def test_stdio_subprocess_serves_the_same_tools(recording, tmp_path):
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", CLI, "mcp", "--replay", str(recording), "--no-cache"],
        env=isolated_env(tmp_path),
        cwd=str(tmp_path),
    )
    async with Client(params) as client:
        info = client.server_info
        names = {t.name for t in (await client.list_tools()).tools}
        result = await client.call_tool("web_search", {"query": QUERY, "limit": 3})
        bad = await client.call_tool("web_search", {"query": QUERY, "strategy": "nope"})
    assert names == {"web_search", "explain_search", "engine_status", "read_url"}
    # serverInfo names the package's version, as installed (what a host shows in its server list)
    assert info is not None and info.name == "serpfuse" and info.version == version("serpfuse") != ""
    assert not result.is_error and len(result.structured_content["results"]) == 3
    assert "tripadvisor.com" in _text(result)
    assert bad.is_error and "unknown strategy" in _text(bad)


async def test_streamable_http_subprocess_requires_the_token(recording, tmp_path):
    token = "mcp-token-31c"
    server = start_serpfuse(
        tmp_path,
        ["--replay", str(recording), "--no-cache"],
        {"SERPFUSE_API_TOKEN": token},
        command=("mcp", "--http"),
    )
    try:
        async with httpx2.AsyncClient() as anonymous:
            refused = await anonymous.post(server.base + "/mcp", json={})
        assert refused.status_code == 401 and "bearer token" in refused.json()["error"]["message"]
        auth = {"Authorization": f"Bearer {token}"}
        async with (
            httpx2.AsyncClient(headers=auth, timeout=60) as http_client,  # a first search on a loaded machine
            Client(streamable_http_client(server.base + "/mcp", http_client=http_client)) as client,
        ):
            info = client.server_info
            result = await client.call_tool("web_search", {"query": QUERY, "limit": 2})
        assert info is not None and info.version == version("serpfuse") != ""
        assert not result.is_error and len(result.structured_content["results"]) == 2
    finally:
        stop(server.proc)
