"""The browser-impersonating path (curl_cffi) against a real socket: it must behave like the httpx2 path.

Same answers (status, lowercase headers, body), same size cap, same whole-call deadline, the same
``EngineError`` for a reset, and no key or query string in any error message.
"""

from __future__ import annotations

import asyncio
import socket
import time

import pytest

pytest.importorskip("curl_cffi", reason="curl_cffi is not installed (extra serpfuse[impersonate])")

from fakeserver import Reply  # noqa: E402
from serpfuse import transport as transport_module  # noqa: E402
from serpfuse.engines.base import EngineError, EngineTimeout, RequestSpec  # noqa: E402
from serpfuse.transport import (  # noqa: E402
    API_USER_AGENT,
    IMPERSONATE_HINT,
    ImpersonationUnavailable,
    ResponseTooLarge,
    Transport,
)
from test_transport import SECRET, chain, spec  # noqa: E402
from test_transport import assert_no_secret as assert_no_secret_in_messages  # noqa: E402


@pytest.fixture
async def curl():
    async with Transport(trust_env=False, impersonate=True) as t:
        yield t


@pytest.fixture
async def plain():
    async with Transport(trust_env=False) as t:
        yield t


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


async def test_browser_requests_go_through_curl_and_api_requests_do_not(server, curl):
    server.route("/h", Reply(200, body=b"{}"))
    await send_browser(curl, spec(server, "/h", headers={"X-Engine": "kept"}), timeout_s=5)
    await curl.send(spec(server, "/h"), timeout_s=5)
    browser, api = server.seen("/h")
    assert "Chrome" in browser.headers["user-agent"]  # curl_cffi's impersonated browser speaks for itself
    assert browser.headers["x-engine"] == "kept"
    assert api.headers["user-agent"] == API_USER_AGENT  # JSON APIs keep the honest library client
    assert curl._curl is not None and curl._client is not None


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


async def test_aclose_closes_the_curl_session(server):
    server.route("/a", Reply(200, body=b"1"))
    t = Transport(trust_env=False, impersonate=True)
    await send_browser(t, spec(server, "/a"), timeout_s=5)
    session = t._curl
    assert session is not None
    await t.aclose()
    assert t._curl is None and session._closed


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
