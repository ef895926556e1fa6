"""Third-party clients, unchanged, against a real `serpfuse serve` on 127.0.0.1 answering from a recording.

Each test runs the client library itself (test-only dependencies in the dev extra): LangChain's
SearxSearchWrapper given the server's ROOT URL (as its docs show; real SearXNG redirects ``/?q=`` to
``/search``), tavily-python's TavilyClient and langchain-tavily's TavilySearch with their base URL pointed at
``/tavily``, llm-tools-searxng over POST and GET and through llm's own CLI (the URL stored with ``llm keys set
searxng_url``; a stand-in model calls the tool), agno's SearxngTools, TavilyTools and FirecrawlTools given the
server's URL, and firecrawl-py 4.x's ``Firecrawl(api_url=...)`` (its v2 search and scrape, the pages from a
loopback page server). Open WebUI is too large to install for a test, so its
``search_searxng`` request is sent as it sends it: the same ``requests.get`` call, parameters and headers
(open_webui/retrieval/web/searxng.py), given the root URL and its documented ``/search?q=<query>`` URL.
The MCP clients (stdio and streamable HTTP) are in test_mcp.py.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import types
from pathlib import Path

import pytest
import requests

from conftest import need
from fakeserver import FakeServer, Reply
from redis_server import ServeProcess, start_serpfuse, stop
from test_reader_fetch import ARTICLE, HTML

QUERY = "top restaurants in belgrad"
BIN = Path(sys.executable).parent


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


class ToolCaller:
    """A stand-in for the LLM in llm's own CLI: it calls the tool it was given with the prompt, then says what
    the tool returned. Everything else is llm's: its key store, its plugin's tool, its tool-calling chain."""

    @staticmethod
    def plugin():
        import llm

        class Model(llm.Model):
            model_id = "serpfuse-test-tool-caller"
            supports_tools = True

            def execute(self, prompt, stream, response, conversation):
                if prompt.tool_results:  # the second turn: the tool's answer is the reply
                    yield from (r.output for r in prompt.tool_results)
                    return
                (tool,) = prompt.tools
                response.add_tool_call(llm.ToolCall(name=tool.name, arguments={"query": prompt.prompt}))
                yield ""

        plugin = types.ModuleType("serpfuse_test_tool_caller")
        plugin.register_models = llm.hookimpl(lambda register: register(Model()))
        return plugin


@pytest.fixture
def llm_home(tmp_path, monkeypatch):
    from llm.plugins import pm

    monkeypatch.setenv("LLM_USER_PATH", str(tmp_path / "llm"))
    monkeypatch.delenv("SEARXNG_URL", raising=False)
    plugin = ToolCaller.plugin()
    pm.register(plugin)
    yield tmp_path / "llm"
    pm.unregister(plugin)


def _llm(*args: str) -> subprocess.CompletedProcess:
    """The `llm` command itself (the keys it stores are what the plugin reads)."""
    return subprocess.run([str(BIN / "llm"), *args], capture_output=True, text=True, timeout=60, check=False)


def test_llm_searxng_search_tool_through_llms_key(api: ServeProcess, llm_home):
    from click.testing import CliRunner
    from llm.cli import cli

    done = _llm("keys", "set", "searxng_url", "--value", api.base)  # as the README says
    assert done.returncode == 0, done.stderr
    assert "searxng_search" in _llm("tools").stdout  # the plugin's tool, found by llm
    ran = CliRunner().invoke(cli, ["-m", "serpfuse-test-tool-caller", "-T", "searxng_search", QUERY])
    assert ran.exit_code == 0, (ran.output, ran.exception)
    answer = json.loads(ran.output)
    assert [r["url"] for r in answer["results"]] == _fused_urls(api)
    assert answer["query"] == QUERY and answer["results"][0]["title"]


def test_llm_searxng_url_in_the_environment_alone_does_not_reach_the_server(
    api: ServeProcess, llm_home, monkeypatch
):
    """The plugin's error message names SEARXNG_URL, but llm 0.36 takes the key's name for the key itself when no
    key of that name is stored: the URL it asks for is "searxng_url/search". The README says `llm keys set`."""
    from click.testing import CliRunner
    from llm.cli import cli

    monkeypatch.setenv("SEARXNG_URL", api.base)
    ran = CliRunner().invoke(cli, ["-m", "serpfuse-test-tool-caller", "-T", "searxng_search", QUERY])
    assert "missing an 'http://' or 'https://' protocol" in ran.output, ran.output


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


# --- agno's toolkits (what an agno Agent calls when its model picks the tool) -----------------------------------


def test_agno_searxng_tools_given_the_host(api: ServeProcess):
    from agno.tools.searxng import SearxngTools

    tools = SearxngTools(host=api.base, fixed_max_results=5)
    answer = json.loads(tools.search_web(QUERY))
    assert [r["url"] for r in answer["results"]] == _fused_urls(api, 5)
    only_google = json.loads(SearxngTools(host=api.base, engines=["google"]).search_web(QUERY, max_results=3))
    assert all(r["engines"] == ["google"] for r in only_google["results"])


def test_agno_tavily_tools_with_api_base_url(api: ServeProcess):
    from agno.tools.tavily import TavilyTools

    tools = TavilyTools(api_key="tvly-local", api_base_url=api.base + "/tavily", format="json")
    answer = json.loads(tools.web_search_using_tavily(QUERY, max_results=4))
    assert [r["url"] for r in answer["results"]] == _fused_urls(api, 4)
    assert answer["query"] == QUERY and all(r["title"] and r["content"] for r in answer["results"])


# --- Firecrawl's client (v2) -------------------------------------------------------------------------------------

HARBOUR = "harbour pontoon berths news"
HARBOUR_NEWS = "harbour pontoon opening"


@pytest.fixture(scope="module")
def pages():
    with FakeServer(lifetime_s=600) as srv:
        srv.route("/robots.txt", Reply(404, {"Content-Type": "text/plain"}, b""))
        srv.route("/story", Reply(200, HTML, ARTICLE))
        srv.route("/story2", Reply(200, HTML, ARTICLE.replace(b"Harbour news", b"Pontoon works")))
        yield srv


@pytest.fixture(scope="module")
def firecrawl_api(data_dir, pages, tmp_path_factory):
    """The crw56 recording plus one query whose rows are the loopback pages, so a search with scrapeOptions
    reads real pages; the reader may read loopback on the page server's port only (as in test_reader_interfaces)."""
    home = tmp_path_factory.mktemp("firecrawl")
    recording = json.loads(need(data_dir / "crw56" / "searxng_raw.json").read_text())
    rows = [
        {"url": f"{pages.url}/story", "title": "Harbour news: berths and the new pontoon",
         "content": "The harbour pontoon opens in spring; berths news from the harbour master.",
         "engines": ["bing", "brave"], "positions": [1, 1]},
        {"url": f"{pages.url}/story2", "title": "Pontoon works delay harbour berths",
         "content": "Harbour news: winter storms delayed the pontoon and berths work.",
         "engines": ["bing", "brave"], "positions": [2, 2]},
    ]  # fmt: skip
    recording.append({"query": HARBOUR, "results": rows, "unresponsive": []})
    news = [
        {"url": f"{pages.url}/story", "title": "Harbour pontoon opens", "content": "The harbour pontoon opened.",
         "engines": ["bing-news", "ddg-news"], "positions": [1, 1], "publishedDate": "2026-05-30T08:00:00"},
    ]  # fmt: skip
    recording.append({"query": HARBOUR_NEWS, "results": news, "unresponsive": []})
    path = home / "recording.json"
    path.write_text(json.dumps(recording))
    env = {
        "SERPFUSE_RATE_LIMIT_BURST": "10000",
        "SERPFUSE_READ_ALLOW_LOOPBACK": "1",
        "SERPFUSE_READ_PORTS": str(pages.port),
    }
    server = start_serpfuse(home, ["--replay", str(path)], env=env)
    yield server
    stop(server.proc)


def test_firecrawl_py_search_posts_v2_and_reads_the_fused_rows(firecrawl_api: ServeProcess):
    from firecrawl import Firecrawl

    client = Firecrawl(api_url=firecrawl_api.base)
    found = client.search(QUERY)  # firecrawl-py sends no limit: Firecrawl's default is 5
    assert [r.url for r in found.web] == _fused_urls(firecrawl_api, 5)
    assert [r.position for r in found.web] == [1, 2, 3, 4, 5]
    assert all(r.title and r.description for r in found.web)
    assert found.news is None
    # the recording's brave, mojeek, startpage and yahoo failed: said in Firecrawl's own warning
    assert found.warning == (
        "web: degraded: 4 of 7 engines failed: brave (rate limit), mojeek (blocked), startpage (challenge), "
        "yahoo (engine error)"
    )
    more = client.search(QUERY, limit=50, sources=["web", "news", "images"], tbs="qdr:y")
    assert len(more.web) <= 20 and more.news == [] and more.images == []  # the recording has no news engine
    assert (
        "at most 20" in more.warning
        and "news: failed: no engine to ask" in more.warning
        and "images" in more.warning
    )


def test_firecrawl_py_news_search_asks_the_news_engines(firecrawl_api: ServeProcess, pages):
    from firecrawl import Firecrawl

    found = Firecrawl(api_url=firecrawl_api.base).search(HARBOUR_NEWS, sources=["news"])
    assert found.web is None
    (item,) = found.news
    assert item.url == f"{pages.url}/story" and item.title == "Harbour pontoon opens"
    assert item.snippet == "The harbour pontoon opened." and item.date.startswith("2026-05-30")


def test_firecrawl_py_search_with_scrape_options_reads_each_page(firecrawl_api: ServeProcess, pages):
    from firecrawl import Firecrawl
    from firecrawl.v2.types import Document, ScrapeOptions

    found = Firecrawl(api_url=firecrawl_api.base).search(
        HARBOUR, scrape_options=ScrapeOptions(formats=["markdown"])
    )
    assert all(isinstance(d, Document) for d in found.web) and len(found.web) == 2
    by_url = {d.metadata.source_url: d.markdown for d in found.web}
    assert by_url[f"{pages.url}/story"].startswith("# Harbour news")
    assert by_url[f"{pages.url}/story2"].startswith("# Pontoon works")


def test_firecrawl_py_scrape_posts_v2_and_gets_the_page(firecrawl_api: ServeProcess, pages):
    from firecrawl import Firecrawl
    from firecrawl.v2.utils.error_handler import FirecrawlError

    client = Firecrawl(api_url=firecrawl_api.base)
    doc = client.scrape(f"{pages.url}/story", formats=["markdown", "html"])
    assert doc.markdown.startswith("# Harbour news") and doc.html.startswith("<article>")
    assert doc.metadata.title == "Harbour news" and doc.metadata.status_code == 200
    assert doc.metadata.source_url == f"{pages.url}/story"
    again = client.scrape(f"{pages.url}/story2", formats=[{"type": "markdown"}], max_age=0)
    assert again.markdown.startswith("# Pontoon works") and again.html is None
    with pytest.raises(FirecrawlError, match="format 'screenshot' is not served"):
        client.scrape(f"{pages.url}/story", formats=["screenshot"])
    with pytest.raises(FirecrawlError, match="port 1"):
        client.scrape("http://127.0.0.2:1/")


def test_agno_firecrawl_tools_with_api_url(firecrawl_api: ServeProcess, pages):
    from agno.tools.firecrawl import FirecrawlTools

    tools = FirecrawlTools(api_key="fc-local", api_url=firecrawl_api.base, enable_search=True, limit=3)
    found = json.loads(tools.search_web(QUERY))
    assert [r["url"] for r in found["web"]] == _fused_urls(firecrawl_api, 3)
    page = json.loads(tools.scrape_website(f"{pages.url}/story"))
    assert page["markdown"].startswith("# Harbour news")


def test_firecrawl_v1_scrape_is_kept_beside_v2(firecrawl_api: ServeProcess, pages):
    status, _, body = firecrawl_api.json("POST", "/v1/scrape", {"url": f"{pages.url}/story"})
    assert status == 200 and body["success"] is True and body["data"]["markdown"].startswith("# Harbour")


@pytest.mark.parametrize(
    ("body", "needle"),
    [({"query": QUERY, "tbs": "qdr:x"}, "tbs must be"),
     ({"query": QUERY, "tbs": "cdr:1,cd_min:13/40/2024"}, "cd_min must be a date"),
     ({"query": QUERY, "sources": ["maps"]}, "source 'maps' is not served"),
     ({"query": QUERY, "limit": 0}, "limit must be an integer from 1 to 100"),
     ({"query": QUERY, "scrapeOptions": {"formats": ["json"]}}, "format 'json' is not served"),
     ({"query": 3}, "query must be a string")],
)  # fmt: skip
def test_firecrawl_v2_search_bad_input_is_firecrawls_one_line_400(firecrawl_api: ServeProcess, body, needle):
    status, _, answer = firecrawl_api.json("POST", "/v2/search", body)
    assert status == 400 and answer["success"] is False and needle in answer["error"], answer
    assert "\n" not in answer["error"]


def test_firecrawl_v2_search_dates_and_domains(firecrawl_api: ServeProcess):
    body = {
        "query": QUERY,
        "tbs": "cdr:1,cd_min:1/1/2020,cd_max:12/31/2030",
        "includeDomains": ["tripadvisor.com"],
    }
    status, _, answer = firecrawl_api.json("POST", "/v2/search", body)
    assert status == 200, answer
    urls = [row["url"] for row in answer["data"]["web"]]
    assert urls and all("tripadvisor.com" in url for url in urls), urls


def test_the_v2_routes_are_in_the_openapi_document(firecrawl_api: ServeProcess):
    _, _, doc = firecrawl_api.json("GET", "/openapi.json")
    for path in ("/v2/search", "/v2/scrape", "/v1/scrape"):
        errors = doc["paths"][path]["post"]["responses"]["400"]["content"]["application/json"]["schema"]
        assert errors["$ref"].endswith("/FirecrawlError")
    schemas = doc["components"]["schemas"]
    assert schemas["FirecrawlSearchRequest"]["required"] == ["query"]
    assert schemas["FirecrawlV2ScrapeRequest"]["required"] == ["url"]
