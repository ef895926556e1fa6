"""Third-party clients, unchanged, against a real `serpfuse serve` on 127.0.0.1 answering from a recording.

Each test runs the client library itself (test-only dependencies in the dev extra): LangChain's
SearxSearchWrapper given the server's ROOT URL (as its docs show; real SearXNG redirects ``/?q=`` to
``/search``), tavily-python's TavilyClient and langchain-tavily's TavilySearch with their base URL pointed at
``/tavily``, and llm-tools-searxng over POST and GET. Open WebUI is too large to install for a test, so its
``search_searxng`` request is sent as it sends it: the same ``requests.get`` call, parameters and headers
(open_webui/retrieval/web/searxng.py), given the root URL and its documented ``/search?q=<query>`` URL.
The MCP clients (stdio and streamable HTTP) are in test_mcp.py.
"""

from __future__ import annotations

import asyncio
import json

import pytest
import requests

from conftest import need
from redis_server import ServeProcess, start_serpfuse, stop

QUERY = "top restaurants in belgrad"


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch):
    # requests and httpx read proxy settings from the environment; a loopback test must not go through one.
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


@pytest.fixture(scope="module")
def api(data_dir, tmp_path_factory):
    recording = need(data_dir / "crw56" / "searxng_raw.json")
    server = start_serpfuse(
        tmp_path_factory.mktemp("clients"),
        ["--replay", str(recording)],
        env={"SERPFUSE_RATE_LIMIT_BURST": "10000"},
    )
    yield server
    stop(server.proc)


def _fused_urls(api: ServeProcess, limit: int | None = None) -> list[str]:
    status, _, body = api.json("GET", f"/search?q={requests.utils.quote(QUERY)}&format=json")
    assert status == 200
    return [r["url"] for r in body["results"]][:limit]


# --- SearXNG clients -------------------------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore:`langchain-community` is being sunset")
def test_langchain_searx_wrapper_given_the_root_url(api: ServeProcess):
    from langchain_community.utilities import SearxSearchWrapper

    searx = SearxSearchWrapper(searx_host=api.base)  # the root, as LangChain's docs show it
    rows = searx.results(QUERY, num_results=5)
    assert [r["link"] for r in rows] == _fused_urls(api, 5)
    assert all(r["title"] and "engines" in r for r in rows)
    assert "Belgrade" in searx.run(QUERY)  # the text form an agent reads
    assert [r["link"] for r in asyncio.run(searx.aresults(QUERY, num_results=3))] == _fused_urls(api, 3)


def test_root_with_a_query_redirects_to_search_like_searxng(api: ServeProcess):
    status, headers, _ = api.get(f"/?q={requests.utils.quote(QUERY)}&format=json&pageno=1")
    assert status == 200  # urllib follows the redirect, as every client here does
    raw = requests.get(f"{api.base}/?q=x&format=json", allow_redirects=False, timeout=30)
    assert raw.status_code == 308 and raw.headers["location"] == "/search?q=x&format=json"
    # a form POSTed to the root is sent on with its body (308 keeps both), as SearXNG does
    posted = requests.post(api.base + "/", data={"q": QUERY, "format": "json"}, timeout=30)
    assert posted.status_code == 200 and [r["url"] for r in posted.json()["results"]] == _fused_urls(api)
    assert requests.post(api.base + "/", data={}, timeout=30).headers["content-type"].startswith("text/html")


@pytest.mark.parametrize("url", ["{base}", "{base}/search?q=<query>"])
def test_open_webui_search_searxng_request(api: ServeProcess, url: str):
    # open_webui/retrieval/web/searxng.py, search_searxng(): its parameters, its headers, its requests.get.
    query_url = url.format(base=api.base)
    if "<query>" in query_url:  # "Legacy query format": Open WebUI strips the query string
        query_url = query_url.split("?")[0]
    params = {
        "q": QUERY, "format": "json", "pageno": 1, "safesearch": "1", "language": "en-US", "time_range": "",
        "categories": "", "theme": "simple", "image_proxy": 0,
    }  # fmt: skip
    headers = {
        "User-Agent": "Cakumi (https://github.com/open-webui/open-webui) RAG Bot",
        "Accept": "text/html",  # it asks for HTML and reads JSON: format=json must win
        "Accept-Encoding": "gzip, deflate",
        "Accept-Language": "en-US,en;q=0.5",
        "Connection": "keep-alive",
    }
    response = requests.get(query_url, headers=headers, params=params, timeout=30)
    response.raise_for_status()
    results = sorted(response.json().get("results", []), key=lambda x: x.get("score", 0), reverse=True)
    assert [r["url"] for r in results] == _fused_urls(api)  # its re-sort on score keeps serpfuse's order
    assert all(r["title"] and r["content"] is not None for r in results)


@pytest.mark.parametrize("method", ["POST", "GET"])
def test_llm_tools_searxng(api: ServeProcess, monkeypatch, method: str):
    import llm_tools_searxng

    monkeypatch.setenv("SEARXNG_METHOD", method)  # the plugin's own switch; POST sends a form body
    answer = json.loads(llm_tools_searxng.SearXNG(base_url=api.base).search(QUERY))
    assert [r["url"] for r in answer["results"]] == _fused_urls(api)[:10]
    assert answer["results"][0]["engine"] in {"duckduckgo", "google", "bing"}


# --- Tavily clients --------------------------------------------------------------------------------------------


def test_tavily_python_client_with_api_base_url(api: ServeProcess):
    from tavily import TavilyClient

    client = TavilyClient(api_key="tvly-local", api_base_url=api.base + "/tavily")
    plain = client.search(QUERY, max_results=5)
    assert len(plain["results"]) == 5 and plain["results"][0]["score"] == 1.0
    assert not {"usage", "auto_parameters"} & set(plain) and "favicon" not in plain["results"][0]
    asked = client.search(
        QUERY, max_results=3, include_favicon=True, include_usage=True, auto_parameters=True
    )
    assert asked["usage"] == {"credits": 0}  # serpfuse spends no Tavily credits
    assert asked["auto_parameters"] == {"topic": "general", "search_depth": "basic"}
    for row in asked["results"]:
        scheme, _, host = row["url"].partition("://")
        assert row["favicon"] == f"{scheme}://{host.split('/')[0]}/favicon.ico"


def test_langchain_tavily_search_tool(api: ServeProcess):
    from langchain_tavily import TavilySearch

    tool = TavilySearch(max_results=4, tavily_api_key="tvly-local", api_base_url=api.base + "/tavily")
    answer = tool.invoke({"query": QUERY})
    assert [r["url"] for r in answer["results"]] == _fused_urls(api, 4)
    tool = TavilySearch(
        max_results=2, include_favicon=True, tavily_api_key="tvly-local", api_base_url=api.base + "/tavily"
    )
    assert all(r["favicon"].endswith("/favicon.ico") for r in tool.invoke({"query": QUERY})["results"])
