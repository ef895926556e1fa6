"""The SSRF guard and the guarded fetcher.

Every trick is played by a real server on 127.0.0.1. The guard under test allows NO loopback: the first hop
reaches the server because the test's resolver answers a pretend public address and the test's dialler routes
that one address (and only it) to the loopback server. Every other address the fetcher tries to dial fails the
test, so nothing ever leaves loopback even if the guard were broken. Private, link-local, metadata and public
addresses are checked with a fake resolver and a dialler that records: the refusal must come before any dial.
"""

from __future__ import annotations

import asyncio
import ipaddress
import time
import zlib

import pytest

from fakeserver import FakeServer, Reply
from serpfuse.reader.fetch import Limits, decode, fetch
from serpfuse.reader.guard import Policy, Refused, address_refusal, numeric_host, parse_target
from serpfuse.reader.models import ReadError, RobotsDisallowed, Unsupported
from serpfuse.reader.service import Reader

PRETEND_PUBLIC = ipaddress.ip_address(
    "93.184.216.34"
)  # the guard sees this; the dialler maps it to the server
STRICT = Policy(allow_loopback=False, ports=frozenset({80, 443}))
HTML = {"Content-Type": "text/html; charset=utf-8"}
ARTICLE = (
    b"<html lang='en'><head><title>Harbour news</title></head><body><article><h1>Harbour news</h1>"
    + b"".join(
        b"<p>The harbour master said paragraph %d of the report covers berths, tides and the new pontoon "
        b"for visiting yachts, which opens in spring after the winter storms delayed the work.</p>" % i
        for i in range(6)
    )
    + b"</article></body></html>"
)


class Resolver:
    """A fake DNS: names -> addresses, counting lookups; ``then`` answers from the second lookup on (rebinding)."""

    def __init__(self, answers: dict[str, list[str]], then: dict[str, list[str]] | None = None):
        self.answers = answers
        self.then = then or {}
        self.lookups: list[str] = []

    async def resolve(self, host, port):
        table = self.then if self.lookups.count(host) and host in self.then else self.answers
        self.lookups.append(host)
        if host not in table:
            raise ReadError(f"cannot resolve {host}")
        return [ipaddress.ip_address(a) for a in table[host]]


class Dialler:
    """Routes the pretend public address to the loopback server; records every dial; refuses anything else."""

    def __init__(self, server: FakeServer | None):
        self.server = server
        self.dials: list[str] = []

    def __call__(self, address, port):
        self.dials.append(str(address))
        if self.server is None or address != PRETEND_PUBLIC:
            raise AssertionError(f"the fetcher tried to dial {address}:{port}")
        return "127.0.0.1", self.server.port


@pytest.fixture
def site(server):
    """The loopback server reachable as http://site.test/ (port 80 as the guard sees it)."""
    return server, Resolver({"site.test": [str(PRETEND_PUBLIC)], "loop.test": ["127.0.0.1"]}), Dialler(server)


async def _fetch(url, site, policy=STRICT, **kw):
    _, resolver, dial = site
    return await fetch(url, policy=policy, resolver=resolver, dial=dial, **kw)


# --- the address policy -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "spelling",
    [
        "2130706433",
        "0x7f000001",
        "0177.0.0.1",
        "127.1",
        "0x7f.1",
        "017700000001",
        "127.0.0.1",
        "[::1]",
        "[::ffff:127.0.0.1]",
        "[::ffff:7f00:1]",
        "[2002:7f00:1::]",
        "[64:ff9b::7f00:1]",
        "0",
        "0.0.0.0",
        "[::]",
    ],
)
def test_every_spelling_of_loopback_or_nothing_is_refused(spelling):
    with pytest.raises(Refused):
        parse_target(f"http://{spelling}/", STRICT)


@pytest.mark.parametrize(
    "address",
    [
        "10.0.0.1",
        "172.16.5.4",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "100.100.100.200",
        "224.0.0.1",
        "240.0.0.1",
        "255.255.255.255",
        "198.18.0.1",
        "192.0.2.1",
        "fd00:ec2::254",
        "fe80::1",
        "ff02::1",
        "::ffff:10.0.0.1",
        "::ffff:169.254.169.254",
        "2001:db8::1",
        "fc00::1",
    ],
)
def test_private_link_local_metadata_cgnat_multicast_reserved_are_refused(address):
    assert address_refusal(ipaddress.ip_address(address), STRICT) is not None


def test_public_addresses_pass_and_loopback_only_by_setting():
    for address in ("93.184.216.34", "1.1.1.1", "2606:4700:4700::1111"):
        assert address_refusal(ipaddress.ip_address(address), STRICT) is None
    loopback_ok = Policy(allow_loopback=True)
    assert address_refusal(ipaddress.ip_address("127.0.0.1"), loopback_ok) is None
    assert address_refusal(ipaddress.ip_address("::1"), loopback_ok) is None
    assert (
        address_refusal(ipaddress.ip_address("10.0.0.1"), loopback_ok) is not None
    )  # loopback, nothing more


def test_numeric_hosts_read_like_the_c_resolver_and_names_stay_names():
    assert str(numeric_host("2130706433")) == "127.0.0.1"
    assert str(numeric_host("0x7f000001")) == "127.0.0.1"
    assert str(numeric_host("0177.0.0.1")) == "127.0.0.1"
    assert numeric_host("example.com") is None and numeric_host("0day.example") is None


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("ftp://site.test/x", "only http and https"),
        ("file:///etc/passwd", "only http and https"),
        ("gopher://site.test/", "only http and https"),
        ("http://user:pw@site.test/", "user name or password"),
        ("http://site.test:8080/", "port 8080"),
        ("http:///nohost", "no host"),
        ("http://site.test:99999/", "valid URL"),
    ],
)
def test_url_shape_is_refused_before_resolution(url, why):
    with pytest.raises(Refused, match=why):
        parse_target(url, STRICT)


@pytest.mark.parametrize(
    "address",
    ["10.1.2.3", "192.168.0.10", "169.254.169.254", "fd00:ec2::254", "100.64.1.1", "::ffff:10.0.0.1"],
)
async def test_a_name_resolving_to_a_forbidden_address_is_refused_before_any_dial(address):
    resolver, dial = Resolver({"internal.test": [address]}), Dialler(None)
    with pytest.raises(Refused, match="refused"):
        await fetch("http://internal.test/", policy=STRICT, resolver=resolver, dial=dial)
    assert dial.dials == []


async def test_a_name_mixing_public_and_private_answers_is_refused():
    resolver, dial = Resolver({"mixed.test": ["93.184.216.34", "10.0.0.7"]}), Dialler(None)
    with pytest.raises(Refused, match="10.0.0.7"):
        await fetch("http://mixed.test/", policy=STRICT, resolver=resolver, dial=dial)
    assert dial.dials == []


async def test_a_public_address_is_dialled_exactly_as_checked():
    resolver, dial = Resolver({"public.test": ["93.184.216.35"]}), Dialler(None)
    with pytest.raises(
        AssertionError, match="tried to dial 93.184.216.35"
    ):  # the dialler stops it: no packet
        await fetch("http://public.test/", policy=STRICT, resolver=resolver, dial=dial)
    assert dial.dials == ["93.184.216.35"]


# --- tricks played by the loopback server -------------------------------------------------------------------


async def test_the_server_is_read_through_the_pretend_public_address(site):
    server, resolver, dial = site
    server.route("/a", Reply(200, HTML, ARTICLE))
    got = await _fetch("http://site.test/a", site)
    assert got.status == 200 and got.content_type == "text/html" and b"Harbour news" in got.body
    assert server.seen("/a")[0].headers["host"] == "site.test"  # Host is the name, not the pinned address
    assert dial.dials == [str(PRETEND_PUBLIC)]


@pytest.mark.parametrize(
    "location",
    [
        "http://127.0.0.1/",
        "http://[::1]/",
        "http://2130706433/",
        "http://0x7f000001/",
        "http://0177.0.0.1/",
        "http://127.1/",
        "http://loop.test/",
        "http://[::ffff:127.0.0.1]/",
        "http://169.254.169.254/latest/meta-data",
        "http://0.0.0.0/",
        "file:///etc/passwd",
        "http://site.test:22/",
    ],
)
async def test_every_redirect_hop_is_checked(site, location):
    server, _, dial = site
    server.route("/r", Reply(302, {"Location": location}))
    with pytest.raises(Refused):
        await _fetch("http://site.test/r", site)
    assert dial.dials == [str(PRETEND_PUBLIC)]  # only the first hop was dialled


async def test_redirects_are_followed_up_to_the_hop_limit(site):
    server, _, _ = site
    server.route("/ok", Reply(200, HTML, ARTICLE))
    server.route("/hop", Reply(301, {"Location": "/ok"}))
    assert (await _fetch("http://site.test/hop", site)).url.endswith("/ok")
    server.route("/loop", Reply(302, {"Location": "/loop"}))
    with pytest.raises(ReadError, match="more than 2 redirects"):
        await _fetch("http://site.test/loop", site, policy=Policy(max_redirects=2))
    assert len(server.seen("/loop")) == 3


async def test_dns_rebinding_has_nothing_to_rebind(site):
    """The name answers a public address once, then loopback: the fetcher never asks twice."""
    server, _, dial = site
    server.route("/p", Reply(200, HTML, ARTICLE))
    rebinding = Resolver({"rebind.test": [str(PRETEND_PUBLIC)]}, then={"rebind.test": ["127.0.0.1"]})
    got = await fetch("http://rebind.test/p", policy=STRICT, resolver=rebinding, dial=dial)
    assert got.status == 200 and rebinding.lookups == ["rebind.test"]
    assert dial.dials == [str(PRETEND_PUBLIC)]


def gzip_bomb(gigabytes: int = 1) -> bytes:
    """A gzip stream of ``gigabytes`` GiB of zeros, about 1 MB on the wire, built without compressing 1 GiB:
    after a full flush the compressor's output for the next identical 1 MiB block is identical, so one block's
    bytes are repeated. (The trailer is never reached by a capped reader, so it is left off.)"""
    z = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = bytes(1 << 20)
    head = z.compress(block) + z.flush(zlib.Z_FULL_FLUSH)
    repeat = z.compress(block) + z.flush(zlib.Z_FULL_FLUSH)
    return head + repeat * (1024 * gigabytes - 1)


async def test_a_gzip_bomb_stops_at_the_cap(site):
    server, _, _ = site
    bomb = gzip_bomb()
    assert len(bomb) < 2_000_000
    server.route("/bomb", Reply(200, {**HTML, "Content-Encoding": "gzip"}, bomb))
    started = time.monotonic()
    with pytest.raises(ReadError, match="larger than 1,000,000 bytes"):
        await _fetch("http://site.test/bomb", site, limits=Limits(max_bytes=1_000_000, timeout_s=20))
    assert time.monotonic() - started < 20


async def test_size_cap_without_compression_and_declared_length(site):
    server, _, _ = site
    server.route("/huge", Reply(200, {"Content-Type": "text/plain"}, huge_bytes=3_000_000))
    with pytest.raises(ReadError, match="larger than"):
        await _fetch("http://site.test/huge", site, limits=Limits(max_bytes=100_000))
    server.route("/big", Reply(200, {"Content-Type": "text/plain"}, b"x" * 200_000))
    with pytest.raises(ReadError, match="larger than 100,000"):
        await _fetch("http://site.test/big", site, limits=Limits(max_bytes=100_000))


async def test_a_slow_drip_stops_at_the_deadline(site):
    server, _, _ = site
    server.route("/drip", Reply(200, HTML, ARTICLE, drip_interval_s=0.1, drip_chunk=1))
    started = time.monotonic()
    with pytest.raises(ReadError, match="took longer than 1 s"):
        await _fetch("http://site.test/drip", site, limits=Limits(timeout_s=1.0))
    assert time.monotonic() - started < 5


async def test_content_type_is_checked_before_the_body(site):
    server, _, _ = site
    server.route("/img", Reply(200, {"Content-Type": "image/png"}, b"\x89PNG" + bytes(1000)))
    with pytest.raises(Unsupported, match="image/png"):
        await _fetch("http://site.test/img", site)
    server.route("/404", Reply(404, HTML, b"gone"))
    with pytest.raises(ReadError, match="HTTP 404"):
        await _fetch("http://site.test/404", site)


async def test_charset_from_header_meta_or_detection(site):
    server, _, _ = site
    text = "Ça coûte très cher à Zürich, dit-elle. " * 20
    server.route(
        "/latin", Reply(200, {"Content-Type": "text/plain; charset=iso-8859-1"}, text.encode("latin-1"))
    )
    assert decode(await _fetch("http://site.test/latin", site)) == text
    page = f"<html><head><meta charset='windows-1252'></head><body><p>{text}</p></body></html>"
    server.route("/meta", Reply(200, {"Content-Type": "text/html"}, page.encode("cp1252")))
    assert text in decode(await _fetch("http://site.test/meta", site))
    server.route("/bare", Reply(200, {"Content-Type": "text/plain"}, text.encode("cp1252")))
    assert "Zürich" in decode(await _fetch("http://site.test/bare", site))


async def test_a_million_deep_dom_reads_or_fails_in_one_line(site):
    server, _, _ = site
    deep = (
        b"<html><body>"
        + b"<div>" * 200_000
        + b"<p>deep text here</p>"
        + b"</div>" * 200_000
        + b"</body></html>"
    )
    assert len(deep) > 1_000_000
    server.route("/deep", Reply(200, HTML, deep))
    server.route("/robots.txt", Reply(404, {"Content-Type": "text/plain"}, b""))
    reader = Reader(policy=STRICT, resolver=site[1], dial=site[2])
    started = time.monotonic()
    try:
        page = await reader.read("http://site.test/deep")
        assert page.text
    except ReadError as exc:
        assert "\n" not in str(exc)
    assert time.monotonic() - started < 60


# --- the reader: robots.txt, cache ----------------------------------------------------------------------------


async def test_robots_txt_is_respected_and_cached_per_origin(site):
    server, resolver, dial = site
    server.route(
        "/robots.txt", Reply(200, {"Content-Type": "text/plain"}, b"User-agent: *\nDisallow: /private\n")
    )
    server.route("/public", Reply(200, HTML, ARTICLE))
    server.route("/private/x", Reply(200, HTML, ARTICLE))
    reader = Reader(policy=STRICT, resolver=resolver, dial=dial)
    page = await reader.read("http://site.test/public", use_cache=False)
    assert page.title == "Harbour news" and "berths, tides" in page.markdown
    with pytest.raises(RobotsDisallowed, match="robots.txt"):
        await reader.read("http://site.test/private/x", use_cache=False)
    assert server.seen("/private/x") == []
    assert len(server.seen("/robots.txt")) == 1 and reader.robots_cache.fetches == 1
    off = Reader(policy=STRICT, resolver=resolver, dial=dial, robots=False)
    assert (await off.read("http://site.test/private/x", use_cache=False)).title == "Harbour news"


async def test_robots_unavailable_disallows_missing_allows(site):
    server, resolver, dial = site
    server.route("/robots.txt", Reply(503, {"Content-Type": "text/plain"}, b"busy"))
    server.route("/a", Reply(200, HTML, ARTICLE))
    with pytest.raises(RobotsDisallowed):
        await Reader(policy=STRICT, resolver=resolver, dial=dial).read("http://site.test/a", use_cache=False)
    server.route("/robots.txt", Reply(404, {"Content-Type": "text/html"}, b"nope"))
    page = await Reader(policy=STRICT, resolver=resolver, dial=dial).read(
        "http://site.test/a", use_cache=False
    )
    assert page.kind == "html"


async def test_pages_are_cached_by_their_normalized_url(site, tmp_path):
    from serpfuse.state.cache import SqliteResultCache

    server, resolver, dial = site
    server.route("/robots.txt", Reply(404, {}, b""))
    server.route("/story", Reply(200, HTML, ARTICLE))
    reader = Reader(
        policy=STRICT, resolver=resolver, dial=dial, cache=SqliteResultCache(tmp_path / "c.sqlite3")
    )
    first = await reader.read("http://site.test/story?utm_source=x")
    again = await reader.read("http://SITE.test/story")
    assert not first.cached and again.cached and again.markdown == first.markdown
    assert len(server.seen("/story")) == 1


async def test_fetches_run_concurrently_under_one_deadline(site):
    server, _, _ = site
    server.route("/slow", Reply(200, HTML, ARTICLE, delay_s=0.5))
    started = time.monotonic()
    results = await asyncio.gather(*(_fetch("http://site.test/slow", site) for _ in range(4)))
    assert all(r.status == 200 for r in results) and time.monotonic() - started < 10


async def test_an_international_name_is_resolved_and_pinned_in_its_idna_form(site):
    server, _, dial = site
    server.route("/idn", Reply(200, HTML, ARTICLE))
    resolver = Resolver({"xn--bcher-kva.test": [str(PRETEND_PUBLIC)]})
    got = await fetch("http://bücher.test/idn", policy=STRICT, resolver=resolver, dial=dial)
    assert got.status == 200 and resolver.lookups == ["xn--bcher-kva.test"]
    assert server.seen("/idn")[0].headers["host"] == "xn--bcher-kva.test"


# --- what is no URL at all: typed, before the cache or any resolution ----------------------------------------


@pytest.mark.parametrize(
    ("url", "why"),
    [
        (None, "not text but NoneType"),
        (42, "not text but int"),
        (b"http://site.test/", "not text but bytes"),
        ("", "is empty"),
        ("   ", "is empty"),
        ("not a url", "no scheme"),
        ("site.test/story", "no scheme"),
        ("http://", "no host"),
        ("http://.../", "no host"),
        ("http://site.test:abc/", "not a valid URL"),
        ("http://[::1", "not a valid URL"),
        ("http://site.test/\r\nX-Injected: 1", "control character"),
        ("http://site.test\x00.evil/", "control character"),
        ("http://site.test/" + "a" * 9000, "longer than 8,192"),
        ("http://exa mple.test/", "not a domain name"),
        ("http://ex%41mple.test/", "not a domain name"),
        ("http://" + "a" * 64 + ".test/", "not a domain name"),
        ("http://a..b/", "not a domain name"),
    ],
)
async def test_what_is_no_url_is_invalid_url_before_the_cache_or_any_lookup(url, why, tmp_path):
    from serpfuse.reader.guard import InvalidURL
    from serpfuse.state.cache import SqliteResultCache

    resolver, dial = Resolver({}), Dialler(None)
    reader = Reader(
        policy=STRICT, resolver=resolver, dial=dial, cache=SqliteResultCache(tmp_path / "c.sqlite3")
    )
    with pytest.raises(InvalidURL, match=why) as caught:
        await reader.read(url)
    message = str(caught.value)
    assert message.startswith("not a valid URL: ") and caught.value.exit_code == 2 and "\n" not in message
    assert resolver.lookups == [] and dial.dials == []


@pytest.mark.parametrize(
    "url", ["ftp://site.test/x", "javascript:alert(1)", "http://user:pw@site.test/", "http://site.test:8080/"]
)
async def test_urls_the_policy_refuses_are_refused_not_invalid(url):
    from serpfuse.reader.guard import InvalidURL

    with pytest.raises(Refused) as caught:
        await Reader(policy=STRICT, resolver=Resolver({}), dial=Dialler(None)).read(url)
    assert not isinstance(caught.value, InvalidURL) and not str(caught.value).startswith("not a valid URL")
