"""What the scraped engines put on the wire, search after search, as each browser release they go as would:

- DuckDuckGo's form POST carries no Origin and no Content-Type of its own, so the browser's headers keep its
  order and nothing lands after them where no browser puts it (searxng#6596, 2026-08-30: "The explicit
  Content-Type ... With that line: 202 every single time. Comment it out: 200 every single time"; SearXNG
  duckduckgo.py cf1410af8, 2026-06-15, sends no Origin); the client names the form's type once, last.
- Yep's API and DuckDuckGo News' ``news.js`` are a page's script fetching: ``Sec-Fetch-Mode: cors``,
  ``Sec-Fetch-Dest: empty``, and none of the headers only a navigation carries (Upgrade-Insecure-Requests,
  Sec-Fetch-User, Cache-Control), with a fetch's priority; DuckDuckGo News' first page stays a navigation.
  Yep's shape is SearXNG's yep.py 72a827ae9 (#6223, 2026-06-08, "send Sec-Fetch headers"); ddg-news' is ddgs
  9.16.1 duckduckgo_news.py (2026-10-23) and SearXNG duckduckgo_extra.py 253dc86c1 (2026-05-31).
- Mojeek's ALTCHA page (free-search-mcp 0.16.0, 2026-10) is a challenge, not an empty answer or a layout change.

Captured on 127.0.0.1 through each engine's base-URL setting, on both clients, as each impersonated release.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakeserver import Reply, Seen
from serpfuse.engines import get_engine
from serpfuse.engines.base import ChallengeDetected, EngineQuery
from serpfuse.models import SearchRequest
from serpfuse.secrets import KeyStore
from serpfuse.sources.live import LiveSource
from serpfuse.state.cooldown import InMemoryCooldownStore

FIXTURES = Path(__file__).parent / "fixtures" / "engines"
HTML = {"Content-Type": "text/html; charset=utf-8"}
JSON = {"Content-Type": "application/json"}
QUERIES = ("rust async runtime", "tokio scheduler", "python asyncio tasks")
RELEASES = ("chrome152", "firefox154", "safari270")
NAVIGATION_ONLY = {"upgrade-insecure-requests", "sec-fetch-user", "cache-control"}


def names(seen: Seen) -> list[str]:
    return [name.lower() for name, _ in seen.lines]


def value(seen: Seen, name: str) -> str | None:
    return next((v for k, v in seen.lines if k.lower() == name), None)


async def ask_each(server, transport, tmp_path, monkeypatch, engine: str, release: str) -> LiveSource:
    """Each query once through ``engine``'s base URL, as ``release`` where the client impersonates."""
    monkeypatch.setattr(transport, "pick_profile", lambda: release if transport.impersonate else None)
    source = LiveSource(
        KeyStore(env={}, keys_file=tmp_path / "keys.json"),
        InMemoryCooldownStore(),
        transport,
        engines=[engine],
        base_urls={engine: server.url},
        timeout_s=5.0,
    )
    for query in QUERIES:
        answer = await source.ask(engine, query, SearchRequest(query=query))
        assert answer.status == "ok", (answer.status, answer.reason)
    return source


def one_shape(requests: list[Seen]) -> list[str]:
    """The header names every one of these requests carried, in order: the same each time."""
    shapes = {tuple(names(s)) for s in requests}
    assert len(shapes) == 1, shapes
    (shape,) = shapes
    assert len(set(shape)) == len(shape), shape  # no header twice
    return list(shape)


@pytest.mark.parametrize("release", RELEASES)
async def test_ddg_posts_the_form_without_origin_and_with_the_clients_own_content_type_last(
    server, transport, tmp_path, monkeypatch, release
) -> None:
    server.route("/html/", Reply(200, HTML, (FIXTURES / "synthetic_ddg_results.html").read_bytes()))
    await ask_each(server, transport, tmp_path, monkeypatch, "ddg", release)
    posts = server.seen("/html/")
    assert [s.method for s in posts] == ["POST"] * len(QUERIES)
    shape = one_shape(posts)
    assert "origin" not in shape
    assert value(posts[0], "content-type") == "application/x-www-form-urlencoded"
    # The browser's own headers first, in its order; what the client adds for the body after them all.
    browser_part = [n for n in shape if n not in ("host", "connection", "content-length", "content-type")]
    assert shape.index("content-type") > max(shape.index(n) for n in browser_part)
    assert value(posts[0], "referer") == "https://html.duckduckgo.com/"
    assert value(posts[0], "sec-fetch-mode") == "navigate"  # a form posted from the page
    assert [s.body.decode() for s in posts][0].startswith("q=rust+async+runtime&b=&kl=wt-wt")


YEP_ANSWER = (FIXTURES / "yep_results_handmade.json").read_bytes()


@pytest.mark.parametrize("release", RELEASES)
async def test_yep_is_asked_as_a_fetch_every_time(server, transport, tmp_path, monkeypatch, release) -> None:
    server.route("/search", Reply(200, JSON, YEP_ANSWER))
    await ask_each(server, transport, tmp_path, monkeypatch, "yep", release)
    asks = server.seen("/search")
    shape = one_shape(asks)
    assert not NAVIGATION_ONLY & set(shape), shape
    assert value(asks[0], "sec-fetch-mode") == "cors" and value(asks[0], "sec-fetch-dest") == "empty"
    assert value(asks[0], "sec-fetch-site") == "same-site" and value(asks[0], "accept") == "*/*"
    assert value(asks[0], "origin") == "https://yep.com"
    priority = value(asks[0], "priority")
    assert priority in (None, "u=1, i")  # a fetch's, where the release sends one (never a navigation's u=0)
    if release.startswith("safari"):
        assert priority is None


def ddg_news_page(seen: Seen) -> Reply:
    return Reply(200, HTML, (FIXTURES / "ddg_news_page_handmade.html").read_bytes())


@pytest.mark.parametrize("release", RELEASES)
async def test_ddg_news_opens_its_page_as_a_navigation_then_fetches_news_js(
    server, transport, tmp_path, monkeypatch, release
) -> None:
    server.route("/", ddg_news_page)
    server.route("/news.js", Reply(200, JSON, (FIXTURES / "ddg_news_results_handmade.json").read_bytes()))
    await ask_each(server, transport, tmp_path, monkeypatch, "ddg-news", release)
    pages, fetches = server.seen("/"), server.seen("/news.js")
    assert len(pages) == len(fetches) == len(QUERIES)
    page_shape, fetch_shape = one_shape(pages), one_shape(fetches)
    assert value(pages[0], "sec-fetch-mode") == "navigate"
    if not release.startswith("safari"):  # Safari sends no Sec-Fetch-User even on a navigation
        assert "sec-fetch-user" in page_shape
    assert not NAVIGATION_ONLY & set(fetch_shape), fetch_shape
    assert value(fetches[0], "sec-fetch-mode") == "cors" and value(fetches[0], "sec-fetch-dest") == "empty"
    assert value(fetches[0], "accept").startswith("application/json")
    assert {value(f, "priority") for f in fetches} <= {None, "u=1, i"}
    assert [json.loads(json.dumps(f.query))["q"] for f in fetches] == [[q] for q in QUERIES]


# --- Mojeek's ALTCHA page ---------------------------------------------------------------------------------------


ALTCHA = (FIXTURES / "mojeek_altcha_handmade.html").read_bytes()


def test_mojeeks_altcha_page_is_a_challenge() -> None:
    with pytest.raises(ChallengeDetected):
        get_engine("mojeek").parse(200, HTML, ALTCHA, EngineQuery(text="rust async runtime"))


async def test_mojeeks_altcha_page_through_the_live_source_is_status_challenge_and_cools_it(
    server, transport, tmp_path
) -> None:
    server.route("/search", Reply(200, HTML, ALTCHA))
    source = LiveSource(
        KeyStore(env={}, keys_file=tmp_path / "keys.json"),
        InMemoryCooldownStore(),
        transport,
        engines=["mojeek"],
        base_urls={"mojeek": server.url},
        timeout_s=5.0,
    )
    request = SearchRequest(query="rust async runtime")
    first = await source.ask("mojeek", "rust async runtime", request)
    second = await source.ask("mojeek", "rust async runtime", request)
    assert first.status == "challenge" and "Mojeek" in first.reason
    assert second.status == "skipped"  # cooling down: not asked again at once
    assert len(server.seen("/search")) == 1
