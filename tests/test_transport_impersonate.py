"""The browser-impersonating path (curl_cffi, the default for HTML engines) against a real socket.

It must behave like the httpx2 path (same answers, size cap, whole-call deadline, ``EngineError`` for a reset,
no key or query string in any error message), look like the browser releases it rotates among (User-Agent of
the impersonated release, Sec-Fetch-* in that browser's order), and obey proxies, so no test packet leaves
loopback.
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time

import pytest

from fakeserver import Reply, fake_engine
from serpfuse.engines.base import EngineError, EngineTimeout, RequestSpec
from serpfuse.sources import transport as transport_module
from serpfuse.sources.request_headers import API_USER_AGENT, BROWSER_PROFILES, browser_profiles
from serpfuse.sources.transport import Transport
from serpfuse.sources.transport_errors import IMPERSONATE_HINT, ImpersonationUnavailable, ResponseTooLarge
from test_transport import SECRET, chain, spec
from test_transport import assert_no_secret as assert_no_secret_in_messages


@pytest.fixture
async def curl():
    async with Transport(trust_env=False, impersonate=True) as t:
        yield t


@pytest.fixture
def plain(httpx_transport):
    return httpx_transport


async def send_browser(t: Transport, request: RequestSpec, **kw):
    """``browser=True`` is what sends a request through curl_cffi when impersonation is on."""
    return await t.send(request, browser=True, **kw)


def assert_no_secret(exc: BaseException) -> None:
    assert_no_secret_in_messages(exc)
    # curl_cffi's own exceptions quote the full URL: none may ride along as the cause or context.
    assert all(not type(e).__module__.startswith("curl_cffi") for e in chain(exc))


async def failure_of(t: Transport, request: RequestSpec, **kw) -> EngineError:
    with pytest.raises(EngineError) as info:
        await send_browser(t, request, **kw)
    return info.value


async def test_ok_response_matches_the_httpx_path(server, curl, plain):
    server.route("/a", Reply(200, {"X-Thing": "1", "Content-Type": "text/plain"}, b"hello"))
    via_curl = await send_browser(curl, spec(server, "/a"), timeout_s=5)
    via_httpx = await send_browser(plain, spec(server, "/a"), timeout_s=5)
    assert (via_curl.status, via_curl.body) == (via_httpx.status, via_httpx.body) == (200, b"hello")
    assert via_curl.headers["x-thing"] == "1" and via_curl.headers["content-type"] == "text/plain"
    assert all(name == name.lower() for name in via_curl.headers)
    assert via_curl.headers.keys() >= via_httpx.headers.keys() - {"connection"}


async def test_repeated_headers_are_joined_like_the_httpx_path(server, curl, plain):
    server.route("/multi", Reply(200, {"Vary": "Accept", "vary": "Cookie"}, b"{}"))
    via_curl = await send_browser(curl, spec(server, "/multi"), timeout_s=5)
    via_httpx = await send_browser(plain, spec(server, "/multi"), timeout_s=5)
    assert via_curl.headers["vary"] == via_httpx.headers["vary"] == "Accept, Cookie"


async def test_browser_requests_are_impersonated_and_api_requests_plain_both_on_libcurl(server, curl):
    server.route("/h", Reply(200, body=b"{}"))
    await send_browser(
        curl, spec(server, "/h", headers={"X-Engine": "kept"}), timeout_s=5, profile="chrome152"
    )
    await curl.send(spec(server, "/h"), timeout_s=5)
    browser, api = server.seen("/h")
    assert "Chrome" in browser.headers["user-agent"]  # curl_cffi's impersonated browser speaks for itself
    assert browser.headers["x-engine"] == "kept"
    assert api.headers["user-agent"] == API_USER_AGENT  # JSON APIs keep the honest library client
    # One libcurl client for the release, one plain; httpx2's is never built where libcurl sends everything.
    assert set(curl._curl) == {"chrome152", ""} and curl._client is None


async def test_params_form_and_cookies_are_sent(server, curl):
    server.route("/f", Reply(200, body=b"ok"))
    request = RequestSpec(
        "POST", server.url + "/f", params={"x": "1"}, data={"q": "rust async"}, cookies={"kl": "us-en"}
    )
    status, _, body = await send_browser(curl, request, timeout_s=5)
    assert (status, body) == (200, b"ok")
    (seen,) = server.seen("/f")
    assert seen.method == "POST" and seen.query == {"x": ["1"]}
    assert seen.body == b"q=rust+async"
    assert seen.headers["cookie"] == "kl=us-en"


async def test_the_cap_stops_a_slow_body_without_waiting_for_the_rest(server, curl):
    # 4000 bytes, 100 every 0.1 s: the cap is passed after ~0.6 s, the whole body would take 4 s. curl_cffi's
    # own close waits for the whole transfer; the transport must abort it instead.
    server.route("/slow-big", Reply(200, body=b"s" * 4000, drip_interval_s=0.1, drip_chunk=100))
    started = time.monotonic()
    with pytest.raises(ResponseTooLarge):
        await send_browser(curl, spec(server, "/slow-big"), timeout_s=10, max_bytes=500)
    assert time.monotonic() - started < 4 / 2, "the capped transfer was read to its end"


@pytest.mark.parametrize("browser", [True, False])
async def test_curl_itself_ends_a_body_past_the_transports_cap(server, monkeypatch, browser):
    """libcurl stops the transfer in C at the cap: the reader never gets more bytes than the cap to count
    (sixteen engines' 50 MB bodies otherwise went through Python callbacks on the loop first)."""
    cap = 64 * 1024
    server.route("/endless", Reply(200, {"Content-Type": "text/html"}, huge_bytes=10 << 20))
    read = []
    real = transport_module.read_capped

    async def counting(status, headers, chunks, limit, read_error_body, encoded=False):
        async def counted():
            async for chunk in chunks():
                read.append(len(chunk))
                yield chunk

        return await real(status, headers, counted, limit, read_error_body, encoded)

    monkeypatch.setattr(transport_module, "read_capped", counting)
    async with Transport(trust_env=False, impersonate=True, max_bytes=cap) as t:
        with pytest.raises(ResponseTooLarge):
            await t.send(spec(server, "/endless"), browser=browser, timeout_s=10)
        with pytest.raises(ValueError, match="over the transport's cap"):
            await t.send(spec(server, "/endless"), browser=browser, timeout_s=10, max_bytes=cap + 1)
    assert sum(read) <= cap


async def test_an_unread_error_body_is_not_downloaded(server, curl):
    server.route("/slow-402", Reply(402, body=b"e" * 4000, drip_interval_s=0.1, drip_chunk=100))
    started = time.monotonic()
    status, _, body = await send_browser(curl, spec(server, "/slow-402"), timeout_s=10, read_error_body=False)
    assert (status, body) == (402, b"")
    assert time.monotonic() - started < 4 / 2, "the unread error body was downloaded anyway"


async def test_declared_content_length_over_the_cap_is_refused(server, curl):
    server.route("/big", Reply(200, body=b"y" * 5000))
    with pytest.raises(ResponseTooLarge):
        await send_browser(curl, spec(server, "/big"), timeout_s=5, max_bytes=1000)
    status, _, body = await send_browser(curl, spec(server, "/big"), timeout_s=5, max_bytes=5000)
    assert status == 200 and len(body) == 5000  # exactly at the cap is fine


async def test_a_dripping_body_cannot_outlast_the_timeout(server, curl):
    # 200 bytes at 50 ms each would take 10 s; every single read is fast, only the whole call is slow.
    server.route("/drip", Reply(200, body=b"z" * 200, drip_interval_s=0.05))
    started = time.monotonic()
    failure = await failure_of(curl, spec(server, "/drip", params={"key": SECRET}), timeout_s=0.5)
    assert time.monotonic() - started < 10 / 4, "the per-call deadline did not cut the drip short"
    assert isinstance(failure, EngineTimeout) and failure.status == "timeout"
    assert_no_secret(failure)


async def test_slow_headers_time_out_with_a_safe_message(server, curl):
    server.route("/slow", Reply(200, body=b"late", delay_s=5))
    started = time.monotonic()
    failure = await failure_of(
        curl,
        spec(server, "/slow", params={"api_key": SECRET}, headers={"X-Subscription-Token": SECRET}),
        timeout_s=0.3,
    )
    assert time.monotonic() - started < 5 / 2
    assert isinstance(failure, EngineTimeout)
    assert_no_secret(failure)
    assert "127.0.0.1" in failure.message  # the host is named, the query string is not


async def test_connection_reset_is_the_same_engine_error_as_the_httpx_path(server, curl, plain):
    server.route("/rst", Reply(reset=True))
    request = spec(server, "/rst", params={"key": SECRET})
    via_curl = await failure_of(curl, request, timeout_s=5)
    via_httpx = await failure_of(plain, request, timeout_s=5)
    assert type(via_curl) is type(via_httpx) is EngineError
    assert via_curl.message == via_httpx.message == "connection reset or closed early (127.0.0.1)"
    assert_no_secret(via_curl)


async def test_reset_in_the_middle_of_the_body_is_an_engine_error(server, curl):
    server.route("/half", Reply(200, body=b"q" * 10000, reset_after_body_bytes=100))
    failure = await failure_of(curl, spec(server, "/half", params={"key": SECRET}), timeout_s=5)
    assert not isinstance(failure, EngineTimeout)
    assert "reset" in failure.message or "closed" in failure.message
    assert_no_secret(failure)


async def test_refused_connection_is_the_same_engine_error_as_the_httpx_path(curl, plain):
    with socket.socket() as sock:  # a port that was free a moment ago and has no listener now
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    request = RequestSpec("GET", f"http://127.0.0.1:{port}/x?key={SECRET}")
    via_curl = await failure_of(curl, request, timeout_s=5)
    via_httpx = await failure_of(plain, request, timeout_s=5)
    assert via_curl.message == via_httpx.message == "connection failed (127.0.0.1)"
    assert_no_secret(via_curl)


async def test_a_dead_proxy_is_named_in_the_error():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    async with Transport(proxy=f"http://user:pw@127.0.0.1:{port}", trust_env=False, impersonate=True) as t:
        failure = await failure_of(t, RequestSpec("GET", f"http://search.example.invalid/x?key={SECRET}"))
    assert failure.message.endswith("(search.example.invalid via proxy)")
    assert_no_secret(failure)
    assert "pw" not in str(failure)


async def test_error_bodies_can_be_left_unread(server, curl):
    server.route("/402", Reply(402, {"Content-Type": "application/json"}, b'{"password": "hunter2"}'))
    server.route("/200", Reply(200, body=b'{"results": []}'))
    status, _, body = await send_browser(curl, spec(server, "/402"), timeout_s=5, read_error_body=False)
    assert (status, body) == (402, b"")
    _, _, body = await send_browser(curl, spec(server, "/200"), timeout_s=5, read_error_body=False)
    assert body == b'{"results": []}'  # only non-2xx bodies are skipped
    _, _, body = await send_browser(curl, spec(server, "/402"), timeout_s=5)
    assert b"hunter2" in body  # and only when asked


async def test_redirects_are_followed_only_when_asked(server, curl):
    server.route("/from", Reply(302, {"Location": "/to"}))
    server.route("/to", Reply(200, body=b"landed"))
    status, _, _ = await send_browser(curl, spec(server, "/from"), timeout_s=5)
    assert status == 302
    status, headers, body = await send_browser(
        curl, spec(server, "/from"), timeout_s=5, follow_redirects=True
    )
    assert (status, body) == (200, b"landed")
    assert "location" not in headers  # the final answer's headers, not the redirect's


async def test_the_session_still_works_after_aborted_calls(server, curl):
    # A cap abort (a huge body with no Content-Length), a deadline and a reset each leave a transfer behind;
    # the next call must not inherit it.
    server.route("/huge", Reply(200, huge_bytes=6 * 1024 * 1024))
    server.route("/drip", Reply(200, body=b"z" * 100, drip_interval_s=0.05))
    server.route("/rst", Reply(reset=True))
    server.route("/ok", Reply(200, body=b"fine"))
    with pytest.raises(ResponseTooLarge):
        await send_browser(curl, spec(server, "/huge"), timeout_s=10, max_bytes=64 * 1024)
    with pytest.raises(EngineTimeout):
        await send_browser(curl, spec(server, "/drip"), timeout_s=0.3)
    with pytest.raises(EngineError):
        await send_browser(curl, spec(server, "/rst"), timeout_s=5)
    results = await asyncio.gather(*(send_browser(curl, spec(server, "/ok"), timeout_s=5) for _ in range(4)))
    assert [r.body for r in results] == [b"fine"] * 4


async def test_a_cancelled_call_raises_cancelled_and_leaves_the_session_usable(server, curl):
    # The fan-out's overall deadline cancels engine calls; cancellation must not turn into an EngineError.
    server.route("/slow", Reply(200, body=b"late", delay_s=3))
    server.route("/ok", Reply(200, body=b"fine"))
    task = asyncio.create_task(send_browser(curl, spec(server, "/slow"), timeout_s=5))
    await asyncio.sleep(0.2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    _, _, body = await send_browser(curl, spec(server, "/ok"), timeout_s=5)
    assert body == b"fine"


async def test_aclose_closes_the_curl_clients(server):
    server.route("/a", Reply(200, body=b"1"))
    t = Transport(trust_env=False, impersonate=True)
    await send_browser(t, spec(server, "/a"), timeout_s=5, profile="chrome152")
    await send_browser(t, spec(server, "/a"), timeout_s=5, profile="safari270")
    clients = list(t._curl.values())
    assert len(clients) == 2  # one client per impersonated release
    await t.aclose()
    assert t._curl == {} and all(c.closed for c in clients)


def test_impersonation_without_curl_cffi_is_a_clear_one_line_error(monkeypatch):
    real_find_spec = transport_module.importlib.util.find_spec
    monkeypatch.setattr(
        transport_module.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "curl_cffi" else real_find_spec(name, *a),
    )
    with pytest.raises(ImpersonationUnavailable) as info:
        Transport(impersonate=True)
    assert str(info.value) == IMPERSONATE_HINT


# --- looking like the browsers it impersonates ---------------------------------------------------------------


def marker_of(profile: str) -> str:
    """What the User-Agent of a curl_cffi target says: chrome152 -> "Chrome/152.", safari270 -> "Version/27.0"."""
    family = profile.rstrip("0123456789")
    version = profile[len(family) :]
    if family == "safari":
        return f"Version/{version[:2]}.{version[2:]}"
    return {"chrome": "Chrome/", "firefox": "Firefox/"}[family] + version + "."


FETCH_ORDER = {
    "chrome": ["sec-fetch-site", "sec-fetch-mode", "sec-fetch-user", "sec-fetch-dest"],
    "firefox": ["sec-fetch-dest", "sec-fetch-mode", "sec-fetch-site", "sec-fetch-user"],
    "safari": ["sec-fetch-dest", "sec-fetch-site", "sec-fetch-mode"],
}


def test_impersonation_is_on_by_default_and_rotates_among_current_releases():
    t = Transport()
    assert t.impersonate and t.profiles == browser_profiles()
    # This environment's curl_cffi (>= 0.17, the declared minimum) offers every listed release.
    assert t.profiles == BROWSER_PROFILES
    families = {p.rstrip("0123456789") for p in t.profiles}
    assert families == {"chrome", "firefox", "safari"}
    assert all(int(p.removeprefix("chrome")) >= 150 for p in t.profiles if p.startswith("chrome"))


@pytest.mark.parametrize("profile", BROWSER_PROFILES)
async def test_each_release_sends_its_own_user_agent_and_a_navigation_in_browser_order(server, curl, profile):
    server.route("/nav", Reply(200, body=b"ok"))
    await send_browser(curl, spec(server, "/nav"), timeout_s=5, profile=profile)
    (seen,) = server.seen("/nav")
    assert marker_of(profile) in seen.headers["user-agent"]
    if profile.startswith("chrome"):  # client hints name the same release as the User-Agent
        assert f'v="{profile.removeprefix("chrome")}"' in seen.headers["sec-ch-ua"]
    assert seen.headers["sec-fetch-mode"] == "navigate" and seen.headers["sec-fetch-dest"] == "document"
    assert seen.headers["sec-fetch-site"] == "none"  # a typed search: no Referer
    # Sec-Fetch-* in the impersonated browser's own order (as each sends them for a typed URL).
    assert [n for n in seen.headers if n.startswith("sec-fetch-")] == FETCH_ORDER[
        profile.rstrip("0123456789")
    ]
    if profile.startswith("chrome"):
        names = list(seen.headers)
        order = ["sec-ch-ua", "user-agent", "accept", "sec-fetch-site", "accept-language"]
        assert [names.index(n) for n in order] == sorted(names.index(n) for n in order)


async def test_random_picks_cover_several_releases(server, curl):
    server.route("/r", Reply(200, body=b"ok"))
    for _ in range(30):
        await send_browser(curl, spec(server, "/r"), timeout_s=5)
    agents = {s.headers["user-agent"] for s in server.seen("/r")}
    assert len(agents) >= 2  # 30 uniform picks among 5 releases are one release with p = 5 * 0.2**30


async def test_a_form_posted_from_the_engines_own_page_is_same_origin(server, curl):
    server.route("/html/", Reply(200, body=b"ok"))
    referer = server.url + "/"
    request = RequestSpec("POST", server.url + "/html/", data={"q": "x"}, headers={"Referer": referer})
    await send_browser(curl, request, timeout_s=5, profile="chrome152")
    await send_browser(
        curl,
        RequestSpec("GET", server.url + "/html/", headers={"Referer": "https://elsewhere.example/"}),
        timeout_s=5,
        profile="chrome152",
    )
    posted, linked = server.seen("/html/")
    assert posted.headers["sec-fetch-site"] == "same-origin" and posted.headers["referer"] == referer
    assert linked.headers["sec-fetch-site"] == "cross-site"
    names = list(posted.headers)
    assert names.index("sec-fetch-site") < names.index("sec-fetch-mode")  # replaced in place, not appended


async def test_engine_headers_replace_the_browsers_in_place(server, curl):
    server.route("/lang", Reply(200, body=b"ok"))
    request = spec(server, "/lang", headers={"Accept-Language": "de-DE,de;q=0.9"})
    await send_browser(curl, request, timeout_s=5, profile="chrome152")
    (seen,) = server.seen("/lang")
    assert seen.headers["accept-language"] == "de-DE,de;q=0.9"
    assert list(seen.headers).count("accept-language") == 1


async def test_a_multi_step_call_keeps_one_release(server, curl):
    server.route("/step", Reply(200, body=b"ok"))
    for _ in range(3):
        client = curl.bind(browser=True, timeout_s=5)
        for _ in range(4):
            await client.send(spec(server, "/step"))
    seen = [s.headers["user-agent"] for s in server.seen("/step")]
    assert all(len(set(seen[i : i + 4])) == 1 for i in range(0, 12, 4))


async def test_the_environment_proxy_carries_curl_requests_so_nothing_leaves_loopback(server, monkeypatch):
    # The fake server plays the proxy: a CONNECT for the engine's host arrives there, never the engine itself.
    for name in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(name, server.url)
    monkeypatch.setenv("NO_PROXY", "")
    monkeypatch.setenv("no_proxy", "")
    async with Transport(trust_env=True) as t:
        with pytest.raises(EngineError):
            await send_browser(
                t, RequestSpec("GET", f"https://search.example.invalid/s?key={SECRET}"), timeout_s=5
            )
    (tunnel,) = server.requests
    assert tunnel.method == "CONNECT" and tunnel.headers["host"] == "search.example.invalid:443"


async def test_the_live_source_sends_html_engines_as_a_browser_and_apis_as_the_library(server, tmp_path):
    from serpfuse.models import SearchRequest
    from serpfuse.secrets import KeyStore
    from serpfuse.sources.live import LiveSource
    from serpfuse.state.cooldown import InMemoryCooldownStore

    server.route("/page", Reply(200, {"Content-Type": "application/json"}, b'{"results": []}'))
    server.route("/api", Reply(200, {"Content-Type": "application/json"}, b'{"results": []}'))
    server.route("/blocked", Reply(202, {"Content-Type": "text/html"}, b"<form id=challenge-form></form>"))
    engines = [
        fake_engine("page", kind="html", transport="browser"),
        fake_engine("api"),
        fake_engine("blocked", kind="html", transport="browser"),
    ]
    cooldowns = InMemoryCooldownStore(clock=lambda: 1000.0)
    async with Transport(trust_env=False) as t:
        source = LiveSource(
            KeyStore(env={}, keys_file=tmp_path / "keys.json"),
            cooldowns,
            t,
            engines=engines,
            base_urls={e.INFO.name: server.url for e in engines},
            clock=lambda: 1000.0,
        )
        request = SearchRequest(query="q")
        answers = {n: await source.ask(n, "q", request) for n in ("page", "api", "blocked")}
    assert answers["page"].status == answers["api"].status == "empty"
    assert any(m in server.seen("/page")[0].headers["user-agent"] for m in map(marker_of, BROWSER_PROFILES))
    assert server.seen("/api")[0].headers["user-agent"] == API_USER_AGENT
    assert answers["blocked"].status == "challenge"
    state = cooldowns.snapshot()["blocked"]
    assert (
        state["until"] - 1000.0 == 3600
    )  # the fake engine declares no cooldown of its own: the default hour


async def test_an_engine_with_a_preflight_page_asks_both_pages_as_one_browser(server, tmp_path):
    # Startpage's token comes from its home page: the search that carries it must come from the same release.
    from types import ModuleType

    from serpfuse.engines.base import EngineInfo
    from serpfuse.models import SearchRequest
    from serpfuse.secrets import KeyStore
    from serpfuse.sources.live import LiveSource
    from serpfuse.state.cooldown import InMemoryCooldownStore

    server.route("/home", Reply(200, {"Content-Type": "text/html"}, b"<input name=sc value=tok>"))
    server.route("/search", Reply(200, {"Content-Type": "application/json"}, b'{"results": []}'))
    engine = ModuleType("two_step")
    engine.INFO = EngineInfo(
        name="two-step", website="x", tier="primary", region="global", kind="html", needs_key=False,
        transport="browser",
    )  # fmt: skip
    engine.build_preflight = lambda q: RequestSpec("GET", q.base_url + "/home")
    engine.build_request = lambda q, first: RequestSpec(
        "POST", q.base_url + "/search", data={"sc": "tok"}, headers={"Referer": q.base_url + "/home"}
    )
    engine.parse = lambda status, headers, body, q: []
    async with Transport(trust_env=False) as t:
        source = LiveSource(
            KeyStore(env={}, keys_file=tmp_path / "keys.json"),
            InMemoryCooldownStore(),
            t,
            engines=[engine],
            base_urls={"two-step": server.url},
        )
        for _ in range(6):
            assert (await source.ask("two-step", "q", SearchRequest(query="q"))).status == "empty"
    homes, searches = server.seen("/home"), server.seen("/search")
    assert [h.headers["user-agent"] for h in homes] == [s.headers["user-agent"] for s in searches]
    assert {s.headers["sec-fetch-site"] for s in searches} == {"same-origin"}
    assert {h.headers["sec-fetch-site"] for h in homes} == {"none"}


def test_a_transport_that_sends_nothing_never_imports_curl_cffi():
    # Importing curl_cffi takes most of a second: `serpfuse engines` and other commands that send nothing
    # must not pay it.
    code = (
        "import sys; from serpfuse.sources.transport import Transport; t = Transport(); "
        "print('curl_cffi' in sys.modules); t.pick_profile(); print('curl_cffi' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split() == ["False", "True"]


async def test_cookies_a_site_sets_ride_along_on_redirect_hops_and_later_searches(server, curl):
    # Yahoo puts search behind a YBV cookie handed out on a redirect chain: a browser carries it from hop to
    # hop and into the next search. The engine's own cookies still win over what the jar holds.
    server.route("/search", Reply(302, {"Location": "/pixel", "Set-Cookie": "YBV=v0.2abc; Path=/"}))
    server.route("/pixel", Reply(307, {"Location": "/results"}))
    server.route("/results", Reply(200, body=b"ok"))
    first = RequestSpec("GET", server.url + "/search", cookies={"sB": "vl=lang_de"})
    status, _, body = await send_browser(curl, first, timeout_s=5, follow_redirects=True, profile="chrome152")
    assert (status, body) == (200, b"ok")
    later = RequestSpec("GET", server.url + "/results", cookies={"sB": "vl=lang_fr"})
    await send_browser(curl, later, timeout_s=5, profile="chrome152")
    cookies = [
        dict(p.split("=", 1) for p in (s.headers.get("cookie") or "").split("; ")) for s in server.requests
    ]
    assert [c.get("YBV") for c in cookies] == [None, "v0.2abc", "v0.2abc", "v0.2abc"]
    assert [c["sB"] for c in cookies] == ["vl=lang_de", "vl=lang_de", "vl=lang_de", "vl=lang_fr"]


async def test_the_plain_client_keeps_no_cookies(server, curl):
    # An API client is stateless: a cookie one API answer sets must not ride along on the next engine's call.
    server.route("/api", Reply(200, {"Set-Cookie": "tracker=1; Path=/"}, b"{}"))
    for _ in range(2):
        await curl.send(spec(server, "/api"), timeout_s=5)
    assert [s.headers.get("cookie") for s in server.seen("/api")] == [None, None]


@pytest.mark.parametrize("browser", [True, False], ids=["impersonated", "plain"])
async def test_a_reused_handle_sends_only_its_own_requests_headers(server, curl, browser):
    """The invariant the engine client relies on in curl_cffi (pinned to its minor): a handle emptied with
    ``clean_handles_and_buffers`` and ``reset`` starts its next request with no header of the last one.
    curl_cffi's ``setopt(HTTPHEADER)`` appends to the handle's own list; ``reset`` alone keeps it."""
    server.route("/h", Reply(200, body=b"ok"))
    one = RequestSpec("GET", server.url + "/h", headers={"X-Subscription-Token": "first-key", "Referer": "x"})
    two = RequestSpec("POST", server.url + "/h", headers={"X-Api-Key": "second-key"}, data={"q": "a"})
    profile = curl.profiles[0] if browser else None  # one release throughout: each has its own headers
    for request in (one, two, one):
        await curl.send(request, browser=browser, profile=profile, timeout_s=5)
    first, second, third = server.seen("/h")
    assert "x-api-key" not in {name.lower() for name, _ in first.lines}
    assert "x-subscription-token" not in {name.lower() for name, _ in second.lines}
    assert "referer" not in {name.lower() for name, _ in second.lines}
    for seen in (first, second, third):
        names = [name.lower() for name, _ in seen.lines]
        assert len(names) == len(set(names)), names
    assert [n for n, _ in third.lines] == [n for n, _ in first.lines]
