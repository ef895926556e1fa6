"""Redirects an engine answers with: followed hop by hop by the live source, only to public http(s) addresses,
with the operator's base URL (here a loopback fake) the one other host allowed. Nothing is ever sent to a refused
target: a second fake server stands where a redirect would lead and must see no request."""

from __future__ import annotations

import pytest

from fakeserver import FakeServer, Reply, fake_engine, ok
from serpfuse.engines.base import EngineError, RequestSpec
from serpfuse.models import SearchRequest
from serpfuse.secrets import KeyStore
from serpfuse.sources.live import MAX_REDIRECTS, LiveSource
from serpfuse.sources.redirects import check_redirect
from serpfuse.state.cooldown import InMemoryCooldownStore

REQ = SearchRequest(query="rust async runtime")


def html_engine(name: str = "page", method: str = "GET"):
    """A keyless HTML engine (the kind whose redirects are followed) asking ``/{name}`` of its base URL."""
    engine = fake_engine(name, kind="html")
    if method == "POST":
        engine.build_request = lambda q: RequestSpec("POST", f"{q.base_url}/{name}", data={"q": q.text})
    return engine


def source_for(server, transport, tmp_path, *engines) -> LiveSource:
    return LiveSource(
        KeyStore(env={}, keys_file=tmp_path / "keys.json"),
        InMemoryCooldownStore(),
        transport,
        engines=list(engines),
        base_urls={e.INFO.name: server.url for e in engines},
        timeout_s=5.0,
    )


@pytest.fixture
def elsewhere():
    """Another loopback server: where a hostile redirect points. It must never be asked anything."""
    with FakeServer(lifetime_s=60) as srv:
        srv.route("/", ok(["https://leak.example/"]))
        yield srv


async def test_a_redirect_on_the_operators_base_host_is_followed(server, transport, tmp_path):
    server.route("/page", Reply(302, {"Location": "/moved?x=1"}))
    server.route("/moved", ok(["https://a.example/"]))
    answer = await source_for(server, transport, tmp_path, html_engine()).ask("page", "q", REQ)
    assert answer.status == "ok" and [r.url for r in answer.rows] == ["https://a.example/"]
    assert [s.path for s in server.requests] == ["/page", "/moved"]
    assert server.requests[1].query == {"x": ["1"]}


@pytest.mark.parametrize(
    "target",
    [
        "http://127.0.0.1:{port}/",  # loopback, another port than the operator's
        "http://localhost:{port}/",  # a name for loopback
        "http://2130706433:{port}/",  # 127.0.0.1 spelt as one number
        "http://[::ffff:127.0.0.1]:{port}/",  # loopback inside IPv6
        "http://10.0.0.7/",
        "http://192.168.1.1/admin",
        "http://169.254.169.254/latest/meta-data/",  # cloud metadata
        "http://100.64.0.1/",  # CGNAT
        "http://[fd00::1]/",
        "http://0.0.0.0:{port}/",
        "file:///etc/passwd",
        "gopher://127.0.0.1:{port}/",
        "ftp://ftp.example/",
    ],
)
async def test_a_redirect_off_the_public_web_is_refused_and_never_sent(
    server, transport, tmp_path, elsewhere, target
):
    server.route("/page", Reply(302, {"Location": target.format(port=elsewhere.port)}))
    answer = await source_for(server, transport, tmp_path, html_engine()).ask("page", "q", REQ)
    assert answer.status == "error" and "refused" in answer.reason, answer
    assert "\n" not in answer.reason
    assert elsewhere.requests == []  # nothing went there
    assert len(server.requests) == 1


async def test_a_hostile_hop_later_in_a_chain_is_refused_too(server, transport, tmp_path, elsewhere):
    server.route("/page", Reply(301, {"Location": "/step"}))
    server.route("/step", Reply(307, {"Location": f"http://127.0.0.1:{elsewhere.port}/"}))
    answer = await source_for(server, transport, tmp_path, html_engine()).ask("page", "q", REQ)
    assert answer.status == "error" and "loopback" in answer.reason
    assert [s.path for s in server.requests] == ["/page", "/step"] and elsewhere.requests == []


async def test_a_redirect_loop_ends_as_an_error(server, transport, tmp_path):
    server.route("/page", Reply(302, {"Location": "/page"}))
    answer = await source_for(server, transport, tmp_path, html_engine()).ask("page", "q", REQ)
    assert answer.status == "error" and "too many redirects" in answer.reason
    assert len(server.requests) == MAX_REDIRECTS + 1


@pytest.mark.parametrize(
    ("status", "method", "body"), [(303, "GET", b""), (302, "GET", b""), (307, "POST", b"q=q")]
)
async def test_a_posted_form_is_redirected_as_a_browser_does(
    server, transport, tmp_path, status, method, body
):
    server.route("/page", Reply(status, {"Location": "/answer"}))
    server.route("/answer", ok(["https://a.example/"]))
    engine = html_engine(method="POST")
    answer = await source_for(server, transport, tmp_path, engine).ask("page", "q", REQ)
    assert answer.status == "ok"
    hop = server.seen("/answer")[0]
    assert (hop.method, hop.body) == (method, body)


async def test_an_api_engine_follows_no_redirect_at_all(server, transport, tmp_path):
    server.route("/api", Reply(302, {"Location": "/elsewhere"}))
    engine = fake_engine("api")  # JSON: a key header must never follow a redirect to another host
    answer = await source_for(server, transport, tmp_path, engine).ask("api", "q", REQ)
    assert answer.status == "error" and "redirect" in answer.reason
    assert [s.path for s in server.requests] == ["/api"]


async def test_a_public_address_passes_the_check_without_anything_sent() -> None:
    # Checked only (a literal address needs no lookup): the suite sends nothing beyond loopback.
    await check_redirect("https://93.184.216.34/page", None)
    await check_redirect("http://[2606:4700:4700::1111]/", None)
    with pytest.raises(EngineError, match="private"):
        await check_redirect("https://10.1.2.3/", "https://10.1.2.4")  # the base URL's host alone is allowed
    await check_redirect("http://10.1.2.3:8080/x", "http://10.1.2.3:8080/searx")


async def test_the_browser_transport_is_held_to_the_same_guard(server, tmp_path, elsewhere):
    from serpfuse.sources.transport import Transport

    server.route("/html/", Reply(302, {"Location": f"http://127.0.0.1:{elsewhere.port}/"}))
    async with Transport(trust_env=False, impersonate=True) as curl:
        source = LiveSource(
            KeyStore(env={}, keys_file=tmp_path / "keys.json"),
            InMemoryCooldownStore(),
            curl,
            engines=["ddg"],
            base_urls={"ddg": server.url},
        )
        answer = await source.ask("ddg", "q", REQ)
    assert answer.status == "error" and "loopback" in answer.reason
    assert elsewhere.requests == []


@pytest.mark.parametrize("impersonate", [True, False], ids=["libcurl", "httpx2"])
async def test_a_redirect_hop_goes_to_the_address_checked_not_to_a_second_resolution(
    server, tmp_path, monkeypatch, impersonate
):
    """DNS rebinding: the name a redirect leads to resolves to a public address when checked and to a private
    one a moment later. The hop must connect to the address checked. Here 127.0.0.9 stands for the public
    address (allowed by the check for this test alone) and 127.0.0.1 for the private one, on the same port."""
    import asyncio

    from serpfuse.sources import redirects
    from serpfuse.sources.transport import Transport

    with (
        FakeServer(lifetime_s=60, host="127.0.0.9") as checked,
        FakeServer(lifetime_s=60, port=0) as probe,
    ):
        port = checked.port
        probe.stop()
        with FakeServer(lifetime_s=60, host="127.0.0.1", port=port) as rebound:
            checked.route("/next", ok(["https://checked.example/"]))
            rebound.route("/next", ok(["https://rebound.example/"]))
            server.route("/page", Reply(302, {"Location": f"http://rebind.test:{port}/next"}))
            refusal = redirects.address_refusal
            monkeypatch.setattr(
                redirects, "address_refusal", lambda a: None if str(a) == "127.0.0.9" else refusal(a)
            )
            loop = asyncio.get_running_loop()
            answers = iter(["127.0.0.9"])
            real = loop.getaddrinfo

            async def rebinding(host, port, *args, **kw):
                if host == "rebind.test":  # first the checked answer, then the private one
                    address = next(answers, "127.0.0.1")
                    return [(2, 1, 6, "", (address, port))]
                return await real(host, port, *args, **kw)

            monkeypatch.setattr(loop, "getaddrinfo", rebinding)
            async with Transport(trust_env=False, impersonate=impersonate) as transport:
                answer = await source_for(server, transport, tmp_path, html_engine()).ask("page", "q", REQ)
            assert not rebound.requests
            assert answer.status == "ok" and [r.url for r in answer.rows] == ["https://checked.example/"]
            assert checked.seen("/next")[0].headers["host"] == f"rebind.test:{port}"
