"""URL canonicalisation, redirect unwrapping, dedup keys and registrable domains (issue 2 item 3)."""

from __future__ import annotations

import base64
import json
from urllib.parse import quote, urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import need
from serpfuse.urls import (
    canonical_url,
    dedup_key,
    dns_host,
    domain_matches,
    favicon_url,
    host_of,
    is_tracking_param,
    key_of_canonical,
    registrable_domain,
    unwrap_redirect,
)


def bing_ck(target: str) -> str:
    """A Bing ck/a click URL as the SERP emits it: "a1" + unpadded urlsafe base64 of the target."""
    payload = base64.urlsafe_b64encode(target.encode()).decode().rstrip("=")
    return f"https://www.bing.com/ck/a?!&&p=3c1b7f5d0a2e4c1aJmltdHM9MTcwMDAwMDAwMA&ptn=3&ver=2&hsh=4&fclid=1e2d&u=a1{payload}&ntb=1"


def ddg(target: str, prefix: str = "//duckduckgo.com") -> str:
    return f"{prefix}/l/?uddg={quote(target, safe='')}&rut=9f4e0b1c2d3a"


YAHOO = (
    "https://r.search.yahoo.com/_ylt=AwrgEa6nxI9hE8AArF0L5gt.;_ylu=Y29sbwNncTEEcG9zAzEEdnRpZANTQTEwMzNfMQRzZWMDc3I-"
    "/RV=2/RE=1636840743/RO=10/RU=https%3a%2f%2fen.wikipedia.org%2fwiki%2fBill_Callahan_%28American_football%29"
    "/RK=2/RS=hvy6hu2.eUjTvpHN95why9hMthw-"
)
GOOGLE = (
    "https://www.google.com/url?q=https://www.youtube.com/watch%3Fv%3DLx_e0Dlc_y4&sa=U"
    "&ved=2ahUKEwjmzvO9wcDzAhUYvJ4KHal-AHkQtwJ6BAgDEAE&usg=AOvVaw2a0Ca2_Gp5OpkZ89Q0iTGN"
)
# Bing and a Chinese target: the base64 payload carries UTF-8 and needs padding restored (len % 4 != 0).
CN_TARGET = "https://zh.wikipedia.org/wiki/东数西算"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            bing_ck("https://docs.python.org/3/library/asyncio.html"),
            "https://docs.python.org/3/library/asyncio.html",
        ),
        (bing_ck(CN_TARGET), CN_TARGET),
        (bing_ck("https://a.io/"), "https://a.io/"),  # payload length needing "=" padding
        (
            ddg("https://www.postgresql.org/docs/current/logical-replication.html?x=1&y=2"),
            "https://www.postgresql.org/docs/current/logical-replication.html?x=1&y=2",
        ),
        (ddg("https://example.com/a", "https://html.duckduckgo.com"), "https://example.com/a"),
        (ddg("https://example.com/a", ""), "https://example.com/a"),  # host-less href of the HTML endpoint
        (YAHOO, "https://en.wikipedia.org/wiki/Bill_Callahan_(American_football)"),
        (GOOGLE, "https://www.youtube.com/watch?v=Lx_e0Dlc_y4"),
        ("/url?q=https://kubernetes.io/docs/&sa=U&ved=x", "https://kubernetes.io/docs/"),
        ("https://www.google.co.uk/url?url=https://www.bbc.co.uk/news&rct=j", "https://www.bbc.co.uk/news"),
        (bing_ck(GOOGLE), "https://www.youtube.com/watch?v=Lx_e0Dlc_y4"),  # nested redirectors
    ],
)
def test_unwrap_redirect_returns_target(url: str, expected: str) -> None:
    assert unwrap_redirect(url) == expected


@pytest.mark.parametrize(
    "url",
    [
        "https://www.bing.com/search?q=python&u=a1aHR0cHM6Ly9hLmNvbQ",  # not a ck/a path
        "https://www.bing.com/ck/a?u=a1%%%notbase64",  # garbled payload
        "https://www.bing.com/ck/a?u=a1" + base64.urlsafe_b64encode(b"javascript:alert(1)").decode(),
        "https://notbing.com/ck/a?u=a1aHR0cHM6Ly9hLmNvbQ",  # lookalike host
        "https://duckduckgo.com/l/?kh=-1",  # no uddg
        "https://example.com/url?q=https://a.com/",  # /url on a host that is not Google
        "https://r.search.yahoo.com/_ylt=abc/RV=2/RE=1",  # no RU
        "https://docs.python.org/3/",
        "",
        "not a url at all",
    ],
)
def test_unwrap_redirect_leaves_other_urls_alone(url: str) -> None:
    assert unwrap_redirect(url) == url


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        # tracking families
        ("https://a.com/p?utm_source=x&utm_medium=y&utm_campaign=z&id=7", "https://a.com/p?id=7"),
        ("https://a.com/p?UTM_Source=x&id=7", "https://a.com/p?id=7"),  # names compare case-insensitively
        ("https://a.com/p?gclid=1&dclid=2&gbraid=3&wbraid=4&id=7", "https://a.com/p?id=7"),
        ("https://a.com/p?fbclid=1&msclkid=2&yclid=3&id=7", "https://a.com/p?id=7"),
        ("https://a.com/p?mc_cid=1&mc_eid=2&id=7", "https://a.com/p?id=7"),
        (
            "https://a.com/p?_hsenc=1&_hsmi=2&__hstc=3&__hssc=4&__hsfp=5&hsCtaTracking=6&id=7",
            "https://a.com/p?id=7",
        ),
        ("https://a.com/p?igshid=1&ref_src=twsrc&ref_url=x&id=7", "https://a.com/p?id=7"),
        ("https://a.com/p?mkt_tok=1&vero_id=2&oly_anon_id=3&oly_enc_id=4&id=7", "https://a.com/p?id=7"),
        ("https://a.com/p?_ga=1&_gl=2&srsltid=3&spm=a2g0o&id=7", "https://a.com/p?id=7"),
        ("https://a.com/p?utm_source=x", "https://a.com/p"),  # only tracking: the "?" goes too
        # short ambiguous names are content, not tracking
        ("https://youtu.be/abc?si=xyz", "https://youtu.be/abc?si=xyz"),
        ("https://a.com/p?source=docs&ref=main", "https://a.com/p?ref=main&source=docs"),
        ("https://a.com/p?utm=1&gclid_like=2", "https://a.com/p?gclid_like=2&utm=1"),  # not utm_*, not gclid
        # query sort keeps repeated keys
        ("https://a.com/s?q=rust&b=2&a=1&tag=z&tag=y", "https://a.com/s?a=1&b=2&q=rust&tag=y&tag=z"),
        # fragment, default ports, userinfo, case
        ("https://a.com/docs#install", "https://a.com/docs"),
        ("http://a.com:80/x", "http://a.com/x"),
        ("https://a.com:443/x", "https://a.com/x"),
        ("https://a.com:80/x", "https://a.com:80/x"),  # 80 is not https's default
        ("http://a.com:8080/x", "http://a.com:8080/x"),
        (
            "HTTPS://WWW.Example.COM/Path/To/Page",
            "https://www.example.com/Path/To/Page",
        ),  # path keeps its case
        ("https://user:secret@example.com/x", "https://example.com/x"),
        ("https://example.com./x", "https://example.com/x"),  # trailing dot of a fully-qualified host
        # IDNA and percent-encoding
        ("https://Bücher.DE/x", "https://xn--bcher-kva.de/x"),
        ("https://例え.jp/パス", "https://xn--r8jz45g.jp/%E3%83%91%E3%82%B9"),
        ("https://a.com/l%c3%bctfen", "https://a.com/l%C3%BCtfen"),
        # kept as given: scheme, www, trailing slash
        ("http://www.a.com/x/", "http://www.a.com/x/"),
        ("https://a.com", "https://a.com/"),
        # redirectors unwrapped, then cleaned
        (bing_ck("https://docs.python.org/3/?utm_source=bing#top"), "https://docs.python.org/3/"),
        (ddg("https://Example.com:443/a?b=2&a=1&fbclid=x"), "https://example.com/a?a=1&b=2"),
        ("  https://a.com/x  ", "https://a.com/x"),
        ("http://[::1]:80/x", "http://[::1]/x"),
    ],
)
def test_canonical_url(url: str, expected: str) -> None:
    assert canonical_url(url) == expected


@pytest.mark.parametrize(
    "url",
    [
        "ftp://a.com/file",
        "mailto:someone@example.com",
        "javascript:void(0)",
        "data:text/html,hi",
        "//a.com/no-scheme",
        "a.com/no-scheme",
        "https:///no-host",
        "https://a.com:99999/bad-port",
        "https://a.com:port/bad-port",
        "",
        "   ",
    ],
)
def test_canonical_url_rejects_non_web(url: str) -> None:
    assert canonical_url(url) is None


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("http://example.com/x", "https://example.com/x"),
        ("https://www.example.com/x", "https://example.com/x"),
        ("https://example.com/x/", "https://example.com/x"),
        ("https://a.com", "https://a.com/"),
        ("http://WWW.A.com:80/x/?utm_source=n&b=2&a=1#f", "https://a.com/x?a=1&b=2"),
        (bing_ck("https://www.a.com/doc/"), "http://a.com/doc"),
    ],
)
def test_dedup_key_folds_equivalents(a: str, b: str) -> None:
    assert dedup_key(a) == dedup_key(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("https://a.com/X", "https://a.com/x"),  # paths are case-sensitive
        ("https://a.com/x?id=1", "https://a.com/x?id=2"),
        ("https://a.com:8443/x", "https://a.com/x"),
        ("https://www2.a.com/x", "https://a.com/x"),  # only a leading "www." is folded
        ("https://docs.a.com/x", "https://a.com/x"),
        ("https://a.com/x?si=1", "https://a.com/x"),
    ],
)
def test_dedup_key_keeps_different_pages_apart(a: str, b: str) -> None:
    assert dedup_key(a) != dedup_key(b)


@pytest.mark.parametrize("url", ["mailto:x@y.com", "  not a url  ", "ftp://a.com/f"])
def test_dedup_key_of_invalid_url_is_the_stripped_input(url: str) -> None:
    assert dedup_key(url) == url.strip()
    assert dedup_key(url) == dedup_key(url.strip())


def test_dedup_key_does_not_strip_www_from_a_bare_suffix() -> None:
    assert dedup_key("https://www.com/x") == "www.com/x"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://user:pw@Docs.Python.org:8443/3/", "docs.python.org"),
        ("HTTP://WWW.BBC.CO.UK", "www.bbc.co.uk"),
        ("https://Bücher.de/x", "xn--bcher-kva.de"),
        ("https://[2001:db8::1]:8080/", "2001:db8::1"),
        ("example.com/path", "example.com"),  # lenient: a scheme-less URL
        ("localhost:8080", "localhost"),
        ("Example.COM.", "example.com"),
        ("mailto:a@b.com", ""),
        ("/relative/path", ""),
        ("", ""),
    ],
)
def test_host_of(url: str, expected: str) -> None:
    assert host_of(url) == expected


@pytest.mark.parametrize(
    ("host_or_url", "expected"),
    [
        ("www.bbc.co.uk", "bbc.co.uk"),
        ("https://news.bbc.co.uk/x", "bbc.co.uk"),
        ("foo.github.io", "foo.github.io"),  # private suffix kept: each github.io site is its own domain
        ("https://bar.foo.github.io/", "foo.github.io"),
        ("a.blogspot.com", "a.blogspot.com"),
        ("sub.example.com", "example.com"),
        ("deep.sub.example.com.au", "example.com.au"),
        ("https://Bücher.de/x", "xn--bcher-kva.de"),
        ("127.0.0.1", "127.0.0.1"),  # an IP is its own domain, not "0.1"
        ("http://[::1]:8080/", "::1"),
        ("localhost", "localhost"),
        ("co.uk", "co.uk"),  # a bare suffix returns itself
        ("github.io", "github.io"),
        ("", ""),
    ],
)
def test_registrable_domain(host_or_url: str, expected: str) -> None:
    assert registrable_domain(host_or_url) == expected


@pytest.mark.parametrize(
    ("host", "domain", "expected"),
    [
        ("example.com", "example.com", True),
        ("sub.example.com", "example.com", True),
        ("a.b.example.com", "example.com", True),
        ("www.example.com", "example.com", True),
        ("example.com", "www.example.com", True),  # www-insensitive both ways
        ("EXAMPLE.com", "example.COM", True),
        ("https://docs.example.com/x", "example.com", True),  # a URL works as the host side
        ("notexample.com", "example.com", False),  # lookalike
        ("example.com.evil.net", "example.com", False),
        ("example.com", "sub.example.com", False),  # a parent is not a subdomain
        ("example.org", "example.com", False),
        ("example.com", "", False),
        ("", "example.com", False),
    ],
)
def test_domain_matches(host: str, domain: str, expected: bool) -> None:
    assert domain_matches(host, domain) is expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("utm_content", True),
        ("UTM_TERM", True),
        ("mc_tc", True),
        ("gclid", True),
        ("si", False),
        ("ref", False),
    ],
)
def test_tracking_param_table(name: str, expected: bool) -> None:
    assert is_tracking_param(name) is expected


# --- recorded engine URLs -----------------------------------------------------------------------------------


def recorded_urls(data_dir) -> list[str]:
    api = json.loads(need(data_dir / "api-json" / "searxng.json").read_text(encoding="utf-8"))
    crw = json.loads(need(data_dir / "crw56" / "searxng_raw.json").read_text(encoding="utf-8"))
    urls = [row["url"] for row in api["results"]]
    urls += [row["url"] for query in crw for row in query["results"]]
    return urls


def test_recorded_urls_canonicalise_and_dedup_stably(data_dir) -> None:
    urls = recorded_urls(data_dir)
    assert len(urls) > 800  # 30 + 827 rows: the files were read whole
    for url in urls:
        canonical = canonical_url(url)
        assert canonical is not None, url
        assert canonical_url(canonical) == canonical, url
        assert dedup_key(canonical) == dedup_key(url), url
        assert host_of(canonical) == host_of(url), url


# --- properties ---------------------------------------------------------------------------------------------

_label = st.from_regex(r"[a-zA-Z0-9]([a-zA-Z0-9-]{0,10}[a-zA-Z0-9])?", fullmatch=True)
_host = st.one_of(
    st.lists(_label, min_size=2, max_size=4).map(".".join),
    st.sampled_from(["Bücher.de", "例え.jp", "www.Example.com", "127.0.0.1", "[::1]"]),
)
_segment = st.text(
    alphabet=st.characters(codec="utf-8", exclude_characters="/?#\\", exclude_categories=("Cs", "Cc")),
    max_size=8,
)
_param = st.one_of(
    st.sampled_from(["utm_source", "gclid", "fbclid", "mc_eid", "id", "q", "page", "si"]), _label
)
_value = st.text(
    alphabet=st.characters(codec="utf-8", exclude_characters="&#", exclude_categories=("Cs", "Cc")),
    max_size=8,
)


@st.composite
def http_urls(draw: st.DrawFn) -> str:
    scheme = draw(st.sampled_from(["http", "https", "HTTP", "Https"]))
    port = draw(st.sampled_from(["", ":80", ":443", ":8080"]))
    userinfo = draw(st.sampled_from(["", "user@", "user:pw@"]))
    path = "/".join(draw(st.lists(_segment, max_size=4)))
    pairs = draw(st.lists(st.tuples(_param, _value), max_size=4))
    query = "&".join(f"{quote(k)}={quote(v)}" for k, v in pairs)
    fragment = draw(st.sampled_from(["", "#top", "#a/b?c"]))
    return f"{scheme}://{userinfo}{draw(_host)}{port}/{path}{'?' + query if query else ''}{fragment}"


@settings(max_examples=300, deadline=None)
@given(http_urls())
def test_canonical_url_is_idempotent(url: str) -> None:
    canonical = canonical_url(url)
    assert canonical is not None
    assert canonical_url(canonical) == canonical
    assert dedup_key(canonical) == dedup_key(url) == key_of_canonical(canonical)
    parts = urlsplit(canonical)
    assert parts.username is None and parts.fragment == "" and "#" not in canonical
    assert not any(is_tracking_param(k.split("=")[0]) for k in canonical.partition("?")[2].split("&") if k)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60))
def test_url_functions_never_raise(text: str) -> None:
    unwrap_redirect(text)
    canonical_url(text)
    dedup_key(text)
    host_of(text)
    registrable_domain(text)
    domain_matches(text, "example.com")


# --- the fast path for URLs that are already canonical ------------------------------------------------------


def _recorded_urls(recording) -> set[str]:
    urls: set[str] = set()

    def walk(node) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "url" and isinstance(value, str):
                    urls.add(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(json.loads(recording.read_text(encoding="utf-8")))
    return urls


def test_plain_urls_are_what_the_full_canonicalisation_gives(recording) -> None:
    from serpfuse.urls import _canonical_slow, _plain

    urls = _recorded_urls(recording)
    plain = [u for u in urls if _plain(u)]
    assert len(plain) > len(urls) / 2  # the fast path is the common case on real result URLs
    assert [u for u in plain if _canonical_slow(u) != u] == []
    assert all(canonical_url(u) == _canonical_slow(u) for u in urls)


@pytest.mark.parametrize(
    "url",
    [
        "https://a.com",  # w3lib adds the path's "/"
        "https://a.com/x/../y",  # dot segments are resolved
        "https://a.com/.well-known/x",
        "https://a.com//x",
        "https://www.google.com/url",  # redirectors are unwrapped
        "https://duckduckgo.com/l/",
        "https://www.bing.com/ck/a",
        "https://xn--bcher-kva.de/x",  # punycode goes through IDNA
        "HTTPS://A.com/x",
        "https://a.com/x?b=1&a=2",
        "https://a.com/a%20b",
        "https://a.com/a;p",
        "https://a.com:443/x",
        "https://a.com./x",
        "https://user@a.com/x",
    ],
)
def test_urls_the_fast_path_leaves_to_the_full_one(url: str) -> None:
    from serpfuse.urls import _canonical_slow, _plain

    assert not _plain(url)
    assert canonical_url(url) == _canonical_slow(url)


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["http", "https"]),
    st.lists(st.text("abz09-", min_size=1, max_size=6), min_size=1, max_size=4),
    st.text("abz09-._~/AZ", max_size=16),
)
def test_fast_path_agrees_with_the_full_one(scheme: str, labels: list[str], path: str) -> None:
    from serpfuse.urls import _canonical_slow, _plain

    url = f"{scheme}://{'.'.join(labels)}/{path}"
    if _plain(url):
        assert _canonical_slow(url) == url


@pytest.mark.parametrize(
    ("host", "wire"),
    [
        ("example.com", "example.com"),
        ("a-b.c_d.example", "a-b.c_d.example"),
        ("bücher.example", "xn--bcher-kva.example"),
        ("a" * 63 + ".com", "a" * 63 + ".com"),
        ("a..b", None),  # an empty label
        (".a", None),
        ("-a-.com", "-a-.com"),
        ("a" * 64 + ".com", None),  # a label over 63
        (".".join(["a" * 63] * 4), None),  # a name over 253
        ("a" * 70_000, None),
        ("a\u2029b", None),  # no resolver encodes it
        ("a b", None),
        ("a%00b", None),
        ("\udcff", None),
        ("", None),
    ],
)
def test_dns_host(host: str, wire: str | None) -> None:
    assert dns_host(host) == wire


def test_favicon_url_is_the_origin_s_conventional_icon() -> None:
    assert favicon_url("https://a.example:8443/x/y?q=1#f") == "https://a.example:8443/favicon.ico"
