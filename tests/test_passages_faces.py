"""Passages through every face, on pages served from 127.0.0.1 only.

A real `serpfuse serve` (native /v1/search and /v1/context, Tavily's advanced search and /extract with a query
through tavily-python, Firecrawl's highlights through firecrawl-py), a real `serpfuse mcp` over stdio (web_search
with passages, read_url with a query), the CLI (search --passages, read --query) and the Python API. The search
answers come from a SearXNG-format recording whose rows are the loopback page server's pages: one article that
answers the query deep in its text, and one page for each way a page can fail (slow, 403, a bot check, an empty
JavaScript shell, robots.txt, not text). The reader may read loopback on that server's port only.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from mcp import Client, StdioServerParameters

from fakeserver import FakeServer, Reply
from redis_server import CLI, isolated_env, start_serpfuse, stop

QUERY = "when does the harbour pontoon open"
ANSWER = "The new pontoon opens to boats on 14 May 2027, the harbour master said."
HTML = {"Content-Type": "text/html; charset=utf-8"}
FILLER = (
    "<p>The town council met on Tuesday evening to discuss the budget for the coming year, the state of the "
    "roads and the plans for the library, which has been closed since the storms of last winter.</p>"
)
STORY = (
    "<html><head><title>Harbour news</title><meta name='date' content='2026-11-02'></head><body><article>"
    "<h1>Harbour news</h1>"
    + FILLER
    * 6
    + "<h2>The pontoon</h2><p>Work on the harbour pontoon went on through "
    "the autumn despite the weather. "
    + ANSWER
    + " Berths can be booked from April.</p>"
    + FILLER * 4
    + "</article>"
    "</body></html>"
).encode()
CHALLENGE = (
    b"<!DOCTYPE html><html><head><title>Just a moment...</title>"
    b"<script src='/cdn-cgi/challenge-platform/h/b/orchestrate/chl_page/v1'></script></head><body>"
    b"<div id='challenge-form'><h1>Checking your browser before accessing harbour.example</h1>"
    b"<p>This process is automatic. Your browser will redirect to your requested content shortly.</p></div>"
    b"</body></html>"
)
SHELL = (
    b"<!doctype html><html><head><title>Harbour app</title><script src='/static/js/main.js'></script></head>"
    b"<body><noscript>You need to enable JavaScript to run this app.</noscript><div id='root'></div></body></html>"
)
PATHS = {
    "/story": "ok",
    "/slow": "timeout",
    "/blocked": "blocked",
    "/challenge": "challenge",
    "/shell": "js_shell",
    "/private/notes": "robots",
    "/photo": "not_text",
}
SLOW_S = 8.0
PASSAGES_DEADLINE_S = "3"


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch):
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


@pytest.fixture(scope="module")
def pages():
    with FakeServer(lifetime_s=900, max_requests=100_000) as srv:
        srv.route(
            "/robots.txt", Reply(200, {"Content-Type": "text/plain"}, b"User-agent: *\nDisallow: /private\n")
        )
        srv.route("/story", Reply(200, HTML, STORY))
        srv.route("/slow", Reply(200, HTML, STORY, delay_s=SLOW_S))
        srv.route("/blocked", Reply(403, HTML, b"<html><body>Forbidden</body></html>"))
        srv.route("/challenge", Reply(200, HTML, CHALLENGE))
        srv.route("/shell", Reply(200, HTML, SHELL))
        srv.route("/private/notes", Reply(200, HTML, STORY))
        srv.route("/photo", Reply(200, {"Content-Type": "image/png"}, b"\x89PNG" + bytes(64)))
        yield srv


def _recording(folder, base: str):
    rows = [
        {
            "url": f"{base}{path}",
            "title": f"Harbour pontoon news {i}",
            "content": f"The harbour pontoon opens soon; snippet {i} from the harbour master.",
            "engines": ["bing", "brave"],
            "positions": [i, i],
        }
        for i, path in enumerate(PATHS, start=1)
    ]
    path = folder / "harbour.json"
    path.write_text(json.dumps([{"query": QUERY, "results": rows, "unresponsive": []}]))
    return path


def _env(port: int) -> dict[str, str]:
    return {
        "SERPFUSE_RATE_LIMIT_BURST": "10000",
        "SERPFUSE_READ_ALLOW_LOOPBACK": "1",
        "SERPFUSE_READ_PORTS": str(port),
        "SERPFUSE_PASSAGES_DEADLINE_S": PASSAGES_DEADLINE_S,
    }


@pytest.fixture(scope="module")
def api(pages, tmp_path_factory):
    home = tmp_path_factory.mktemp("passages-api")
    server = start_serpfuse(home, ["--replay", str(_recording(home, pages.url))], env=_env(pages.port))
    # the server's extraction workers start on its first page (they import the extractors): not under a deadline
    status, _, body = server.json("POST", "/v1/read", {"url": f"{pages.url}/story?warm", "cache": False})
    assert status == 200, body
    yield server
    stop(server.proc)


def _by_path(rows: list[dict], base: str) -> dict[str, dict]:
    return {r["url"].removeprefix(base): r for r in rows}


def _page_text(api, url: str) -> str:
    status, _, body = api.json("POST", "/v1/read", {"url": url, "format": "text"})
    assert status == 200, body
    return body["text"]


def test_native_search_gives_each_row_its_passages_or_why_not(api, pages):
    started = time.monotonic()
    status, _, body = api.json("GET", f"/v1/search?q={QUERY.replace(' ', '+')}&passages=true&max_chars=300")
    took = time.monotonic() - started
    assert status == 200, body
    rows = _by_path(body["results"], pages.url)
    assert set(rows) == set(PATHS)
    for path, want in PATHS.items():
        row = rows[path]
        if want == "ok":
            assert row["passagesStatus"] is None and row["passages"]
        else:  # no passages, the reason, and the engine's snippet kept
            assert row["passages"] is None and row["passagesStatus"] == want, (path, row)
            assert row["snippet"].startswith("The harbour pontoon opens soon")
    story = rows["/story"]
    assert sum(p["end"] - p["start"] for p in story["passages"]) <= 300
    assert any(ANSWER in p["text"] for p in story["passages"])
    assert [p["start"] for p in story["passages"]] == sorted(p["start"] for p in story["passages"])
    text = _page_text(api, f"{pages.url}/story")
    assert all(text[p["start"] : p["end"]] == p["text"] for p in story["passages"])
    assert story["dateSource"] == "page" and story["published"].startswith("2026-11-02")
    assert any("gave no passages" in w for w in body["warnings"])
    assert took < SLOW_S  # the slow page was given up at the passages deadline, not waited for


def test_post_search_with_passages_and_a_plain_search_says_nothing_of_them(api, pages):
    status, _, body = api.json("POST", "/v1/search", {"query": QUERY, "passages": True, "maxChars": 200})
    assert status == 200, body
    story = _by_path(body["results"], pages.url)["/story"]
    assert sum(p["end"] - p["start"] for p in story["passages"]) <= 200
    status, _, plain = api.json("GET", f"/v1/search?q={QUERY.replace(' ', '+')}")
    assert status == 200
    assert not {"passages", "passagesStatus", "dateSource", "dateConflict"} & set(plain["results"][0])


@pytest.mark.parametrize(
    ("path", "needle"),
    [
        ("/v1/search?q=harbour&passages=true&max_chars=5", "max_chars"),
        ("/v1/context?q=harbour&max_chars=abc", "max_chars must be a whole number"),
        ("/v1/context?q=harbour&max_chars=50", "max_chars must be between"),
        ("/v1/context?q=harbour&budget=300", "unknown parameter 'budget'"),
    ],
)
def test_bad_passage_input_is_a_one_line_400(api, path, needle):
    status, _, body = api.json("GET", path)
    assert status == 400, body
    assert needle in body["error"]["message"] and "\n" not in body["error"]["message"]


def test_context_gives_the_best_passages_across_pages_under_one_budget(api, pages):
    status, _, body = api.json("GET", f"/v1/context?q={QUERY.replace(' ', '+')}&max_chars=400")
    assert status == 200, body
    assert body["query"] == QUERY and body["maxChars"] == 400 and 0 < body["chars"] <= 400
    assert body["results"][0]["url"] == f"{pages.url}/story"
    assert any(ANSWER in p["text"] for r in body["results"] for p in r["passages"])
    unread = {u["url"].removeprefix(pages.url): u["status"] for u in body["unread"]}
    assert unread == {p: s for p, s in PATHS.items() if s != "ok"}


def test_tavily_python_advanced_search_and_extract_with_a_query(api, pages):
    from tavily import TavilyClient

    client = TavilyClient(api_key="tvly-local", api_base_url=api.base + "/tavily")
    found = client.search(QUERY, search_depth="advanced", chunks_per_source=1, max_results=8)
    rows = _by_path(found["results"], pages.url)
    assert ANSWER in rows["/story"]["content"] and len(rows["/story"]["content"]) <= 500
    assert rows["/blocked"]["content"].startswith("The harbour pontoon opens soon")  # the snippet, kept
    basic = client.search(QUERY, max_results=8)
    assert _by_path(basic["results"], pages.url)["/story"]["content"].startswith(
        "The harbour pontoon opens soon"
    )
    extracted = client.extract([f"{pages.url}/story"], query=QUERY, chunks_per_source=1)
    (row,) = extracted["results"]
    assert ANSWER in row["raw_content"] and len(row["raw_content"]) <= 500


def test_firecrawl_py_search_with_highlights(api, pages):
    from firecrawl import Firecrawl
    from firecrawl.v2.types import ScrapeOptions

    found = Firecrawl(api_url=api.base).search(
        # firecrawl-py makes a Document of a row only when it has one of the formats it knows, markdown here
        QUERY,
        limit=1,
        scrape_options=ScrapeOptions(formats=["markdown", {"type": "highlights", "query": QUERY}]),
    )
    (doc,) = found.web
    assert doc.metadata.source_url == f"{pages.url}/story" and ANSWER in doc.highlights
    assert len(doc.highlights) <= 1500 and doc.markdown.startswith("# Harbour news")


async def test_mcp_web_search_with_passages_and_read_url_with_a_query(pages, tmp_path):
    recording = _recording(tmp_path, pages.url)
    env = {**isolated_env(tmp_path), **_env(pages.port), "SERPFUSE_REPLAY": str(recording)}
    params = StdioServerParameters(
        command=sys.executable, args=["-c", CLI, "mcp", "--no-cache"], env=env, cwd=str(tmp_path)
    )
    async with Client(params) as client:
        # first, as the extraction workers start on the first page read (not under the passages deadline)
        read = await client.call_tool(
            "read_url", {"url": f"{pages.url}/story", "query": QUERY, "max_chars": 600}
        )
        searched = await client.call_tool("web_search", {"query": QUERY, "passages": True, "max_chars": 8000})
        plain = await client.call_tool("web_search", {"query": QUERY})
    assert not searched.is_error, searched.content
    rows = _by_path(searched.structured_content["results"], pages.url)
    assert "passages" in rows["/story"], rows["/story"]
    assert any(ANSWER in p for p in rows["/story"]["passages"])
    assert rows["/challenge"]["passagesStatus"] == "challenge" and "passages" not in rows["/challenge"]
    assert ANSWER in searched.content[0].text and "no passages: js_shell" in searched.content[0].text
    assert "passages" not in plain.structured_content["results"][0]
    out = read.structured_content
    assert ANSWER in out["content"] and len(read.content[0].text) <= 600
    assert out["query"] == QUERY and all(p["end"] > p["start"] for p in out["passages"])


def _cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", CLI, *args], capture_output=True, text=True, env=env, timeout=120
    )


def test_cli_search_with_passages(pages, tmp_path):
    recording = _recording(tmp_path, pages.url)
    env = {**isolated_env(tmp_path), **_env(pages.port)}
    base = ["search", QUERY, "--replay", str(recording), "--no-cache"]
    proc = _cli([*base, "--passages", "--max-chars", "300", "--json"], env)
    assert proc.returncode == 0, proc.stderr
    rows = _by_path(json.loads(proc.stdout)["results"], pages.url)
    assert any(ANSWER in p["text"] for p in rows["/story"]["passages"])
    assert rows["/shell"]["passagesStatus"] == "js_shell"
    explained = _cli([*base, "--passages", "--max-chars", "300", "--explain", "--json"], env)
    story = _by_path(json.loads(explained.stdout)["results"], pages.url)["/story"]
    assert all(p["why"] for p in story["passages"])  # why each passage won
    assert any("pontoon" in p["why"] and p["heading"] == "The pontoon" for p in story["passages"])
    table = _cli([*base, "--passages", "--max-chars", "300"], {**env, "COLUMNS": "200"})
    assert table.returncode == 0, table.stderr
    assert "14 May 2027" in table.stdout and "no passages: challenge" in table.stdout
    bad = _cli([*base, "--passages", "--max-chars", "7"], env)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "max_chars" in bad.stderr


def test_cli_read_a_url_and_a_file_with_a_query(pages, tmp_path):
    env = {**isolated_env(tmp_path), **_env(pages.port)}
    page = tmp_path / "story.html"
    page.write_bytes(STORY)
    proc = _cli(
        ["read", f"{pages.url}/story", str(page), "--query", QUERY, "--max-chars", "250", "--json"], env
    )
    assert proc.returncode == 0, proc.stderr
    url_row, file_row = (json.loads(line) for line in proc.stdout.splitlines())
    for row in (url_row, file_row):
        assert any(ANSWER in p["text"] for p in row["passages"])
        assert sum(p["end"] - p["start"] for p in row["passages"]) <= 250 and "content" not in row
    text = _cli(["read", str(page), "--format", "text", "--json"], env)
    whole = json.loads(text.stdout)["text"]
    assert all(whole[p["start"] : p["end"]] == p["text"] for p in file_row["passages"])
    shell = _cli(["read", f"{pages.url}/shell", "--query", QUERY], env)
    assert shell.returncode == 2 and "JavaScript shell" in shell.stderr and not shell.stdout
    bad = _cli(["read", str(page), "--max-chars", "300"], env)
    assert bad.returncode == 2 and "--max-chars needs --query" in bad.stderr


def test_python_search_with_passages(pages, tmp_path):
    import serpfuse
    from serpfuse.reader.guard import Policy
    from serpfuse.reader.service import Reader

    reader = Reader(policy=Policy(allow_loopback=True, ports=frozenset({pages.port})))
    recording = _recording(tmp_path, pages.url)
    started = time.monotonic()
    resp = serpfuse.search(
        QUERY, replay=recording, passages=True, max_chars=300, reader=reader, deadline_s=3.0
    )
    took = time.monotonic() - started
    rows = {r.url.removeprefix(pages.url): r for r in resp.results}
    assert rows["/story"].passages, [(u, r.passages_status) for u, r in rows.items()]
    assert any(ANSWER in p.text for p in rows["/story"].passages)
    assert rows["/slow"].passages is None and rows["/slow"].passages_status == "timeout"
    assert rows["/blocked"].passages_status == "blocked" and rows["/blocked"].snippet
    assert took < SLOW_S  # the deadline (3 s) + 2 s, not the slow page's 8 s
