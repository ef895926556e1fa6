"""Transport against a real socket: size cap, whole-call deadline, resets, proxies, and key-free errors."""

from __future__ import annotations

import importlib.util
import socket
import time

import pytest

from fakeserver import FakeServer, Reply
from serpfuse.engines.base import EngineError, EngineTimeout, RequestSpec
from serpfuse.sources.request_headers import API_USER_AGENT, BROWSER_HEADERS, fetch_site
from serpfuse.sources.transport import Transport
from serpfuse.sources.transport_errors import IMPERSONATE_HINT, ImpersonationUnavailable, ResponseTooLarge

SECRET = "sk-live-TOPSECRET-4f9a2c"


@pytest.fixture
def transport(httpx_transport):
    """httpx2's client for this module; test_transport_impersonate tests libcurl's."""
    return httpx_transport


def spec(server: FakeServer, path: str, **kw) -> RequestSpec:
    return RequestSpec("GET", server.url + path, **kw)


def chain(exc: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    while exc is not None and exc not in out:
        out.append(exc)
        exc = exc.__cause__ or exc.__context__
    return out


def assert_no_secret(exc: BaseException) -> None:
    for e in chain(exc):
        assert SECRET not in str(e) and SECRET not in repr(e)
        assert "?" not in str(e), f"a URL query string leaked into {e!r}"


async def test_ok_response_has_lowercase_headers_and_body(server, transport):
    server.route("/a", Reply(200, {"X-Thing": "1", "Content-Type": "text/plain"}, b"hello"))
    status, headers, body = await transport.send(spec(server, "/a"), timeout_s=5)
    assert (status, body) == (200, b"hello")
    assert headers["x-thing"] == "1" and headers["content-type"] == "text/plain"


async def test_default_headers_api_vs_browser_and_engine_headers_win(server, transport):
    server.route("/h", Reply(200, body=b"{}"))
    await transport.send(spec(server, "/h", headers={"Accept": "text/x-custom"}), timeout_s=5)
    await transport.send(spec(server, "/h"), timeout_s=5, browser=True)
    api, browser = server.seen("/h")
    assert api.headers["user-agent"] == API_USER_AGENT
    assert api.headers["accept"] == "text/x-custom"  # the engine's own header is not overridden
    assert browser.headers["user-agent"] == BROWSER_HEADERS["User-Agent"]


async def test_without_impersonation_html_engines_still_send_a_browser_navigation(server, transport):
    server.route("/nav", Reply(200, body=b"ok"))
    referer = server.url + "/"
    await transport.send(spec(server, "/nav"), timeout_s=5, browser=True)
    await transport.send(
        spec(server, "/nav", headers={"Referer": referer, "accept-language": "de"}), timeout_s=5, browser=True
    )
    typed, posted = server.seen("/nav")
    assert "Chrome/152." in typed.headers["user-agent"] and 'v="152"' in typed.headers["sec-ch-ua"]
    assert typed.headers["sec-fetch-site"] == "none" and posted.headers["sec-fetch-site"] == "same-origin"
    assert typed.headers["sec-fetch-mode"] == "navigate" and typed.headers["sec-fetch-dest"] == "document"
    assert posted.headers["accept-language"] == "de"  # the engine's header replaces the default
    fetch = [n for n in typed.headers if n.startswith("sec-fetch-")]
    assert fetch == ["sec-fetch-site", "sec-fetch-mode", "sec-fetch-user", "sec-fetch-dest"]  # Chrome's order


@pytest.mark.parametrize(
    ("referer", "url", "site"),
    [
        (None, "https://html.duckduckgo.com/html/", "none"),
        ("https://html.duckduckgo.com/", "https://html.duckduckgo.com/html/", "same-origin"),
        ("https://duckduckgo.com/", "https://html.duckduckgo.com/html/", "same-site"),
        ("https://www.startpage.com/", "https://www.bing.com/search", "cross-site"),
        ("http://html.duckduckgo.com/", "https://html.duckduckgo.com/html/", "same-site"),
    ],
)
def test_fetch_site_follows_the_referer(referer, url, site):
    headers = {"Referer": referer} if referer else None
    assert fetch_site(RequestSpec("GET", url, headers=headers)) == site


async def test_params_form_and_cookies_are_sent(server, transport):
    server.route("/f", Reply(200, body=b"ok"))
    await transport.send(
        RequestSpec(
            "POST", server.url + "/f", params={"x": "1"}, data={"q": "rust async"}, cookies={"kl": "us-en"}
        ),
        timeout_s=5,
    )
    (seen,) = server.seen("/f")
    assert seen.method == "POST" and seen.query == {"x": ["1"]}
    assert seen.body == b"q=rust+async"
    assert seen.headers["cookie"] == "kl=us-en"


async def test_huge_body_without_content_length_is_cut_at_the_cap(server, transport):
    server.route("/huge", Reply(200, huge_bytes=6 * 1024 * 1024))
    with pytest.raises(ResponseTooLarge) as info:
        await transport.send(spec(server, "/huge"), timeout_s=10)
    assert info.value.status == "error" and "too large" in info.value.message


async def test_declared_content_length_over_the_cap_is_refused_before_reading(server, transport):
    server.route("/big", Reply(200, body=b"y" * 5000))
    with pytest.raises(ResponseTooLarge):
        await transport.send(spec(server, "/big"), timeout_s=5, max_bytes=1000)
    status, _, body = await transport.send(spec(server, "/big"), timeout_s=5, max_bytes=5000)
    assert status == 200 and len(body) == 5000  # exactly at the cap is fine


async def test_a_dripping_body_cannot_outlast_the_timeout(server, transport):
    # 200 bytes at 50 ms each would take 10 s; every single read is fast, only the whole call is slow.
    server.route("/drip", Reply(200, body=b"z" * 200, drip_interval_s=0.05))
    started = time.monotonic()
    with pytest.raises(EngineTimeout) as info:
        await transport.send(spec(server, "/drip", params={"key": SECRET}), timeout_s=0.5)
    elapsed = time.monotonic() - started
    assert elapsed < 10 / 4, "the per-call deadline did not cut the drip short"
    assert info.value.status == "timeout"
    assert_no_secret(info.value)


async def test_slow_headers_time_out_with_a_safe_message(server, transport):
    server.route("/slow", Reply(200, body=b"late", delay_s=5))
    with pytest.raises(EngineTimeout) as info:
        await transport.send(
            spec(server, "/slow", params={"api_key": SECRET}, headers={"X-Subscription-Token": SECRET}),
            timeout_s=0.3,
        )
    assert_no_secret(info.value)
    assert "127.0.0.1" in info.value.message  # the host is named, the query string is not


async def test_connection_reset_is_an_engine_error(server, transport):
    server.route("/rst", Reply(reset=True))
    with pytest.raises(EngineError) as info:
        await transport.send(spec(server, "/rst", params={"key": SECRET}), timeout_s=5)
    assert info.value.status == "error"
    assert not isinstance(info.value, EngineTimeout)
    assert_no_secret(info.value)


async def test_reset_in_the_middle_of_the_body_is_an_engine_error(server, transport):
    server.route("/half", Reply(200, body=b"q" * 10000, reset_after_body_bytes=100))
    with pytest.raises(EngineError) as info:
        await transport.send(spec(server, "/half"), timeout_s=5)
    assert "reset" in info.value.message or "closed" in info.value.message


async def test_refused_connection_is_an_engine_error(transport):
    with socket.socket() as sock:  # a port that was free a moment ago and has no listener now
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(EngineError) as info:
        await transport.send(RequestSpec("GET", f"http://127.0.0.1:{port}/x?key={SECRET}"), timeout_s=5)
    assert "connection failed" in info.value.message
    assert_no_secret(info.value)


async def test_error_bodies_can_be_left_unread(server, transport):
    server.route("/402", Reply(402, {"Content-Type": "application/json"}, b'{"password": "hunter2"}'))
    server.route("/200", Reply(200, body=b'{"results": []}'))
    status, _, body = await transport.send(spec(server, "/402"), timeout_s=5, read_error_body=False)
    assert (status, body) == (402, b"")
    _, _, body = await transport.send(spec(server, "/200"), timeout_s=5, read_error_body=False)
    assert body == b'{"results": []}'  # only non-2xx bodies are skipped
    _, _, body = await transport.send(spec(server, "/402"), timeout_s=5)
    assert b"hunter2" in body  # and only when asked


async def test_redirects_are_followed_only_when_asked(server, transport):
    server.route("/from", Reply(302, {"Location": "/to"}))
    server.route("/to", Reply(200, body=b"landed"))
    status, _, _ = await transport.send(spec(server, "/from"), timeout_s=5)
    assert status == 302
    status, _, body = await transport.send(spec(server, "/from"), timeout_s=5, follow_redirects=True)
    assert (status, body) == (200, b"landed")


async def test_proxy_setting_routes_requests_through_the_proxy(server):
    # The fake server plays an HTTP proxy: it receives the absolute-form request for a host that does not exist.
    server.route("/via-proxy", Reply(200, body=b"proxied"))
    async with Transport(proxy=server.url, trust_env=False) as t:
        status, _, body = await t.send(
            RequestSpec("GET", "http://search.example.invalid/via-proxy"), timeout_s=5
        )
    assert (status, body) == (200, b"proxied")
    assert server.seen("/via-proxy")[0].headers["host"] == "search.example.invalid"


async def test_a_dead_proxy_is_named_in_the_error():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    async with Transport(proxy=f"http://user:pw@127.0.0.1:{port}", trust_env=False) as t:
        with pytest.raises(EngineError) as info:
            await t.send(RequestSpec("GET", f"http://search.example.invalid/x?key={SECRET}"), timeout_s=5)
    assert info.value.message == "connection failed (search.example.invalid via proxy)"
    assert_no_secret(info.value)
    assert "pw" not in str(info.value)


async def test_trust_env_picks_up_http_proxy(server, monkeypatch):
    server.route("/env-proxy", Reply(200, body=b"env"))
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", server.url)
    async with Transport() as t:
        _, _, body = await t.send(RequestSpec("GET", "http://search.example.invalid/env-proxy"), timeout_s=5)
    assert body == b"env"
    assert "set" in repr(Transport(proxy="http://user:pw@proxy:3128")) and "pw" not in repr(
        Transport(proxy="http://user:pw@proxy:3128")
    )


async def test_the_client_is_shared_and_http2_capable(server, transport):
    server.route("/a", Reply(200, body=b"1"))
    await transport.send(spec(server, "/a"), timeout_s=5)
    first = transport.client
    await transport.send(spec(server, "/a"), timeout_s=5)
    assert transport.client is first
    # HTTP/2 is offered (ALPN on TLS; the plain-HTTP fake server keeps HTTP/1.1). A private attribute, so
    # only checked where this httpx2 version has it.
    pool = getattr(getattr(first, "_transport", None), "_pool", None)
    if pool is not None and hasattr(pool, "_http2"):
        assert pool._http2 is True
    assert importlib.util.find_spec("h2") is not None


@pytest.mark.skipif(importlib.util.find_spec("curl_cffi") is not None, reason="curl_cffi is installed")
def test_impersonation_without_curl_cffi_is_a_clear_one_line_error():
    with pytest.raises(ImpersonationUnavailable) as info:
        Transport(impersonate=True)
    assert str(info.value) == IMPERSONATE_HINT
    assert "\n" not in str(info.value) and "curl_cffi" in str(info.value)


async def test_a_gzip_bomb_is_inflated_only_up_to_the_cap(server, transport):
    # 512 KB on the wire (under the cap, so the body is read), 512 MB inflated. httpx2's decoder drains zlib in
    # pieces of at most 1 MiB as the body is read, so the cap stops it within a piece: about 2.4 MB allocated
    # here, fake server included; a decoder that inflated each received chunk whole allocated 147 MB.
    import tracemalloc

    from test_reader_fetch import gzip_bomb

    server.route("/bomb", Reply(200, {"Content-Encoding": "gzip"}, gzip_bomb(1)[: 512 << 10]))
    tracemalloc.start()
    try:
        with pytest.raises(ResponseTooLarge):
            await transport.send(spec(server, "/bomb"), timeout_s=20, max_bytes=1_000_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 20_000_000, f"{peak:,} bytes allocated while reading a capped gzip bomb"


async def test_the_engine_pool_takes_its_limits_from_the_settings(tmp_path) -> None:
    from serpfuse.service import SearchService
    from serpfuse.settings import Settings

    settings = Settings(
        engine_connections=7,
        engine_idle_connections=3,
        engine_keepalive_s=2.5,
        engine_max_bytes=1 << 20,
        cache="off",
        cache_dir=tmp_path,
    )
    service = SearchService.from_settings(settings)
    try:
        limits = service.source.transport.limits
        assert (limits.max_connections, limits.max_keepalive_connections, limits.keepalive_expiry) == (
            7,
            3,
            2.5,
        )
        assert service.source.transport.max_bytes == 1 << 20
    finally:
        await service.aclose()
