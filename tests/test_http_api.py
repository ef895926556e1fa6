"""The HTTP API through real `serpfuse serve` processes on 127.0.0.1, answering from the crw56 recording.

Shapes are checked field by field: the SearXNG endpoint against a real SearXNG response (Open WebUI's fixture,
../shared/data/api-json/searxng.json), the Tavily endpoint against the fields in field-notes §3.
"""

from __future__ import annotations

import json
import re
from urllib.parse import quote, urlparse

import pytest

from conftest import need
from redis_server import ServeProcess, start_serpfuse
from serpfuse.settings import ConfigError, check_bind, is_loopback

QUERY = "top restaurants in belgrad"
Q = quote(QUERY)
TOKEN = "test-token-7c1e"


def _json(raw: bytes):
    return json.loads(raw)


def _assert_json_error(status: int, headers: dict, raw: bytes, expected: int, needle: str) -> None:
    assert status == expected, raw
    assert headers["content-type"].startswith("application/json")
    body = _json(raw)
    message = body["error"]["message"]
    assert body["error"]["status"] == expected
    assert "\n" not in message
    assert needle in message


# --- native ----------------------------------------------------------------------------------------------------


def test_healthz_and_openapi(api: ServeProcess):
    status, _, body = api.json("GET", "/healthz")
    assert status == 200 and body["status"] == "ok" and body["source"] == "replay"
    status, _, doc = api.json("GET", "/openapi.json")
    assert status == 200 and doc["openapi"].startswith("3.")
    operations = {(path, method) for path, methods in doc["paths"].items() for method in methods}
    assert operations == {
        ("/v1/search", "get"), ("/v1/search", "post"), ("/search", "get"), ("/tavily/search", "post"),
        ("/v1/read", "post"), ("/tavily/extract", "post"), ("/v1/scrape", "post"), ("/v2/scrape", "post"),
        ("/v2/search", "post"), ("/v1/context", "get"),
        ("/healthz", "get"), ("/metrics", "get"),
    }  # fmt: skip
    schemas = doc["components"]["schemas"]
    assert {"SearchRequest", "SearchResponse", "ReadRequest", "TavilyExtractRequest"} <= set(schemas)

    def body(path: str) -> dict:
        ref = doc["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        return schemas[ref.rsplit("/", 1)[1]]

    # The read routes' bodies, as the handlers enforce them.
    assert body("/v1/read")["required"] == ["url"] and body("/v1/read")["additionalProperties"] is False
    assert body("/v1/read")["properties"]["format"]["enum"] == ["markdown", "text", "html"]
    (batch,) = [u for u in body("/tavily/extract")["properties"]["urls"]["anyOf"] if u["type"] == "array"]
    assert batch["minItems"] == 1 and batch["maxItems"] == 20
    assert set(body("/v1/scrape")["properties"]["formats"]["items"]["enum"]) == {
        "markdown",
        "html",
        "rawHtml",
    }
    assert body("/v1/search")["properties"]["explain"]["type"] == "boolean"  # the flags beside the request
    errors = doc["paths"]["/v1/scrape"]["post"]["responses"]["422"]["content"]["application/json"]["schema"]
    assert errors["$ref"].endswith("/FirecrawlError")
    assert doc["paths"]["/healthz"]["get"]["security"] == []


def test_native_get_and_post_agree(api: ServeProcess):
    status, _, got = api.json("GET", f"/v1/search?q={Q}&limit=5")
    assert status == 200
    assert got["query"] == QUERY and 0 < len(got["results"]) <= 5
    row = got["results"][0]
    for key in ("url", "title", "snippet", "domain", "score", "evidenceScore", "engineRanks", "provenance"):
        assert key in row
    assert got["scoreVersion"].startswith("serpfuse-") and len(got["configFingerprint"]) == 16
    status, _, posted = api.json("POST", "/v1/search", {"query": QUERY, "limit": 5})
    assert status == 200
    assert [r["url"] for r in posted["results"]] == [r["url"] for r in got["results"]]


def test_native_second_call_is_cached_and_explain_lists_candidates(api: ServeProcess):
    body = {"query": QUERY, "limit": 3, "strategy": "rrf"}
    first = api.json("POST", "/v1/search", body)[2]
    second = api.json("POST", "/v1/search", body)[2]
    assert second["cached"] is True
    assert second == {**first, "cached": True}  # the stored bytes, sent as they are
    bypass = api.json("POST", "/v1/search", {**body, "cache": False})[2]
    assert bypass["cached"] is False
    explained = api.json("POST", "/v1/search", {**body, "explain": True})[2]
    cut = [c for c in explained["candidates"] if not c["selected"]]
    assert cut and all(c["cutBy"] and c["cutReason"] for c in cut)


def test_a_repeated_get_answers_as_a_freshly_parsed_post(api: ServeProcess):
    """A GET's query string is parsed once per process (issue 12's hit path): asked again, each one still
    answers as the same search posted as JSON, flags included, and a refused one is refused again."""
    cases = [
        (f"q={Q}&limit=4", {"query": QUERY, "limit": 4}),
        (f"q={Q}&limit=4&strategy=rrf", {"query": QUERY, "limit": 4, "strategy": "rrf"}),
        (f"q={Q}&limit=4&cache=false", {"query": QUERY, "limit": 4, "cache": False}),
        (f"q={Q}&limit=2&explain=true", {"query": QUERY, "limit": 2, "explain": True}),
    ]
    for query_string, body in cases:
        posted = api.json("POST", "/v1/search", body)[2]
        posted.pop("cached"), posted.pop("tookMs")
        for _ in range(2):
            got = api.json("GET", f"/v1/search?{query_string}")[2]
            assert got.pop("cached") is body.get("cache", True), query_string
            got.pop("tookMs")
            assert got == posted, query_string
    for _ in range(2):
        assert api.json("GET", f"/v1/search?q={Q}&limit=99")[0] == 400


# --- SearXNG shape -----------------------------------------------------------------------------------------------


def _type_name(value) -> str:
    return (
        "number" if isinstance(value, int | float) and not isinstance(value, bool) else type(value).__name__
    )


def test_searxng_shape_matches_a_real_searxng_response(api: ServeProcess, data_dir):
    reference = _json(need(data_dir / "api-json" / "searxng.json").read_bytes())
    status, headers, raw = api.get(f"/search?q={Q}&format=json")
    assert status == 200 and headers["content-type"].startswith("application/json")
    ours = _json(raw)
    # Top level: every key SearXNG sends, with the same JSON type.
    for key, value in reference.items():
        assert key in ours, key
        assert _type_name(ours[key]) == _type_name(value), key
    assert ours["query"] == QUERY and ours["number_of_results"] == len(ours["results"])
    # Results: every key present in every SearXNG result, with the same JSON type (nulls aside).
    common = set.intersection(*(set(r) for r in reference["results"]))
    assert {"url", "title", "content", "engine", "engines", "positions", "score", "parsed_url"} <= common
    assert ours["results"]
    previous = float("inf")
    for row in ours["results"]:
        for key in common:
            assert key in row, key
            if reference["results"][0][key] is not None:
                assert _type_name(row[key]) == _type_name(reference["results"][0][key]), key
        assert row["category"] == "general" and row["template"] == "default.html" and row["priority"] == ""
        assert row["engine"] == row["engines"][0]
        assert len(row["positions"]) == len(row["engines"]) and all(
            isinstance(p, int) and p >= 1 for p in row["positions"]
        )
        assert row["parsed_url"] == list(urlparse(row["url"]))
        assert row["publishedDate"] is None or re.match(r"\d{4}-\d\d-\d\d", row["publishedDate"])
        assert row["score"] <= previous  # clients re-sort on score; the order must survive that
        previous = row["score"]
    # Engines the recording marks unresponsive are reported as SearXNG does: [name, reason] pairs.
    pairs = ours["unresponsive_engines"]
    assert pairs and all(
        isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p) for p in pairs
    )
    assert "brave" in {name for name, _ in pairs}


def test_searxng_other_formats_and_pages(api: ServeProcess):
    status, headers, raw = api.get(f"/search?q={Q}&format=csv")
    _assert_json_error(status, headers, raw, 400, "format")
    status, headers, raw = api.get(f"/search?q={Q}&format=html")  # SearXNG's default: the page
    assert status == 200 and headers["content-type"].startswith("text/html")
    status, _, body = api.json("GET", f"/search?q={Q}&format=json&pageno=2")
    assert status == 200 and body["results"] == []


def test_searxng_ignores_engine_names_it_does_not_know_as_searxng_does(api: ServeProcess):
    status, _, body = api.json("GET", f"/search?q={Q}&format=json&engines=google,qwant")
    assert status == 200 and body["results"]
    assert all(r["engines"] == ["google"] for r in body["results"])
    status, _, body = api.json("GET", f"/search?q={Q}&format=json&engines=qwant")
    assert status == 200 and {e for r in body["results"] for e in r["engines"]} > {"google"}


# --- Tavily shape ------------------------------------------------------------------------------------------------


def test_tavily_shape(api: ServeProcess):
    status, _, body = api.json(
        "POST",
        "/tavily/search",
        {"api_key": "tvly-ignored", "query": QUERY, "max_results": 4, "search_depth": "basic"},
    )
    assert status == 200
    assert set(body) >= {
        "query",
        "answer",
        "images",
        "follow_up_questions",
        "response_time",
        "results",
        "request_id",
    }
    assert body["answer"] is None and body["images"] == [] and body["follow_up_questions"] is None
    assert isinstance(body["response_time"], float) and body["response_time"] >= 0
    assert isinstance(body["request_id"], str) and body["request_id"]
    assert 0 < len(body["results"]) <= 4
    for row in body["results"]:
        assert {"title", "url", "content", "score", "raw_content"} <= set(row)
        assert 0.0 <= row["score"] <= 1.0 and row["raw_content"] is None
    assert body["results"][0]["score"] == 1.0


def test_tavily_rejects_time_range_with_dates_like_tavily(api: ServeProcess):
    status, headers, raw = api.post(
        "/tavily/search", {"query": QUERY, "time_range": "week", "start_date": "2025-01-01"}
    )
    assert status == 400 and headers["content-type"].startswith("application/json")
    assert _json(raw) == {"detail": {"error": "When time_range is set, start_date or end_date cannot be set"}}
    status, _, raw = api.post("/tavily/search", {"query": QUERY, "max_results": 50})
    assert status == 400 and "max_results" in _json(raw)["detail"]["error"]


# --- bad input: always a 4xx with a JSON error, never a 500 ---------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "body", "expected", "needle"),
    [
        ("GET", "/v1/search?q=", None, 400, "query is empty"),
        ("POST", "/v1/search", {"query": "   "}, 400, "query is empty"),
        ("GET", f"/v1/search?q={Q}&engines=nope", None, 400, "unknown engine 'nope'"),
        ("POST", "/v1/search", {"query": QUERY, "strategy": "nope"}, 400, "unknown strategy"),
        ("POST", "/v1/search", {"query": QUERY, "dateFrom": "2025-13-40"}, 400, "date"),
        ("POST", "/v1/search", {"query": QUERY, "limit": 500}, 400, "limit"),
        ("POST", "/v1/search", {"query": QUERY, "bogus": 1}, 400, "bogus"),
        ("POST", "/v1/search", ["not", "an", "object"], 400, "JSON object"),
        ("GET", "/v1/search?q=" + "x" * 600, None, 400, "limit is 500"),
        ("GET", "/search?q=&format=json", None, 400, "query is empty"),
        ("GET", "/v1/search?q=not+in+the+recording", None, 404, "not in the recording"),
        ("GET", "/nowhere", None, 404, "Not Found"),
        ("DELETE", "/v1/search", None, 405, "Method Not Allowed"),
    ],
)
def test_bad_input_is_a_json_4xx(api: ServeProcess, method, path, body, expected, needle):
    if method == "POST":
        status, headers, raw = api.post(path, body)
    else:
        from redis_server import http

        status, headers, raw = http(method, api.base + path)
    _assert_json_error(status, headers, raw, expected, needle)


def test_invalid_json_and_huge_bodies(api: ServeProcess):
    status, headers, raw = api.post("/v1/search", None, raw=b"{not json")
    _assert_json_error(status, headers, raw, 400, "not valid JSON")
    huge = json.dumps({"query": QUERY, "region": "x" * 200_000}).encode()
    status, headers, raw = api.post("/v1/search", None, raw=huge)
    _assert_json_error(status, headers, raw, 413, "limit")
    status, _, raw = api.post("/tavily/search", None, raw=huge)
    assert status == 413 and "limit" in _json(raw)["detail"]["error"]


def test_metrics_count_requests_and_cache_and_never_a_500(api: ServeProcess):
    api.json("GET", f"/v1/search?q={Q}&limit=2")
    api.json("GET", f"/v1/search?q={Q}&limit=2")
    status, headers, raw = api.get("/metrics")
    assert status == 200 and headers["content-type"].startswith("text/plain")
    text = raw.decode()
    assert re.search(r'^serpfuse_http_requests_total\{route="native",status="200"\} [1-9]', text, re.M)
    assert re.search(r'^serpfuse_cache_requests_total\{result="hit"\} [1-9]', text, re.M)
    assert re.search(r'^serpfuse_engine_answers_total\{engine="google",status="ok"\} [1-9]', text, re.M)
    assert re.search(r'^serpfuse_http_request_duration_seconds_count\{route="native"\} [1-9]', text, re.M)
    assert 'status="500"' not in text


# --- token and rate limit --------------------------------------------------------------------------------------------


def test_bearer_token_is_required_when_set(recording, tmp_path):
    with start_serpfuse(tmp_path, ["--replay", str(recording)], env={"SERPFUSE_API_TOKEN": TOKEN}) as server:
        status, headers, raw = server.get(f"/v1/search?q={Q}")
        _assert_json_error(status, headers, raw, 401, "bearer token")
        assert headers["www-authenticate"].lower().startswith("bearer")
        status, _, _ = server.get(f"/v1/search?q={Q}", headers={"Authorization": "Bearer wrong"})
        assert status == 401
        status, _, raw = server.post(
            "/tavily/search", {"query": QUERY}, headers={"Authorization": "Bearer tvly-x"}
        )
        assert status == 401 and "bearer token" in _json(raw)["detail"]["error"]
        ok = {"Authorization": f"Bearer {TOKEN}"}
        assert server.get(f"/v1/search?q={Q}", headers=ok)[0] == 200
        assert server.post("/tavily/search", {"query": QUERY}, headers=ok)[0] == 200
        assert server.get("/metrics")[0] == 401
        assert server.get("/healthz")[0] == 200  # probes need no token


def test_refuses_a_non_loopback_host_without_a_token():
    # Checked as a function: the tests never listen beyond loopback.
    with pytest.raises(ConfigError, match="SERPFUSE_API_TOKEN"):
        check_bind("0.0.0.0", None)
    with pytest.raises(ConfigError):
        check_bind("192.168.1.10", "")
    check_bind("0.0.0.0", TOKEN)
    for host in ("127.0.0.1", "localhost", "::1", "127.0.0.2"):
        assert is_loopback(host)
        check_bind(host, None)
    assert not is_loopback("example.com")


def test_rate_limit_allows_a_bounded_burst_then_429(recording, tmp_path):
    # A loopback caller is limited only when asked (test_rate_limit has the default).
    env = {
        "SERPFUSE_RATE_LIMIT_BURST": "3",
        "SERPFUSE_RATE_LIMIT_PER_MIN": "1",
        "SERPFUSE_RATE_LIMIT_LOOPBACK": "1",
    }
    with start_serpfuse(tmp_path, ["--replay", str(recording)], env=env) as server:
        results = [server.get(f"/v1/search?q={Q}") for _ in range(6)]
        codes = [r[0] for r in results]
        assert codes == [200, 200, 200, 429, 429, 429], codes
        status, headers, raw = results[3]
        _assert_json_error(status, headers, raw, 429, "rate limit")
        assert int(headers["retry-after"]) >= 1
        assert server.get("/healthz")[0] == 200  # probes are not rate limited
