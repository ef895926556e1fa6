"""robots.txt read as RFC 9309 says: wildcards, ``$``, the longest match deciding between Allow and Disallow,
the group for serpfuse over the ``*`` group; then the same through a real fetch from a loopback server."""

from __future__ import annotations

import asyncio

import pytest

from fakeserver import Reply
from serpfuse.reader.fetch import Fetched, HttpStatusError
from serpfuse.reader.guard import Policy, parse_target
from serpfuse.reader.models import RobotsDisallowed
from serpfuse.reader.robots import RobotsCache
from serpfuse.reader.service import Reader
from test_reader_fetch import ARTICLE, HTML, PRETEND_PUBLIC, STRICT, Dialler, Resolver

ANY_PORT = Policy(ports=frozenset(range(1, 65536)))

RULES = """\
User-agent: *
Disallow: /*.pdf$
Disallow: /private
Allow: /private/public
Disallow: /exact$
Disallow: /tmp/
Allow: /tmp/
"""


def _served(text: str):
    async def get(url: str) -> Fetched:
        assert url == "http://site.test/robots.txt"
        return Fetched(url, 200, "text/plain", "utf-8", text.encode())

    return get


async def _allowed(rules: str, path: str) -> bool:
    target = parse_target(f"http://site.test{path}", ANY_PORT)
    try:
        await RobotsCache().check(target, _served(rules))
    except RobotsDisallowed:
        return False
    return True


@pytest.mark.parametrize(
    ("path", "allowed"),
    [
        ("/a/b.pdf", False),  # * spans directories
        ("/b.pdf", False),
        ("/a/b.pdf?page=2", True),  # $: the pattern ends at .pdf, and this URL does not
        ("/a/b.pdfx", True),
        ("/a/b.html", True),
        ("/private", False),
        ("/private/x", False),
        (
            "/private/public",
            True,
        ),  # Allow /private/public is the longer match, so it wins, though listed later
        ("/private/public/x", True),
        ("/private/publicity", True),  # still the longer (prefix) match
        ("/exact", False),
        ("/exact/more", True),
        ("/tmp/x", True),  # a tie in length: Allow wins
        ("/", True),
    ],
)
async def test_rfc9309_matching(path, allowed):
    assert await _allowed(RULES, path) is allowed


async def test_the_group_naming_serpfuse_replaces_the_star_group():
    rules = "User-agent: *\nDisallow: /\n\nUser-agent: SerpFuse\nDisallow: /drafts\n"
    assert await _allowed(rules, "/news") is True
    assert await _allowed(rules, "/drafts/1") is False
    assert await _allowed("User-agent: otherbot\nDisallow: /\n", "/news") is True


async def test_percent_encoding_matches_either_spelling():
    assert await _allowed("User-agent: *\nDisallow: /caf%C3%A9\n", "/café/menu") is False
    assert await _allowed("User-agent: *\nDisallow: /café\n", "/caf%C3%A9/menu") is False


@pytest.mark.parametrize(("status", "allowed"), [(404, True), (403, True), (500, False), (503, False)])
async def test_failures_read_as_the_rfc_says(status, allowed):
    async def get(url: str) -> Fetched:
        raise HttpStatusError("site.test", status)

    cache = RobotsCache()
    target = parse_target("http://site.test/page", ANY_PORT)
    if allowed:
        await cache.check(target, get)
    else:
        with pytest.raises(RobotsDisallowed):
            await cache.check(target, get)
    assert cache.fetches == 1


async def test_pages_of_one_origin_read_at_once_wait_for_one_robots_download():
    """A search's passages read several pages of one site at once: one robots.txt request, not one each; a
    reader that stops waiting (cancelled) leaves the download to the others."""
    started, release = asyncio.Event(), asyncio.Event()

    async def get(url: str) -> Fetched:
        started.set()
        await release.wait()
        return Fetched(url, 200, "text/plain", "utf-8", RULES.encode())

    cache = RobotsCache()
    checks = [
        asyncio.ensure_future(cache.check(parse_target(f"http://site.test{path}", ANY_PORT), get))
        for path in ("/a.html", "/b.html", "/private/x", "/c.html")
    ]
    await started.wait()
    checks[0].cancel()
    release.set()
    outcomes = await asyncio.gather(*checks, return_exceptions=True)
    assert isinstance(outcomes[0], asyncio.CancelledError)
    assert outcomes[1] is None and isinstance(outcomes[2], RobotsDisallowed) and outcomes[3] is None
    assert cache.fetches == 1
    await cache.check(parse_target("http://site.test/d.html", ANY_PORT), get)  # now from the cache
    assert cache.fetches == 1


async def test_wildcards_and_longest_match_through_a_real_fetch(server):
    resolver, dial = Resolver({"site.test": [str(PRETEND_PUBLIC)]}), Dialler(server)
    server.route("/robots.txt", Reply(200, {"Content-Type": "text/plain"}, RULES.encode()))
    for path in ("/a/b.pdf", "/private/x", "/private/public/x"):
        server.route(path, Reply(200, HTML, ARTICLE))
    reader = Reader(policy=STRICT, resolver=resolver, dial=dial)
    with pytest.raises(RobotsDisallowed, match="robots.txt of site.test"):
        await reader.read("http://site.test/a/b.pdf", use_cache=False)
    with pytest.raises(RobotsDisallowed):
        await reader.read("http://site.test/private/x", use_cache=False)
    page = await reader.read("http://site.test/private/public/x", use_cache=False)
    assert page.title == "Harbour news"
    assert server.seen("/a/b.pdf") == [] and server.seen("/private/x") == []
    assert len(server.seen("/robots.txt")) == 1
