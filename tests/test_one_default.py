"""One default ranker everywhere (issue 8 item 5): search, fuse, bench, the HTTP API and MCP all rank with
``config.DEFAULT_STRATEGY`` when the caller names no strategy."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote

import pytest
from mcp import Client
from typer.testing import CliRunner

from conftest import need
from redis_server import start_serpfuse
from serpfuse.cli import app
from serpfuse.config import DEFAULT_STRATEGY, RankingConfig
from serpfuse.serve.mcp_server import build_server
from serpfuse.service import SearchService
from serpfuse.settings import Settings

QUERY = "top restaurants in belgrad"


@pytest.fixture(scope="module")
def recording(data_dir) -> Path:
    return need(data_dir / "crw56" / "searxng_raw.json")


def _cli(*args: str, env: dict[str, str] | None = None):
    result = CliRunner().invoke(app, list(args), env=env)
    assert result.exit_code == 0, result.stderr
    return result.stdout


def test_the_constant_is_the_configs_default():
    assert RankingConfig().strategy == DEFAULT_STRATEGY


def test_search_defaults_to_it(recording, tmp_path):
    out = json.loads(_cli("search", QUERY, "--replay", str(recording), "--json", env={"HOME": str(tmp_path)}))
    assert out["strategy"] == DEFAULT_STRATEGY


def test_fuse_defaults_to_it(tmp_path):
    for name, docs in (("a", ["d1", "d2", "d3"]), ("b", ["d2", "d3", "d4"])):
        lines = [f"q1 Q0 {d} {i} {10 - i} {name}" for i, d in enumerate(docs, start=1)]
        (tmp_path / f"{name}.run").write_text("\n".join(lines) + "\n")
    out = _cli("fuse", str(tmp_path / "a.run"), str(tmp_path / "b.run"))
    assert {line.split()[5] for line in out.splitlines()} == {f"serpfuse-{DEFAULT_STRATEGY}"}


def test_bench_defaults_to_it(recording, data_dir):
    qrels = need(data_dir / "crw56" / "qrels-dev.jsonl")
    out = json.loads(_cli("bench", "--replay", str(recording), "--qrels", str(qrels), "--json"))
    assert out["report"]["config"] == DEFAULT_STRATEGY
    assert out["report"]["fingerprint"] == RankingConfig().fingerprint()


def test_http_api_defaults_to_it(recording, tmp_path):
    with start_serpfuse(tmp_path, ["--replay", str(recording)]) as server:
        status, _, body = server.json("GET", f"/v1/search?q={quote(QUERY)}&limit=3")
    assert status == 200 and body["strategy"] == DEFAULT_STRATEGY


async def test_mcp_defaults_to_it(recording):
    service = SearchService.from_settings(Settings(replay=recording, cache="off"))
    try:
        async with Client(build_server(service)) as client:
            result = await client.call_tool("web_search", {"query": QUERY, "limit": 3})
    finally:
        await service.aclose()
    assert not result.is_error and result.structured_content["strategy"] == DEFAULT_STRATEGY
