"""One declaration of a search (``SearchRequest``, and ``SearchCall``'s two flags) read by every face (issue 39,
item 5): GET /v1/search refuses what its POST refuses, by name and with the nearest valid name, instead of
searching with a default; the compatible shapes refuse misspellings of their own parameters and still take what
their clients send; the MCP tools' schema says the defaults and bounds the server runs with."""

from __future__ import annotations

import json
from urllib.parse import quote, urlencode

import pytest
from mcp import Client

from redis_server import ServeProcess
from serpfuse.models import SearchCall, SearchRequest
from serpfuse.serve.mcp_server import build_server
from serpfuse.serve.openapi import openapi_document
from serpfuse.service import SearchService
from serpfuse.settings import Settings

QUERY = "top restaurants in belgrad"
Q = quote(QUERY)


def _message(raw: bytes) -> str:
    body = json.loads(raw)
    if "error" in body and isinstance(body["error"], dict):
        return body["error"]["message"]
    if "detail" in body:
        return body["detail"]["error"]
    return body["error"]


@pytest.mark.parametrize(
    ("query", "needles"),
    [
        (f"q={Q}&limt=3", ["unknown parameter 'limt'", "did you mean 'limit'?"]),
        (f"q={Q}&explain=ture", ["explain: must be true or false"]),
        (f"q={Q}&cache=nope", ["cache: must be true or false"]),
        (f"q={Q}&stratgy=rrf", ["did you mean 'strategy'?"]),
        (f"q={Q}&limit=three", ["limit"]),
        (f"q={Q}&min_score=abc", ["min_score"]),
        (f"q={Q}&limit=3&limit=4", ["limit: given 2 times"]),
        (f"q={Q}&format=json", ["unknown parameter 'format'"]),
        (f"q={Q}&Limit=3", ["unknown parameter 'Limit'", "did you mean 'limit'?"]),
    ],
)
def test_get_refuses_unknown_parameters_and_unreadable_values(api: ServeProcess, query, needles):
    status, headers, raw = api.get(f"/v1/search?{query}")
    assert status == 400, raw[:300]
    assert headers["content-type"].startswith("application/json")
    message = _message(raw)
    assert "\n" not in message
    for needle in needles:
        assert needle in message, message


def test_get_takes_every_declared_field_by_name(api: ServeProcess):
    """Every field of the declaration is a parameter GET takes (none is refused as unknown), and the values
    are read as POST reads them."""
    for name in SearchCall.model_fields:
        if name == "query":
            continue
        status, _, raw = api.get(f"/v1/search?q={Q}&{name}=")  # empty: left out
        assert status == 200, (name, raw[:300])
    params = {"q": QUERY, "limit": "3", "explain": "true", "cache": "false", "min_score": "0"}
    status, _, raw = api.get("/v1/search?" + urlencode(params))
    body = json.loads(raw)
    assert status == 200 and len(body["results"]) == 3 and body["candidates"]
    status, _, post = api.json("POST", "/v1/search", {"query": QUERY, "limit": 3, "explain": True})
    assert [r["url"] for r in body["results"]] == [r["url"] for r in post["results"]]


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ({"query": QUERY, "limt": 3}, "did you mean 'limit'?"),
        ({"query": QUERY, "explain": "ture"}, "explain: must be true or false"),
        ({"query": QUERY, "cache": "maybe"}, "cache: must be true or false"),
    ],
)
def test_post_refuses_the_same(api: ServeProcess, body, needle):
    status, _, raw = api.post("/v1/search", body)
    assert status == 400 and needle in _message(raw), raw[:300]


@pytest.mark.parametrize(
    ("method", "path", "body", "needle"),
    [
        ("GET", f"/search?q={Q}&format=json&pagno=2", None, "did you mean 'pageno'?"),
        ("GET", f"/search?q={Q}&format=json&time_rnage=day", None, "did you mean 'time_range'?"),
        ("POST", "/tavily/search", {"query": QUERY, "max_result": 3}, "did you mean 'max_results'?"),
        ("POST", "/v2/search", {"query": QUERY, "limt": 3}, "did you mean 'limit'?"),
        ("POST", "/v2/search", {"query": QUERY, "scrapeOption": {}}, "did you mean 'scrapeOptions'?"),
        (
            "POST",
            "/v2/search",
            {"query": QUERY, "includedomains": ["a.example"]},
            "did you mean 'includeDomains'?",
        ),
    ],
)
def test_compatible_shapes_refuse_misspellings(api: ServeProcess, method, path, body, needle):
    status, _, raw = api.post(path, body) if method == "POST" else api.get(path)
    assert status == 400 and needle in _message(raw), raw[:300]


def test_compatible_shapes_take_what_their_clients_send(api: ServeProcess):
    """SearXNG's own parameters (Open WebUI sends safesearch, theme, image_proxy) and Firecrawl's options that
    change nothing here (firecrawl-py sends timeout, origin, ignoreInvalidURLs) are still accepted."""
    query = urlencode(
        {"q": QUERY, "format": "json", "safesearch": "0", "theme": "simple", "image_proxy": "0", "pageno": "1",
         "language": "all", "categories": "general"}
    )  # fmt: skip
    status, _, raw = api.get(f"/search?{query}")
    assert status == 200 and json.loads(raw)["results"], raw[:300]
    body = {"query": QUERY, "limit": 3, "timeout": 60000, "origin": "python-sdk", "ignoreInvalidURLs": False}
    status, _, raw = api.post("/v2/search", body)
    assert status == 200 and len(json.loads(raw)["data"]["web"]) == 3, raw[:300]


def test_openapi_get_parameters_are_the_declared_fields():
    doc = openapi_document(Settings())
    params = {p["name"] for p in doc["paths"]["/v1/search"]["get"]["parameters"]}
    assert params == {"q", *SearchCall.model_fields} - {"query"}


@pytest.mark.parametrize("strategy", [None, "rrf"])
async def test_mcp_schema_defaults_and_bounds_are_the_servers(recording, strategy):
    """The search tools' schema is generated from the declaration with this deployment's defaults: its
    strategy (combmnz unless set; the schema said consensus), its limit, and every field (language was missing)."""
    settings = Settings(
        replay=recording, cache="off", limit=5, **({"strategy": strategy} if strategy else {})
    )
    service = SearchService.from_settings(settings)
    try:
        async with Client(build_server(service)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            unknown = await client.call_tool("web_search", {"query": QUERY, "limt": 3})
        for name in ("web_search", "explain_search"):
            props = tools[name].input_schema["properties"]
            assert set(SearchRequest.model_fields) <= set(props)
            assert props["strategy"]["default"] == settings.ranking_config.strategy == (strategy or "combmnz")
            assert props["limit"]["default"] == 5
            assert (props["limit"]["minimum"], props["limit"]["maximum"]) == (1, 20)
            assert props["min_score"]["minimum"] == 0
        assert unknown.is_error
        text = unknown.content[0].text
        assert "unknown argument 'limt'" in text and "did you mean 'limit'?" in text and "\n" not in text
    finally:
        await service.aclose()
