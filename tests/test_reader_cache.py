"""The page cache holds what a URL served: a page is filed under the URL asked for and the URL it was served
from after redirects, never under the URL its own <link rel=canonical> names nor the target a redirector wraps.
Every page comes from a real server on loopback, reached through a pretend public address."""

from __future__ import annotations

import pytest

from fakeserver import Reply
from serpfuse.reader.service import Reader, cache_url
from serpfuse.state.cache import SqliteResultCache
from test_reader_fetch import HTML, PRETEND_PUBLIC, STRICT, Dialler, Resolver


def article(title: str, words: str, canonical: str | None = None) -> bytes:
    link = f'<link rel="canonical" href="{canonical}">' if canonical else ""
    paragraphs = "".join(
        f"<p>{words} This is paragraph {i} of the page, long enough to be read as an article by the reader "
        f"and not as furniture around one.</p>"
        for i in range(6)
    )
    return (
        f"<html lang='en'><head><title>{title}</title>{link}</head><body><article><h1>{title}</h1>"
        f"{paragraphs}</article></body></html>"
    ).encode()


GENUINE_B = article("Page B", "Genuine text of page b: tide gauges and harbour walls.")
POISON = article("Page A", "Buy cheap pills now from the poisoner's shop.", canonical="http://site.test/b")


@pytest.fixture
def reader(server, tmp_path):
    server.route("/robots.txt", Reply(404, {}, b""))
    resolver = Resolver({"site.test": [str(PRETEND_PUBLIC)], "www.google.com": [str(PRETEND_PUBLIC)]})
    return Reader(
        policy=STRICT,
        resolver=resolver,
        dial=Dialler(server),
        cache=SqliteResultCache(tmp_path / "c.sqlite3"),
    )


async def test_a_page_naming_another_as_canonical_cannot_fill_its_cache_entry(server, reader):
    server.route("/a", Reply(200, HTML, POISON))
    server.route("/b", Reply(200, HTML, GENUINE_B))
    a = await reader.read("http://site.test/a")
    assert a.canonical_url == "http://site.test/b"  # kept as metadata
    assert "poisoner" in a.text
    b = await reader.read("http://site.test/b")
    assert not b.cached and len(server.seen("/b")) == 1
    assert "Genuine text of page b" in b.text and "poisoner" not in b.text
    again = await reader.read("http://site.test/a")
    assert again.cached and "poisoner" in again.text  # a's own entry still serves a


async def test_a_redirect_files_the_page_under_its_final_url_too(server, reader):
    server.route("/old", Reply(301, {"Location": "/b"}))
    server.route("/b", Reply(200, HTML, GENUINE_B))
    first = await reader.read("http://site.test/old")
    assert first.final_url == "http://site.test/b" and not first.cached
    b = await reader.read("http://site.test/b")
    assert b.cached and b.url == "http://site.test/b" and "Genuine text of page b" in b.text
    assert len(server.seen("/b")) == 1
    old = await reader.read("http://site.test/old?utm_source=mail")
    assert old.cached and old.url == "http://site.test/old?utm_source=mail"


async def test_a_redirector_link_is_its_own_page_not_its_target(server, reader):
    """A search engine's /url?q=TARGET link answers with its own page (here an interstitial, not a redirect):
    that page must not be filed as TARGET's, though URL canonicalisation unwraps such links for display."""
    server.route("/url", Reply(200, HTML, article("Leaving Google", "You are leaving the search page.")))
    server.route("/b", Reply(200, HTML, GENUINE_B))
    hop = await reader.read("http://www.google.com/url?q=http://site.test/b")
    assert "leaving the search page" in hop.text
    b = await reader.read("http://site.test/b")
    assert not b.cached and "Genuine text of page b" in b.text


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("http://SITE.test/story", "http://site.test/story"),
        ("http://site.test:80/story", "http://site.test/story"),
        ("http://site.test/story?utm_source=x", "http://site.test/story"),
        ("http://site.test/story#part-2", "http://site.test/story"),
        ("http://site.test/s?b=2&a=1", "http://site.test/s?a=1&b=2"),
    ],
)
def test_spellings_of_one_url_share_an_entry(one, other):
    assert cache_url(one) == cache_url(other)


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("http://site.test/story?id=1", "http://site.test/story?id=2"),
        ("https://www.google.com/url?q=http://site.test/b", "http://site.test/b"),
        ("https://www.bing.com/ck/a?u=a1aHR0cDovL3NpdGUudGVzdC9i", "http://site.test/b"),
        ("http://site.test/Story", "http://site.test/story"),
    ],
)
def test_different_pages_never_share_an_entry(one, other):
    assert cache_url(one) != cache_url(other)
