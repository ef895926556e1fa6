"""What goes on the wire, search after search: every engine on a capture server of its own (its base-URL setting,
as a user sets it), a fake key for every keyed engine and a password in searxng's base URL, several searches in
one process with engines asked in varied sets and orders, through each client the transport can send with.

A client that reuses a handle or connection must send each request's own headers, never an earlier one's: a
reused libcurl handle once kept every earlier request's header lines, so API keys reached other engines' hosts
and each engine's requests grew search after search. Checked here on the requests as the servers read them:
- every header name appears once in a request;
- an engine's requests carry the same header names on every search (per page asked, per browser release);
- each key and the password reach only their own engine's server;
- none of them shows in the logs (any level), the answers, ``serpfuse engines --json``, the cache's files or
  ``serpfuse serve``'s /metrics page (after the searches and one more through its HTTP API).

The page reader, which goes on the wire page after page and from one site to another, is checked the same way
further down (its own capture servers; the engines' secrets configured and asked in the same process).
"""

from __future__ import annotations

import base64
import json
import logging
import os
import random
from collections import defaultdict
from contextlib import ExitStack
from pathlib import Path

import pytest

from fakeserver import FakeServer, Reply, Seen
from serpfuse.engines import ENGINES, base_url_env
from serpfuse.settings import load_settings
from test_engines_base_url import answer

PASSWORD = "pw-searxng-9f3e1c"
SEARCHES = 4
QUERIES = ("rust async runtime", "tokio scheduler", "python asyncio tasks", "curl handle reuse")


def key_of(engine: str) -> str:
    return f"key-{engine}-{engine[::-1]}-0123456789"


def secrets_of(engine: str) -> list[str]:
    """What only ``engine``'s server may see: its key (and, for searxng, the base URL's password, also as the
    Basic credentials carry it)."""
    found = [key_of(engine)] if ENGINES[engine].INFO.needs_key or ENGINES[engine].INFO.accepts_key else []
    if engine == "searxng":
        found += [PASSWORD, base64.b64encode(f"user:{PASSWORD}".encode()).decode()]
    return found


def wire_text(seen: Seen) -> str:
    """A request as its server read it: the target, every header line, the body."""
    lines = "\n".join(f"{name}: {value}" for name, value in seen.lines)
    return f"{seen.method} {seen.target}\n{lines}\n\n{seen.body.decode('latin-1')}"


def shape(seen: Seen) -> tuple[str, str, str, str]:
    """What a request's header set is compared within: the page asked (a JSON-RPC call's method: an MCP
    session's first call carries no session id, its later ones do), and the browser release sending it (each
    impersonated release has its own headers; a request picks one at random)."""
    agent = next((v for k, v in seen.lines if k.lower() == "user-agent"), "")
    try:
        step = json.loads(seen.body).get("method", "") if seen.body.startswith(b"{") else ""
    except ValueError:
        step = ""
    return seen.method, seen.path, step, agent


@pytest.fixture
def engine_servers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """One capture server per engine, each on its own loopback address (so a browser's cookie jar sees
    separate hosts, as it would the engines), every engine's base URL and key set in the environment."""
    for name in list(os.environ):
        if name.startswith("SERPFUSE_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("SERPFUSE_CONFIG", "")
    monkeypatch.setenv("SERPFUSE_KEYS_FILE", str(tmp_path / "no-keys.json"))
    monkeypatch.setenv("SERPFUSE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    with ExitStack() as stack:
        servers: dict[str, FakeServer] = {}
        for number, engine in enumerate(sorted(ENGINES), start=2):
            server = stack.enter_context(FakeServer(lifetime_s=120, host=f"127.0.0.{number}"))
            server.route_prefix("/", answer)
            servers[engine] = server
            url = server.url
            if engine == "searxng":
                url = url.replace("http://", f"http://user:{PASSWORD}@")
            monkeypatch.setenv(base_url_env(engine), url)
            info = ENGINES[engine].INFO
            if info.needs_key or info.accepts_key:
                monkeypatch.setenv(info.key_envs[0], key_of(engine))
        yield servers


def search_plan(seed: int) -> list[tuple[str, list[str]]]:
    """The category and engines of each search, in varied sets and orders: every engine at least twice, web
    and news searches interleaved on the same clients."""
    rng = random.Random(seed)
    plan = []
    for category in ("general", "news"):
        names = sorted(n for n, m in ENGINES.items() if m.INFO.category == category)
        for number in range(SEARCHES):
            chosen = names[:] if number % 2 == 0 else rng.sample(names, k=len(names) // 2 + 1)
            rng.shuffle(chosen)
            plan.append((category, chosen))
    rng.shuffle(plan)
    return plan


async def through_the_http_api(service, seed: int) -> list[str]:
    """One more search through ``serpfuse serve``'s HTTP API on the same service (every engine of a category,
    each counted by /metrics), then its /metrics page: both bodies, for the channels the secrets must not show
    in."""
    import httpx2

    from serpfuse.serve.http_api import create_app

    category, engines = search_plan(seed)[0]
    params = {"q": QUERIES[seed], "engines": ",".join(engines), "category": category}
    transport = httpx2.ASGITransport(app=create_app(service))
    async with httpx2.AsyncClient(transport=transport, base_url="http://serpfuse") as http:
        answer = await http.get("/v1/search", params=params)
        assert answer.status_code == 200, answer.text
        metrics = await http.get("/metrics")
    assert metrics.status_code == 200, metrics.text
    counted = {e: f'serpfuse_engine_answers_total{{engine="{e}"' in metrics.text for e in engines}
    assert all(counted.values()), f"/metrics counts no answer of {[e for e, c in counted.items() if not c]}"
    assert 'serpfuse_http_requests_total{route="native"' in metrics.text
    return [answer.text, metrics.text]


@pytest.mark.parametrize("impersonate", ["1", "0"], ids=["libcurl", "httpx2"])
@pytest.mark.parametrize("seed", [1, 2])
async def test_each_request_carries_its_own_headers_and_each_secret_reaches_only_its_own_host(
    engine_servers, monkeypatch, caplog, tmp_path, impersonate, seed
):
    from serpfuse.service import SearchService

    monkeypatch.setenv("SERPFUSE_IMPERSONATE", impersonate)
    caplog.set_level(logging.DEBUG)
    service = SearchService.from_settings(load_settings(), use_cache=True)
    answers = []
    try:
        for number, (category, engines) in enumerate(search_plan(seed)):
            query = QUERIES[number % len(QUERIES)]
            request = service.make_request(query=query, engines=engines, category=category)
            response = await service.search(request, explain=True, use_cache=number % 3 != 2)
            answers.append(response.model_dump_json())
            for engine in ENGINES:  # the fakes' pages are no engine's results: no cooldown keeps one quiet
                await service.cooldowns.record_success(engine)
        answers += await through_the_http_api(service, seed)
    finally:
        await service.aclose()

    asked = {engine for engine, server in engine_servers.items() if server.requests}
    assert asked == set(ENGINES), f"never asked: {sorted(set(ENGINES) - asked)}"
    for engine, server in engine_servers.items():
        shapes: dict[tuple[str, str, str, str], set[tuple[str, ...]]] = defaultdict(set)
        for seen in server.requests:
            names = [name.lower() for name, _ in seen.lines]
            twice = sorted({n for n in names if names.count(n) > 1})
            assert not twice, f"{engine} sent {twice} twice to {seen.path}: {names}"
            shapes[shape(seen)].add(tuple(sorted(names)))
            text = wire_text(seen)
            foreign = [other for other in ENGINES if other != engine for s in secrets_of(other) if s in text]
            assert not foreign, f"{engine}'s server received the secrets of {foreign}"
        grown = {k: v for k, v in shapes.items() if len(v) > 1}
        assert not grown, f"{engine}'s header names changed between searches: {grown}"

    everything = [
        *answers,
        caplog.text,
        *(p.read_text("latin-1") for p in tmp_path.rglob("*") if p.is_file()),
    ]
    for engine in ENGINES:
        for secret in secrets_of(engine):
            assert not [text for text in everything if secret in text], f"{engine}'s secret shows"


def test_the_engines_command_shows_no_key_or_password(engine_servers):
    from typer.testing import CliRunner

    from test_record import cli_app

    result = CliRunner().invoke(cli_app(), ["engines", "--json"])
    assert result.exit_code == 0, result.output
    rows = {row["engine"]: row for row in json.loads(result.output)}
    assert rows["searxng"]["baseUrl"].startswith("http://user:***@")
    for engine in ENGINES:
        for secret in secrets_of(engine):
            assert secret not in result.output


def test_a_base_urls_password_is_a_secret_wherever_it_is_set(tmp_path):
    """One list of what is secret: a password in any engine's base URL, set by variable or settings file, is
    masked by the key store, the log set-up and the live source, as the older SERPFUSE_SEARXNG_URL was."""
    from serpfuse.secrets import KeyStore, environment_secrets
    from serpfuse.serve.logs import settings_secrets
    from serpfuse.settings import Settings
    from serpfuse.sources.live import LiveSource
    from serpfuse.sources.transport import Transport
    from serpfuse.state.cooldown import InMemoryCooldownStore

    env = {"SERPFUSE_ENGINES__SEARXNG__BASE_URL": f"https://u:{PASSWORD}@searx.example"}
    assert PASSWORD in environment_secrets(env)
    assert PASSWORD not in KeyStore(env=env, keys_file=tmp_path / "k.json").mask(f"echo {PASSWORD}")
    settings = Settings(engine_options={"mojeek": {"base_url": f"http://u:{PASSWORD}@127.0.0.1:9"}})
    assert settings_secrets(settings) == [PASSWORD]
    keys = KeyStore(env={}, keys_file=tmp_path / "k.json")
    LiveSource(keys, InMemoryCooldownStore(), Transport(), base_urls=settings.engine_base_urls)
    assert keys.mask(f"GET http://u:{PASSWORD}@127.0.0.1:9/") == "GET http://u:***@127.0.0.1:9/"


def echo_request(seen: Seen):
    """An error page quoting the whole request back (keys included), as some engines' error pages do."""

    return Reply(500, {"Content-Type": "text/html"}, wire_text(seen).encode())


@pytest.mark.parametrize("echo", [False, True], ids=["answers", "errors-echo-the-request"])
def test_doctor_and_record_send_each_secret_only_to_its_own_host_and_show_none(
    engine_servers, tmp_path, echo
):
    """The other commands that ask engines, one after the other in one process (as the search above): each
    secret reaches only its own server and shows in none of their outputs, recording files included."""
    from typer.testing import CliRunner

    from test_record import cli_app

    if echo:
        for server in engine_servers.values():
            server.route_prefix("/", echo_request)
    queries = tmp_path / "queries.txt"
    queries.write_text("rust async runtime\ntokio scheduler\n")
    out = tmp_path / "recording"
    outputs = []
    for args in (
        ["doctor", "--json", "--queries", str(queries), "--timeout", "5"],
        ["record", "--queries", str(queries), "--out", str(out), "--timeout", "5", "--no-core-variant"],
    ):
        result = CliRunner().invoke(cli_app(), args)
        assert result.exception is None or isinstance(result.exception, SystemExit), result.output
        outputs.append(result.output)
    outputs += [p.read_text("latin-1") for p in out.rglob("*") if p.is_file()]
    for engine, server in engine_servers.items():
        assert server.requests, f"{engine} never asked"
        for seen in server.requests:
            text = wire_text(seen)
            foreign = [other for other in ENGINES if other != engine for s in secrets_of(other) if s in text]
            assert not foreign, f"{engine}'s server received the secrets of {foreign}"
    for engine in ENGINES:
        for secret in secrets_of(engine):
            assert not [text for text in outputs if secret in text], f"{engine}'s secret shows"


# --- the page reader ---------------------------------------------------------------------------------------
#
# The reader (``serpfuse read``, ``search --read``, passages, read_url, Tavily's extract) goes on the wire too,
# page after page in one process, following redirects from one site to another. Its pages here are three
# capture servers on loopback addresses of their own (the reader may read loopback on their ports only, as a
# deployment's settings allow it), each setting a cookie of its own on every answer; SearXNG's rows lead to
# them while every keyed engine is asked with its fake key in the same process.

PAGE_HOSTS = ("127.0.0.101", "127.0.0.102", "127.0.0.103")
READ_QUERY = "when does the harbour pontoon open"


def cookie_of(host: str) -> str:
    return f"c00kie-of-{host}-5e1d"


def article(path: str) -> bytes:
    filler = (
        "<p>The town council met on Tuesday evening to discuss the budget for the coming year, the state of the "
        "roads and the plans for the library, which has been closed since the storms of last winter.</p>"
    )
    return (
        f"<html><head><title>Harbour news {path}</title></head><body><article><h1>Harbour news</h1>{filler * 3}"
        "<p>The new harbour pontoon opens to boats on 14 May 2027, the harbour master said.</p>"
        f"{filler * 2}</article></body></html>"
    ).encode()


def page_site(host: str, onward: FakeServer):
    """A site: robots.txt allowing all (the first site's on the next site), articles, ``/away/...`` redirecting
    to the next site, ``/moved/...`` redirecting within this one; every answer sets this site's cookie."""

    def handle(seen: Seen) -> Reply:
        cookie = {"Set-Cookie": f"sid={cookie_of(host)}; Path=/"}
        if seen.path == "/robots.txt" and host == PAGE_HOSTS[0]:  # as a site's robots.txt on another host
            return Reply(301, {"Location": f"{onward.url}/robots.txt", **cookie})
        if seen.path == "/robots.txt":
            return Reply(200, {"Content-Type": "text/plain", **cookie}, b"User-agent: *\nAllow: /\n")
        if seen.path.startswith("/away/"):
            return Reply(302, {"Location": f"{onward.url}/article{seen.path}", **cookie})
        if seen.path.startswith("/moved/"):
            return Reply(301, {"Location": f"/article{seen.path}", **cookie})
        return Reply(200, {"Content-Type": "text/html; charset=utf-8", **cookie}, article(seen.path))

    return handle


@pytest.fixture
def page_servers(engine_servers, monkeypatch: pytest.MonkeyPatch):
    """The three sites, the reader allowed loopback on their ports (and no other), SearXNG's answer their
    pages (one straight, one moved within its site, one sent on to the next site, from each)."""
    with ExitStack() as stack:
        servers = {host: stack.enter_context(FakeServer(lifetime_s=120, host=host)) for host in PAGE_HOSTS}
        sites = list(servers.values())
        for number, (host, server) in enumerate(servers.items()):
            server.route_prefix("/", page_site(host, sites[(number + 1) % len(sites)]))
        monkeypatch.setenv("SERPFUSE_READ_ALLOW_LOOPBACK", "1")
        monkeypatch.setenv("SERPFUSE_READ_PORTS", ",".join(str(s.port) for s in sites))
        rows = [
            {
                "url": url,
                "title": f"Harbour pontoon news {number}",
                "content": "The harbour pontoon opens soon, the harbour master said.",
                "engines": ["bing"],
                "positions": [number],
            }
            for number, url in enumerate(page_urls(servers), start=1)
        ]
        answer = json.dumps({"results": rows}).encode()
        engine_servers["searxng"].route("/search", Reply(200, {"Content-Type": "application/json"}, answer))
        yield servers


def page_urls(servers: dict[str, FakeServer]) -> list[str]:
    return [
        f"{server.url}/{kind}/{host.rsplit('.', 1)[1]}"
        for host, server in servers.items()
        for kind in ("article", "moved", "away")
    ]


async def read_in_one_process(urls: list[str]) -> list[str]:
    """Pages read one after another and all at once through one reader, then a search with passages (every
    general engine asked, the keyed ones with their keys) reading its rows' pages: the answers, as JSON."""
    from serpfuse.reader.evidence import read_pages
    from serpfuse.reader.service import Reader
    from serpfuse.service import SearchService

    settings = load_settings()
    reader = Reader.from_settings(settings)
    answers = [(await reader.read(url, use_cache=False)).model_dump_json() for url in urls]
    for got in await read_pages(reader, urls, 20.0, use_cache=False):
        assert not isinstance(got, Exception), got
        answers.append(got[0].model_dump_json())
    service = SearchService.from_settings(settings, use_cache=True)
    try:
        general = sorted(n for n, m in ENGINES.items() if m.INFO.category == "general")
        request = service.make_request(query=READ_QUERY, engines=general, passages=True, limit=20)
        response = await service.search(request, explain=True, use_cache=False)
        read = [r.url for r in response.results if r.passages]
        assert sorted(read) == sorted(urls), response.model_dump_json(indent=1)
        answers.append(response.model_dump_json())
        answers += await read_through_the_http_api(service, urls, general)
    finally:
        await service.aclose()
    return answers


async def read_through_the_http_api(service, urls: list[str], engines: list[str]) -> list[str]:
    """``serpfuse serve``'s faces that read pages, on the same service: Tavily's extract (with a query), the
    native read, and a native search with passages; their bodies."""
    import httpx2

    from serpfuse.serve.http_api import create_app

    search = {"q": READ_QUERY, "engines": ",".join(engines), "passages": "true", "cache": "false"}
    transport = httpx2.ASGITransport(app=create_app(service))
    async with httpx2.AsyncClient(transport=transport, base_url="http://serpfuse", timeout=30) as http:
        replies = [
            await http.post("/tavily/extract", json={"urls": urls, "query": READ_QUERY}),
            await http.post("/v1/read", json={"url": urls[-1], "cache": False}),
            await http.get("/v1/search", params=search),
        ]
    for reply in replies:
        assert reply.status_code == 200, reply.text
    assert len(replies[0].json()["results"]) == len(urls), replies[0].text
    return [reply.text for reply in replies]


def test_the_page_reader_sends_each_page_its_own_headers_and_no_secret_or_cookie_crosses_hosts(
    page_servers, caplog, tmp_path
):
    """Every header name once in a request; the same header names on every page request and on every robots.txt
    request, whichever site, hop or interface; no engine's key or password, no Authorization, no site's cookie
    and no other site's address in any request a site receives (a redirect from one site to another carries
    nothing of the first); none of the secrets in the answers, the commands' output, the logs or the cache."""
    import asyncio

    from typer.testing import CliRunner

    from serpfuse.cli import app

    caplog.set_level(logging.DEBUG)
    urls = page_urls(page_servers)
    outputs = asyncio.run(read_in_one_process(urls))
    for args in (
        ["read", *urls, "--json", "--no-cache"],
        ["search", READ_QUERY, "-e", "searxng", "-e", "brave", "--passages", "--read", "3", "--json"],
    ):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        outputs.append(result.output)

    headers: dict[bool, set[tuple[str, ...]]] = defaultdict(set)
    for host, server in page_servers.items():
        robots = server.seen("/robots.txt")
        assert robots and len(server.requests) > len(robots), f"{host} was not read"
        for seen in server.requests:
            names = [name.lower() for name, _ in seen.lines]
            twice = sorted({n for n in names if names.count(n) > 1})
            assert not twice, f"the reader sent {twice} twice to {host}{seen.path}: {names}"
            headers[seen.path == "/robots.txt"].add(tuple(sorted(names)))
            assert not {"authorization", "proxy-authorization"} & set(names), f"{host}{seen.path}: {names}"
            text = wire_text(seen)
            secrets = [engine for engine in ENGINES for s in secrets_of(engine) if s in text]
            assert not secrets, f"{host} received the secrets of {secrets}"
            foreign = [o for o in PAGE_HOSTS if o != host and (cookie_of(o) in text or o in text)]
            assert not foreign, f"{host}{seen.path} received {foreign}'s cookie or address: {text}"
    varied = {("robots.txt" if robots else "pages"): v for robots, v in headers.items() if len(v) > 1}
    assert not varied, f"the reader's header names changed between requests: {varied}"

    files = [p.read_text("latin-1") for p in tmp_path.rglob("*") if p.is_file()]
    everything = [*outputs, caplog.text, *files]
    for engine in ENGINES:
        for secret in secrets_of(engine):
            assert not [text for text in everything if secret in text], f"{engine}'s secret shows"
