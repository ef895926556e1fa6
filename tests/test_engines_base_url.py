"""An operator's base URL per engine (``[engines.NAME] base_url``, ``SERPFUSE_ENGINES__NAME__BASE_URL``): every
request the engine sends goes to it, with the engine's own path, parameters and headers. Captured for each engine
by a loopback fake, the setting read the way the CLI and the servers read it."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import parse_qs

import pytest

from fakeserver import Reply, Seen
from serpfuse.cli.config import public_view
from serpfuse.engines import ENGINES, base_url_env
from serpfuse.models import SearchRequest
from serpfuse.secrets import KeyStore
from serpfuse.settings import ConfigError, Settings, load_settings
from serpfuse.sources.live import LiveSource
from serpfuse.state.cooldown import InMemoryCooldownStore
from serpfuse.urls import rebase_url

FIXTURES = Path(__file__).parent / "fixtures" / "engines"
KEY = "test-key-0123456789"
QUERY = "rust async runtime"

# What each engine's request must carry on the fake: (method, path, fields of its query, form or JSON body).
EXPECTED: dict[str, tuple[str, str, dict]] = {
    "ddg": ("POST", "/html/", {"q": QUERY, "b": ""}),
    "bing": ("GET", "/search", {"q": QUERY, "setlang": "en", "form": "QBRE", "count": None}),
    "bing-cn": ("GET", "/search", {"q": QUERY, "setlang": "zh-hans", "form": "QBRE"}),
    "yahoo": ("GET", "/search", {"p": QUERY, "ei": "UTF-8"}),
    "baidu": ("GET", "/s", {"wd": QUERY, "ie": "utf-8"}),
    "sogou": ("GET", "/web", {"query": QUERY}),
    "so360": ("GET", "/s", {"q": QUERY}),
    "naver": ("GET", "/search.naver", {"query": QUERY, "where": "web"}),
    "mojeek": ("GET", "/search", {"q": QUERY}),
    "brave-web": ("GET", "/search", {"q": QUERY, "source": "web"}),
    "startpage": ("POST", "/sp/search", {"query": QUERY, "cat": "web", "sc": "Q7Mt5TRqowKB00"}),
    "google": ("GET", "/wml/search", {"q": QUERY, "ie": "utf8", "oe": "utf8"}),
    "google-cse": ("GET", "/cse/element/v1", {"q": QUERY, "rsz": "filtered_cse", "callback": "_"}),
    "yep": ("GET", "/search", {"query": QUERY}),
    "mwmbl": ("GET", "/api/v1/search/", {"s": QUERY}),
    "ddg-news": ("GET", "/", {"q": QUERY, "iar": "news"}),  # the token page before /news.js
    "bing-news": ("GET", "/news/search", {"q": QUERY, "format": "rss"}),
    "brave-news": ("GET", "/news", {"q": QUERY, "source": "web"}),
    "google-news": ("GET", "/wml/search", {"q": QUERY, "tbm": "nws"}),
    "wikipedia": ("GET", "/w/api.php", {"action": "query", "list": "search", "srsearch": QUERY}),
    "anysearch": ("POST", "/v1/search", {"query": QUERY, "format": "json"}),
    "exa-free": ("POST", "/mcp", {"method": "tools/call"}),
    "keenable": ("POST", "/v1/search/public", {"query": QUERY, "mode": "pro"}),
    "parallel": ("POST", "/mcp", {"method": "tools/call"}),
    "you-free": ("POST", "/mcp", {"method": "tools/call"}),
    "tavily-free": ("POST", "/search", {"query": QUERY, "search_depth": "basic"}),
    "brave": ("GET", "/res/v1/web/search", {"q": QUERY, "count": "10"}),
    "exa": ("POST", "/search", {"query": QUERY, "type": "auto"}),
    "tavily": ("POST", "/search", {"query": QUERY, "search_depth": "basic"}),
    "firecrawl": ("POST", "/v1/search", {"query": QUERY}),
    "searxng": ("GET", "/search", {"q": QUERY, "format": "json"}),
}


def test_every_engine_is_covered() -> None:
    assert set(EXPECTED) == set(ENGINES)


def fields(seen: Seen) -> dict:
    """The request's parameters: its query string and its form or JSON body, one value each."""
    out = {k: v[0] for k, v in seen.query.items()}
    if seen.body:
        if seen.headers.get("content-type", "").startswith("application/json"):
            body = json.loads(seen.body)
            out.update(body if "jsonrpc" not in body else {"method": body["method"]})
        else:
            out.update({k: v[0] for k, v in parse_qs(seen.body.decode(), keep_blank_values=True).items()})
    return out


def answer(seen: Seen) -> Reply:
    """Whatever keeps an engine talking: Startpage's home page, Exa's MCP handshake, an empty page otherwise
    (what the engine makes of it does not matter here, only what it asked)."""
    if seen.method == "GET" and seen.path in ("/", "/mirror/"):
        return Reply(
            200, {"Content-Type": "text/html"}, (FIXTURES / "startpage_home_handmade.html").read_bytes()
        )
    if seen.path == "/cse/cse.js":  # Google CSE's loader script and its token
        return Reply(
            200,
            {"Content-Type": "text/javascript"},
            (FIXTURES / "google_cse_script_handmade.js").read_bytes(),
        )
    if seen.path.endswith("/mcp"):
        message = json.loads(seen.body)
        if "id" not in message:
            return Reply(202)
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": {"content": []}}
        return Reply(
            200, {"Content-Type": "application/json", "Mcp-Session-Id": "s-1"}, json.dumps(reply).encode()
        )
    return Reply(200, {"Content-Type": "text/html"}, b"<html><body></body></html>")


def keys_for(tmp_path: Path) -> KeyStore:
    env = {ENGINES[n].INFO.key_envs[0]: KEY for n in ENGINES if ENGINES[n].INFO.needs_key}
    return KeyStore(env=env, keys_file=tmp_path / "keys.json")


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import os

    for name in list(os.environ):
        if name.startswith("SERPFUSE_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("SERPFUSE_CONFIG", "")
    monkeypatch.chdir(tmp_path)


def route_everything(server) -> None:
    for path in {"/", "/mcp", "/v2/mcp", "/cse/cse.js", *(path for _, path, _ in EXPECTED.values())}:
        server.route(path, answer)


@pytest.mark.parametrize("engine", sorted(EXPECTED))
async def test_each_engines_request_goes_to_the_base_url_from_the_environment(
    engine, server, transport, tmp_path, monkeypatch, clean_env
):
    route_everything(server)
    monkeypatch.setenv(base_url_env(engine), server.url)
    settings = load_settings()
    assert settings.engine_base_urls == {engine: server.url}
    source = LiveSource(
        keys_for(tmp_path),
        InMemoryCooldownStore(),
        transport,
        engines=[engine],
        base_urls=settings.engine_base_urls,
        timeout_s=5.0,
    )
    await source.ask(engine, QUERY, SearchRequest(query=QUERY))
    method, path, want = EXPECTED[engine]
    sent = [s for s in server.requests if (s.method, s.path) == (method, path)]
    assert sent, [(s.method, s.path) for s in server.requests]
    got = fields(sent[-1])
    assert {k: got.get(k) for k in want} == want
    if ENGINES[
        engine
    ].INFO.needs_key:  # the key rides along to the operator's host, as it would to the engine's
        assert KEY in json.dumps(sent[-1].headers)


async def test_a_settings_file_table_sends_startpage_to_its_base_url_with_a_path_prefix(
    server, transport, tmp_path, clean_env
):
    route_everything(server)
    server.route("/mirror/", answer)
    server.route("/mirror/sp/search", answer)
    config = tmp_path / "serpfuse.toml"
    config.write_text(f'limit = 5\n\n[engines.startpage]\nbase_url = "{server.url}/mirror"\n')
    settings = load_settings()
    source = LiveSource(
        keys_for(tmp_path), InMemoryCooldownStore(), transport, base_urls=settings.engine_base_urls
    )
    await source.ask("startpage", QUERY, SearchRequest(query=QUERY))
    assert [(s.method, s.path) for s in server.requests] == [
        ("GET", "/mirror/"),
        ("POST", "/mirror/sp/search"),
    ]
    search = server.requests[1]
    # headers stay the engine's own: the form says where it was posted from
    assert search.headers["origin"] == "https://www.startpage.com"


async def test_no_startpage_request_through_the_base_url_carries_abp(
    server, transport, tmp_path, monkeypatch, clean_env
):
    route_everything(server)
    results = (FIXTURES / "startpage_results_handmade.html").read_bytes()
    server.route("/sp/search", Reply(200, {"Content-Type": "text/html"}, results))
    monkeypatch.setenv("SERPFUSE_ENGINES__STARTPAGE__BASE_URL", server.url)
    source = LiveSource(
        keys_for(tmp_path), InMemoryCooldownStore(), transport, base_urls=load_settings().engine_base_urls
    )
    for query in ("rust async runtime", "tokio"):
        await source.ask("startpage", query, SearchRequest(query=query, time_range="week", language="de"))
    searches = server.seen("/sp/search")
    assert len(searches) == 2 and all("abp" not in fields(s) and "abp" not in s.path for s in server.requests)
    assert {fields(s)["with_date"] for s in searches} == {"w"} and fields(searches[0])["lui"] == "deutsch"


async def test_ddgs_post_through_the_base_url_carries_its_referer_and_no_origin(
    server, transport, tmp_path, monkeypatch, clean_env
):
    route_everything(server)
    monkeypatch.setenv("SERPFUSE_ENGINES__DDG__BASE_URL", server.url)
    source = LiveSource(
        keys_for(tmp_path), InMemoryCooldownStore(), transport, base_urls=load_settings().engine_base_urls
    )
    await source.ask("ddg", QUERY, SearchRequest(query=QUERY))
    (post,) = server.seen("/html/")
    assert post.method == "POST" and post.headers["referer"] == "https://html.duckduckgo.com/"
    assert "origin" not in post.headers
    assert "cookie" not in post.headers  # no region chosen: no kl=wt-wt cookie


def test_the_environment_wins_over_the_file_and_names_are_spelled_either_way(
    tmp_path, monkeypatch, clean_env
):
    (tmp_path / "serpfuse.toml").write_text(
        '[engines.brave_web]\nbase_url = "http://127.0.0.1:1"\n[engines.ddg]\nbase_url = "http://127.0.0.1:2"\n'
    )
    monkeypatch.setenv("SERPFUSE_ENGINES__BRAVE_WEB__BASE_URL", "http://127.0.0.1:3")
    monkeypatch.setenv("SERPFUSE_ENGINES", "ddg,bing")  # the default set and the tables live side by side
    settings = load_settings()
    assert settings.engines == ["ddg", "bing"]
    assert settings.engine_base_urls == {"brave-web": "http://127.0.0.1:3", "ddg": "http://127.0.0.1:2"}


def test_the_older_searxng_variable_still_sets_its_base_url(monkeypatch, clean_env):
    monkeypatch.setenv("SERPFUSE_SEARXNG_URL", "http://10.0.0.2:8080")
    assert load_settings().engine_base_urls == {"searxng": "http://10.0.0.2:8080"}
    monkeypatch.setenv("SERPFUSE_ENGINES__SEARXNG__BASE_URL", "http://10.0.0.3:8080")
    assert load_settings().engine_base_urls == {"searxng": "http://10.0.0.3:8080"}


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('[engines.duckduckgo]\nbase_url = "http://127.0.0.1:1"\n', "engines: unknown engine 'duckduckgo'"),
        ('[engines.ddg]\nbase_uri = "http://127.0.0.1:1"\n', "engines.ddg.base_uri: unknown key"),
        ('[engines.ddg]\nbase_url = "file:///etc/passwd"\n', "engines.ddg.base_url: must be an http(s) URL"),
        ('[engines.ddg]\nbase_url = "http://127.0.0.1:1/?x=1"\n', "engines.ddg.base_url: must have no query"),
        ('engine_options = {ddg = {base_url = "http://127.0.0.1:1"}}\n', "unknown key 'engine_options'"),
    ],
)
def test_a_wrong_engine_table_is_a_one_line_error(tmp_path, clean_env, toml, message):
    (tmp_path / "serpfuse.toml").write_text(toml)
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert message in str(info.value) and "\n" not in str(info.value)


def test_an_unknown_engine_in_the_environment_is_an_error(monkeypatch, clean_env):
    monkeypatch.setenv("SERPFUSE_ENGINES__NOPE__BASE_URL", "http://127.0.0.1:1")
    with pytest.raises(ConfigError, match="unknown engine 'nope'; valid engines: anysearch"):
        load_settings()


def test_a_base_urls_password_is_masked_where_settings_are_shown():
    settings = Settings(engine_options={"searxng": {"base_url": "https://u:hunter2@searx.example"}})
    assert "hunter2" not in json.dumps(public_view(settings)) and "hunter2" not in repr(settings)
    assert settings.engine_base_urls == {"searxng": "https://u:hunter2@searx.example"}


@pytest.mark.parametrize(
    ("url", "base", "sent"),
    [
        ("https://html.duckduckgo.com/html/", "http://127.0.0.1:8", "http://127.0.0.1:8/html/"),
        (
            "https://www.bing.com/search?q=a&cc=de",
            "http://127.0.0.1:8/",
            "http://127.0.0.1:8/search?q=a&cc=de",
        ),
        ("https://www.startpage.com/", "https://mirror.example/sp-site", "https://mirror.example/sp-site/"),
        ("https://mcp.exa.ai/mcp", "http://[::1]:9", "http://[::1]:9/mcp"),
        ("https://en.wikipedia.org", "http://127.0.0.1:8", "http://127.0.0.1:8/"),
        # already under the base (SearXNG builds its requests from it): unchanged, never prefixed twice
        (
            "http://10.0.0.2:8080/searx/search",
            "http://10.0.0.2:8080/searx",
            "http://10.0.0.2:8080/searx/search",
        ),
    ],
)
def test_rebase_keeps_the_path_and_query_and_replaces_scheme_host_and_port(url, base, sent):
    assert rebase_url(url, base) == sent


def test_the_engines_command_shows_each_base_url(tmp_path, monkeypatch, clean_env):
    from typer.testing import CliRunner

    from test_record import cli_app

    monkeypatch.setenv("SERPFUSE_KEYS_FILE", str(tmp_path / "no-keys.json"))
    monkeypatch.setenv("SERPFUSE_ENGINES__MOJEEK__BASE_URL", "http://user:secret@127.0.0.1:9")
    result = CliRunner().invoke(cli_app(), ["engines", "--json"])
    assert result.exit_code == 0, result.output
    rows = {row["engine"]: row for row in json.loads(result.output)}
    assert rows["mojeek"]["baseUrl"] == "http://user:***@127.0.0.1:9"
    assert rows["ddg"]["baseUrl"] is None
    table = CliRunner().invoke(cli_app(), ["engines"], env={"COLUMNS": "250"})
    line = next(ln for ln in table.output.splitlines() if ln.startswith("│ mojeek "))
    assert "127.0.0.1:9" in line and "secret" not in table.output


def test_a_search_service_hands_the_settings_base_urls_to_the_live_engines(monkeypatch, clean_env):
    from serpfuse.service import SearchService

    monkeypatch.setenv("SERPFUSE_ENGINES__DDG__BASE_URL", "http://127.0.0.1:7")
    service = SearchService.from_settings(load_settings(), use_cache=False)
    assert service.source.base_url("ddg") == "http://127.0.0.1:7"


# --- the operator's contact in Wikipedia's User-Agent ----------------------------------------------------------


@pytest.mark.parametrize("where", ["file", "environment"])
async def test_wikipedias_user_agent_carries_the_operators_contact(
    where, server, transport, tmp_path, monkeypatch, clean_env
):
    from serpfuse.version import __version__

    route_everything(server)
    monkeypatch.setenv("SERPFUSE_ENGINES__WIKIPEDIA__BASE_URL", server.url)
    if where == "file":
        (tmp_path / "serpfuse.toml").write_text('[engines.wikipedia]\ncontact = "ops@example.org"\n')
    else:
        monkeypatch.setenv("SERPFUSE_ENGINES__WIKIPEDIA__CONTACT", "ops@example.org")
    settings = load_settings()
    source = LiveSource(
        keys_for(tmp_path),
        InMemoryCooldownStore(),
        transport,
        engines=["wikipedia"],
        base_urls=settings.engine_base_urls,
        contacts=settings.engine_contacts,
    )
    await source.ask("wikipedia", QUERY, SearchRequest(query=QUERY))
    (seen,) = server.seen("/w/api.php")
    assert (
        seen.headers["user-agent"]
        == f"serpfuse/{__version__} (ops@example.org; https://pypi.org/project/serpfuse/)"
    )


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        (
            '[engines.ddg]\ncontact = "ops@example.org"\n',
            "engines: ddg sends no contact (only wikipedia does)",
        ),
        (
            '[engines.wikipedia]\ncontact = "me (ops)"\n',
            "engines.wikipedia.contact: must be an email address or a URL",
        ),
        (
            '[engines.wikipedia]\ncontact = "ops@example.org\\r\\nX-Evil: 1"\n',
            "engines.wikipedia.contact: must be",
        ),
    ],
)
def test_a_contact_that_cannot_go_in_a_user_agent_is_refused(tmp_path, clean_env, toml, message):
    (tmp_path / "serpfuse.toml").write_text(toml)
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert message in str(info.value)


def test_the_engines_command_says_anysearch_has_no_index_of_its_own(tmp_path, monkeypatch, clean_env):
    from typer.testing import CliRunner

    from test_record import cli_app

    monkeypatch.setenv("SERPFUSE_KEYS_FILE", str(tmp_path / "no-keys.json"))
    result = CliRunner().invoke(cli_app(), ["engines", "--json"])
    rows = {row["engine"]: row for row in json.loads(result.output)}
    assert rows["anysearch"]["ownIndex"] is False and rows["bing"]["ownIndex"] is True
    table = CliRunner().invoke(cli_app(), ["engines"], env={"COLUMNS": "250"})
    line = next(ln for ln in table.output.splitlines() if ln.startswith("│ anysearch "))
    assert "no index of its own" in line
