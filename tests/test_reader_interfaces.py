"""The reader through every interface: a real `serpfuse serve` process (POST /v1/read, /tavily/extract,
include_raw_content on /tavily/search, /v1/scrape) and a real `serpfuse mcp` over stdio (read_url with
max_chars and a continuation offset), both reading a loopback page server with loopback allowed by the setting.

The search answers come from a small SearXNG-format recording whose rows point at the loopback page server, so
nothing is ever fetched beyond 127.0.0.1; every other port is refused by the reader's port setting.
"""

from __future__ import annotations

import json
import sys

import pytest
from mcp import Client, StdioServerParameters

from fakeserver import FakeServer, Reply
from redis_server import CLI, isolated_env, start_serpfuse, stop
from test_reader_extract import minimal_pdf
from test_reader_fetch import ARTICLE, HTML

QUERY = "harbour pontoon berths news"


@pytest.fixture(scope="module")
def pages():
    with FakeServer(lifetime_s=600) as srv:
        srv.route("/robots.txt", Reply(404, {"Content-Type": "text/plain"}, b""))
        srv.route("/story", Reply(200, HTML, ARTICLE))
        srv.route("/story2", Reply(200, HTML, ARTICLE.replace(b"Harbour news", b"Pontoon works")))
        srv.route(
            "/paper.pdf", Reply(200, {"Content-Type": "application/pdf"}, minimal_pdf("Harbour PDF report"))
        )
        srv.route("/photo", Reply(200, {"Content-Type": "image/png"}, b"\x89PNG" + bytes(64)))
        yield srv


def _recording(tmp_path, base: str):
    rows = [
        {"url": f"{base}/story", "title": "Harbour news: berths and the new pontoon",
         "content": "The harbour pontoon opens in spring; berths news from the harbour master.",
         "engines": ["bing", "brave"], "positions": [1, 1]},
        {"url": f"{base}/story2", "title": "Pontoon works delay harbour berths",
         "content": "Harbour news: winter storms delayed the pontoon and berths work.",
         "engines": ["bing", "brave"], "positions": [2, 2]},
    ]  # fmt: skip
    path = tmp_path / "harbour.json"
    path.write_text(json.dumps([{"query": QUERY, "results": rows, "unresponsive": []}]))
    return path


def _env(port: int) -> dict[str, str]:
    return {
        "SERPFUSE_RATE_LIMIT_BURST": "10000",
        "SERPFUSE_READ_ALLOW_LOOPBACK": "1",
        "SERPFUSE_READ_PORTS": str(port),  # 80/443 refused: no public page can be fetched from here
        "SERPFUSE_MAX_BODY_BYTES": "262144",  # room for a 70,000-character host to reach the reader
    }


@pytest.fixture(scope="module")
def api(pages, tmp_path_factory):
    home = tmp_path_factory.mktemp("reader-api")
    server = start_serpfuse(home, ["--replay", str(_recording(home, pages.url))], env=_env(pages.port))
    yield server
    stop(server.proc)


def test_native_read(api, pages):
    status, _, body = api.json("POST", "/v1/read", {"url": f"{pages.url}/story"})
    assert status == 200, body
    assert body["title"] == "Harbour news" and body["content"].startswith("# Harbour news")
    assert (
        "berths, tides" in body["text"]
        and body["kind"] == "html"
        and body["finalUrl"] == f"{pages.url}/story"
    )
    status, _, body = api.json("POST", "/v1/read", {"url": f"{pages.url}/story", "format": "text"})
    assert status == 200 and not body["content"].startswith("#")
    status, _, body = api.json("POST", "/v1/read", {"url": f"{pages.url}/paper.pdf"})
    assert status == 200 and "Harbour PDF report" in body["content"] and body["kind"] == "pdf"


@pytest.mark.parametrize(
    ("payload", "status", "needle"),
    [({"url": "http://127.0.0.1/", "allowLoopback": True}, 400, "unknown field 'allowLoopback'"),
     ({"url": "http://169.254.169.254:PORT/latest/meta-data/"}, 422, "link-local"),
     ({"url": "http://[::ffff:10.0.0.1]:PORT/"}, 422, "private"),
     ({"url": "https://example.com/"}, 422, "port 443"),
     ({"url": "gopher://x/"}, 422, "only http and https"),
     ({"url": ""}, 400, "url must be"),
     ({"url": "PAGE/photo"}, 422, "unsupported content type image/png"),
     ({"url": "PAGE/missing"}, 502, "HTTP 404"),
     ({"url": "PAGE/story", "format": "pdf"}, 400, "format must be")],
)  # fmt: skip
def test_native_read_errors_are_one_line_json(api, pages, payload, status, needle):
    def fill(v):
        return v.replace("PAGE", pages.url).replace("PORT", str(pages.port)) if isinstance(v, str) else v

    payload = {k: fill(v) for k, v in payload.items()}
    got, _, body = api.json("POST", "/v1/read", payload)
    assert got == status, body
    assert needle in body["error"]["message"] and "\n" not in body["error"]["message"]


def test_tavily_extract(api, pages):
    status, _, body = api.json(
        "POST",
        "/tavily/extract",
        {"urls": [f"{pages.url}/story", f"http://10.0.0.1:{pages.port}/x"], "include_favicon": True},
    )
    assert status == 200, body
    (ok,) = body["results"]
    assert ok["url"] == f"{pages.url}/story" and ok["raw_content"].startswith("# Harbour news")
    assert ok["favicon"] == f"{pages.url}/favicon.ico" and ok["images"] == []
    (failed,) = body["failed_results"]
    assert failed["url"] == f"http://10.0.0.1:{pages.port}/x" and "private" in failed["error"]
    assert isinstance(body["response_time"], float) and body["request_id"]
    status, _, body = api.json("POST", "/tavily/extract", {"urls": []})
    assert status == 400 and "urls" in body["detail"]["error"]


# Hosts no resolver can encode, and characters no HTTP client sends: each is refused before any lookup (the
# resolver would fail on them locally, so none of these sends a packet even if the refusal regressed).
HOSTILE_URLS = {
    "empty label": "http://a..b:PORT/",
    "70,000-character host": "http://" + "a" * 70_000 + ":PORT/",
    "U+2029 in the host": "http://a\u2029b:PORT/",
    "a lone surrogate in the host": "http://\udcff:PORT/",
    "a control character in the path": "PAGE/story\x7f",
}
HOSTILE_NEEDLE = "not a valid URL"


def _message(route: str, body: dict) -> str:
    return {"read": lambda: body["error"]["message"], "tavily": lambda: body["detail"]["error"],
            "firecrawl": lambda: body["error"]}[route]()  # fmt: skip


@pytest.mark.parametrize("url", HOSTILE_URLS.values(), ids=HOSTILE_URLS.keys())
@pytest.mark.parametrize(
    ("path", "route", "field"),
    [("/v1/read", "read", "url"), ("/tavily/extract", "tavily", "urls"), ("/v1/scrape", "firecrawl", "url")],
)
def test_hostile_urls_are_a_one_line_4xx_on_every_read_route(api, pages, path, route, field, url):
    url = url.replace("PAGE", pages.url).replace("PORT", str(pages.port))
    raw = json.dumps({field: url}, ensure_ascii=True).encode()  # the surrogate as JSON's \u escape
    status, _, body = api.post(path, None, raw=raw)
    if "\udcff" in url:  # refused as the body is read: a lone surrogate is no text at all
        assert status == 400, body
        message = _message(route, json.loads(body))
        assert "lone surrogate" in message and "\n" not in message
    elif path == "/tavily/extract":  # a batch answers 200 and names each URL it could not read
        assert status == 200, body
        (failed,) = json.loads(body)["failed_results"]
        assert failed["url"] == url and HOSTILE_NEEDLE in failed["error"] and "\n" not in failed["error"]
    else:
        assert status == 422, body
        message = _message(route, json.loads(body))
        assert HOSTILE_NEEDLE in message and "\n" not in message and len(message) < 200


def test_a_tavily_extract_batch_keeps_the_good_urls_when_some_are_hostile(api, pages):
    hostile = [u.replace("PAGE", pages.url).replace("PORT", str(pages.port)) for u in HOSTILE_URLS.values()]
    hostile = [u for u in hostile if "\udcff" not in u]
    good = [f"{pages.url}/story", f"{pages.url}/story2"]
    status, _, body = api.json("POST", "/tavily/extract", {"urls": [good[0], *hostile, good[1]]})
    assert status == 200, body
    assert [r["url"] for r in body["results"]] == good
    assert [f["url"] for f in body["failed_results"]] == hostile
    assert all(HOSTILE_NEEDLE in f["error"] for f in body["failed_results"])


@pytest.mark.parametrize(
    ("path", "route"), [("/v1/read", "read"), ("/tavily/extract", "tavily"), ("/v1/scrape", "firecrawl")]
)
@pytest.mark.parametrize(
    "raw", [b'{"url": ', b"[1, 2]", b'"http://a/"', b"\xff\xfe", b'{"url": 1, "urls": {"a": 1}}', b"null"]
)
def test_malformed_bodies_are_a_one_line_400_on_every_read_route(api, path, route, raw):
    status, _, body = api.post(path, None, raw=raw)
    assert status == 400, body
    message = _message(route, json.loads(body))
    assert message and "\n" not in message


def test_tavily_search_include_raw_content_reads_the_results(api, pages):
    status, _, body = api.json("POST", "/tavily/search", {"query": QUERY, "include_raw_content": True})
    assert status == 200, body
    raw = {r["url"]: r["raw_content"] for r in body["results"]}
    assert raw[f"{pages.url}/story"].startswith("# Harbour news")
    assert raw[f"{pages.url}/story2"].startswith("# Pontoon works")
    status, _, body = api.json("POST", "/tavily/search", {"query": QUERY, "include_raw_content": "text"})
    assert all(r["raw_content"] and not r["raw_content"].startswith("#") for r in body["results"])
    status, _, body = api.json("POST", "/tavily/search", {"query": QUERY})
    assert all(r["raw_content"] is None for r in body["results"])


def test_firecrawl_scrape(api, pages):
    status, _, body = api.json(
        "POST", "/v1/scrape", {"url": f"{pages.url}/story", "formats": ["markdown", "html"]}
    )
    assert status == 200, body
    assert body["success"] is True and body["data"]["markdown"].startswith("# Harbour news")
    assert body["data"]["html"].startswith("<article>")
    meta = body["data"]["metadata"]
    assert (
        meta["title"] == "Harbour news"
        and meta["sourceURL"] == f"{pages.url}/story"
        and meta["statusCode"] == 200
    )
    status, _, body = api.json("POST", "/v1/scrape", {"url": f"{pages.url}/story", "formats": ["screenshot"]})
    assert (
        status == 400 and body == {"success": False, "error": body["error"]} and "screenshot" in body["error"]
    )
    status, _, body = api.json("POST", "/v1/scrape", {"url": "http://127.0.0.2:1/"})
    assert status == 422 and body["success"] is False and "port 1" in body["error"]


async def test_mcp_read_url_over_stdio_in_pieces(pages, tmp_path):
    env = {**isolated_env(tmp_path), **_env(pages.port)}
    params = StdioServerParameters(
        command=sys.executable, args=["-c", CLI, "mcp", "--no-cache"], env=env, cwd=str(tmp_path)
    )
    async with Client(params) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        first = await client.call_tool("read_url", {"url": f"{pages.url}/story", "max_chars": 500})
        pieces = [first.structured_content]
        while pieces[-1]["nextOffset"] is not None and len(pieces) < 10:
            more = await client.call_tool(
                "read_url",
                {"url": f"{pages.url}/story", "max_chars": 500, "offset": pieces[-1]["nextOffset"]},
            )
            pieces.append(more.structured_content)
        refused = await client.call_tool("read_url", {"url": f"http://169.254.169.254:{pages.port}/"})
    assert "read_url" in names
    one = pieces[0]
    assert one["offset"] == 0 and one["nextOffset"] == 500 and len(one["content"]) == 500
    assert "offset=500" in first.content[0].text and one["title"] == "Harbour news"
    assert len(pieces) == 3 and [p["offset"] for p in pieces] == [0, 500, 1000]
    whole = "".join(p["content"] for p in pieces)
    assert (
        len(whole) == one["totalChars"] and whole.startswith("# Harbour news") and whole.endswith("the work.")
    )
    assert refused.is_error and "link-local" in refused.content[0].text
    assert "\n" not in refused.content[0].text


def test_search_read_fetches_the_top_pages_within_the_deadline(pages, tmp_path):
    import subprocess

    recording = _recording(tmp_path, pages.url)
    env = {**isolated_env(tmp_path), **_env(pages.port)}
    cmd = [sys.executable, "-c", CLI, "search", QUERY, "--replay", str(recording), "--no-cache"]
    proc = subprocess.run(
        [*cmd, "--read", "2", "--json"], capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    read = {p["url"]: p for p in out["pages"]}
    assert read[f"{pages.url}/story"]["markdown"].startswith("# Harbour news")
    assert (
        read[f"{pages.url}/story2"]["title"] == "Pontoon works"
        and read[f"{pages.url}/story2"]["error"] is None
    )
    table = subprocess.run([*cmd, "--read", "1"], capture_output=True, text=True, env=env, timeout=120)
    assert table.returncode == 0 and "berths, tides" in table.stdout
    # a deadline already spent: the pages say so, the search still answers
    late = subprocess.run([*cmd, "--read", "2", "--json", "--deadline", "0.001"], capture_output=True, text=True,
                          env=env, timeout=120)  # fmt: skip
    if late.returncode == 0:
        assert all(
            p["markdown"] is None and "deadline" in p["error"] for p in json.loads(late.stdout)["pages"]
        )
