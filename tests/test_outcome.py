"""Every face says how a search went (``outcome``: results, empty, degraded, failed), with the engines and why.

The outcome is computed once (``Outcome.of``, where a ``SearchResponse`` is made); the faces only render it. Tested
here through real components: ``serpfuse serve`` as a process on 127.0.0.1 and ``serpfuse mcp`` over real stdio,
every engine reached through its base URL setting (``SERPFUSE_ENGINES__NAME__BASE_URL``) as an operator sets it:
a closed loopback port for an engine that fails (no network), a loopback fake for one that answers. Any proxy an
engine might fall back to is a dead loopback port too, so nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import get_args
from urllib.parse import quote

import pytest
from mcp import Client, StdioServerParameters

from fakeserver import FakeServer, Reply
from redis_server import CLI, ServeProcess, free_port, isolated_env, start_serpfuse, stop
from serpfuse.engines import ENGINES, base_url_env, category_of
from serpfuse.models import EngineReport, EngineStatus, Outcome

QUERY = "rust async runtime"
FIXTURES = Path(__file__).parent / "fixtures" / "engines"
JSON = {"Content-Type": "application/json"}
SECRET = "brv-outcome-secret-0123456789"  # a key the search sends: it must appear in no answer
HEALTHY = ("wikipedia", "mwmbl")
FAILING = ("ddg", "bing")  # beside HEALTHY: half the engines asked fail
# What an English web search asks without a key: the CJK engines wait for a CJK query (the region policy).
KEYLESS_WEB = sorted(
    n
    for n, m in ENGINES.items()
    if category_of(n) == "general"
    and not m.INFO.needs_key
    and not m.INFO.needs_base_url
    and m.INFO.region != "cjk"
)
NOT_SET_UP = sorted(  # brave has a key below
    n
    for n, m in ENGINES.items()
    if category_of(n) == "general" and (m.INFO.needs_key or m.INFO.needs_base_url) and n != "brave"
)


# --- the outcome itself --------------------------------------------------------------------------------------


def report(engine: str, status: str, reason: str | None = None, rows: int = 0) -> EngineReport:
    return EngineReport(engine=engine, status=status, reason=reason, rows=rows)


def test_outcome_says_failed_first_with_hints_and_not_set_up_last():
    engines = [
        report("brave", "skipped", "no API key (set BRAVE_API_KEY)"),
        report("yahoo", "skipped", "fallback tier not needed"),
        report("ddg", "error", "connection failed (127.0.0.1)"),
        report("bing", "challenge", "challenge or CAPTCHA page"),
        report("mojeek", "skipped", "cooling down 40 s after: rate limited (HTTP 429)"),
        report("google", "timeout", "no answer within 5 s"),
        report("yep", "error", "response could not be parsed"),
    ]
    outcome = Outcome.of(engines, 0)
    assert outcome.status == "failed"
    hints = {t.engine: t.hint for t in outcome.failed}
    assert hints == {
        "ddg": "network", "bing": "challenge", "mojeek": "rate limit", "google": "timeout", "yep": "page layout",
    }  # fmt: skip
    assert outcome.not_set_up == ["brave"] and outcome.answered == []
    message = outcome.message
    assert message.startswith(  # by name: the order engines answered in says nothing
        "No engine answered: bing challenge (challenge or CAPTCHA page); ddg error (connection failed (127.0.0.1))"
    )
    assert message.index("Network: check the network") < message.index("Not set up")
    assert message.endswith("Not set up (no key or base URL): brave.")
    assert "yahoo" not in message  # not needed is no failure, and no set-up either
    assert outcome.summary.startswith("no engine answered: bing (challenge), ddg (network)")


@pytest.mark.parametrize(
    ("engines", "results", "status"),
    [
        ([report("ddg", "ok", rows=5), report("bing", "ok", rows=5)], 8, "results"),
        ([report("ddg", "ok", rows=5), report("bing", "empty")], 0, "empty"),
        ([report("ddg", "ok", rows=5), report("bing", "error", "HTTP 503")], 8, "degraded"),
        ([report("ddg", "empty"), report("bing", "rate-limited", "rate limited (HTTP 429)")], 0, "degraded"),
        ([report("brave", "skipped", "no API key (set BRAVE_API_KEY)")], 0, "failed"),
        ([report("ddg", "skipped", "outbound budget spent; next request in 3 s")], 0, "failed"),
        ([], 0, "failed"),
    ],
)
def test_outcome_status(engines, results, status):
    assert Outcome.of(engines, results).status == status


@pytest.mark.skipif("decoy" not in get_args(EngineStatus), reason="the decoy status has not landed yet")
def test_a_decoy_list_is_a_failure_beside_rows():
    outcome = Outcome.of(
        [report("ddg", "ok", rows=5), report("bing", "decoy", "rows carry the first word only")], 5
    )
    assert outcome.status == "degraded" and outcome.failed[0].hint == "decoy"


def test_a_cooldown_after_a_challenge_is_hinted_as_one():
    assert Outcome.of([], 0).message == "No engine to ask for this search."
    (trouble,) = Outcome.of(
        [report("bing", "skipped", "cooling down 3599 s after: challenge or CAPTCHA page")], 0
    ).failed
    assert trouble.hint == "challenge"


# --- through the faces, as a user runs them ------------------------------------------------------------------


def healthy_engines() -> FakeServer:
    """Wikipedia's API and Mwmbl's, answering the query on 127.0.0.1."""
    hits = [{"title": f"Rust async runtime {i}", "snippet": "a rust async runtime"} for i in range(6)]
    server = FakeServer(lifetime_s=600)
    server.route("/w/api.php", Reply(200, JSON, json.dumps({"query": {"search": hits}}).encode()))
    server.route("/api/v1/search/", Reply(200, JSON, (FIXTURES / "mwmbl_results_handmade.json").read_bytes()))
    server.start()
    return server


def environment(dead: str, healthy: str | None) -> dict[str, str]:
    """Every keyless engine, news and CJK too (and brave, with a key), at ``dead``; HEALTHY at ``healthy`` when
    given."""
    keyless = [n for n, m in ENGINES.items() if not m.INFO.needs_key and not m.INFO.needs_base_url]
    env = {base_url_env(name): dead for name in [*keyless, "brave"]}
    if healthy is not None:
        env.update({base_url_env(name): healthy for name in HEALTHY})
    return {
        **env,
        "BRAVE_API_KEY": SECRET,
        "HTTP_PROXY": dead, "HTTPS_PROXY": dead, "ALL_PROXY": dead, "NO_PROXY": "127.0.0.1",
        "SERPFUSE_DEADLINE_S": "8",
    }  # fmt: skip


@pytest.fixture(scope="module")
def dead() -> str:
    return f"http://127.0.0.1:{free_port()}"  # nothing listens: every connection is refused


@pytest.fixture(scope="module")
def healthy():
    server = healthy_engines()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def offline(tmp_path_factory, dead) -> ServeProcess:
    """serve with every engine failing: no network."""
    server = start_serpfuse(tmp_path_factory.mktemp("offline"), ["--no-cache"], environment(dead, None))
    yield server
    stop(server.proc)


@pytest.fixture(scope="module")
def half(tmp_path_factory, dead, healthy) -> ServeProcess:
    """serve with HEALTHY answering and every other engine failing."""
    home = tmp_path_factory.mktemp("half")
    server = start_serpfuse(home, ["--no-cache"], environment(dead, healthy.url))
    yield server
    stop(server.proc)


def _no_secret(raw: bytes | str) -> None:
    assert SECRET not in (raw if isinstance(raw, str) else raw.decode("utf-8", "replace"))


def test_with_no_network_every_http_face_says_failed_and_names_the_engines(offline: ServeProcess):
    status, _, raw = offline.get(f"/v1/search?q={quote(QUERY)}")
    assert status == 200
    _no_secret(raw)
    outcome = json.loads(raw)["outcome"]
    assert outcome["status"] == "failed" and outcome["answered"] == []
    failed = {t["engine"]: t for t in outcome["failed"]}
    assert sorted(failed) == sorted([*KEYLESS_WEB, "brave"])
    assert all(t["hint"] == "network" for t in failed.values()), failed
    assert sorted(outcome["notSetUp"]) == NOT_SET_UP
    assert outcome["message"].startswith("No engine answered: ")
    assert all(name in outcome["message"] for name in failed)
    assert "Network: check the network connection" in outcome["message"]

    status, _, body = offline.json("GET", f"/search?q={quote(QUERY)}&format=json")
    assert status == 200 and body["results"] == [] and body["outcome"]["status"] == "failed"
    pairs = body["unresponsive_engines"]
    failing = len(failed)
    assert {name for name, _ in pairs[:failing]} == set(failed)  # what failed first, with its hint
    assert all(why.endswith("[network]") for _, why in pairs[:failing])
    assert [name for name, _ in pairs[-len(NOT_SET_UP) :]] == [n for n in ENGINES if n in NOT_SET_UP]
    _no_secret(json.dumps(body))

    for path, body, error in (
        ("/tavily/search", {"query": QUERY}, lambda b: b["detail"]["error"]),
        ("/v2/search", {"query": QUERY}, lambda b: b["error"]),
    ):
        status, _, raw = offline.post(path, body)
        _no_secret(raw)
        answer = json.loads(raw)
        assert status == 503, answer
        text = error(answer)
        assert text.startswith("No engine answered: ") and all(name in text for name in failed)
        assert "\n" not in text
    assert answer["success"] is False  # Firecrawl's own error form

    status, _, raw = offline.get(f"/search?q={quote(QUERY)}")
    page = raw.decode()
    assert status == 200 and '<p class="outcome outcome-failed"><b>Failed:</b> No engine answered' in page
    _no_secret(page)

    status, _, raw = offline.get("/metrics")  # what an operator alerts on
    counted = re.findall(r'serpfuse_searches_total\{interface="(\w+)",outcome="(\w+)"\} (\S+)', raw.decode())
    assert {(face, outcome) for face, outcome, n in counted if float(n)} == {
        ("http", "failed"), ("searxng", "failed"), ("tavily", "failed"), ("firecrawl", "failed"), ("page", "failed"),
    }  # fmt: skip


def test_with_half_the_engines_failing_the_http_faces_say_degraded(half: ServeProcess):
    engines = ",".join([*FAILING, *HEALTHY])
    status, _, body = half.json("GET", f"/v1/search?q={quote(QUERY)}&engines={engines}")
    assert status == 200 and body["results"]
    outcome = body["outcome"]
    assert outcome["status"] == "degraded", outcome
    assert sorted(t["engine"] for t in outcome["failed"]) == sorted(FAILING)
    assert sorted(outcome["answered"]) == sorted(HEALTHY)
    assert outcome["message"].startswith("2 of 4 engines failed: ")

    status, _, body = half.json("GET", f"/search?q={quote(QUERY)}&format=json&engines={engines}")
    assert body["outcome"]["status"] == "degraded" and body["results"]
    assert {name for name, _ in body["unresponsive_engines"]} == set(FAILING)

    status, _, body = half.json("POST", "/tavily/search", {"query": QUERY})
    assert status == 200 and body["results"] and body["outcome"]["status"] == "degraded"
    status, _, body = half.json("POST", "/v2/search", {"query": QUERY})
    assert status == 200 and body["success"] is True and body["data"]["web"]
    assert body["outcome"]["web"]["status"] == "degraded"
    said = re.match(r"web: degraded: (\d+) of (\d+) engines failed: .*\bddg \(network\)", body["warning"])
    assert said and int(said[2]) - int(said[1]) == len(HEALTHY), body["warning"]

    status, _, raw = half.get(f"/search?q={quote(QUERY)}&engines={engines}")
    assert status == 200 and "<b>Degraded:</b> 2 of 4 engines failed" in raw.decode()
    _no_secret(raw)


def _mcp(home: Path, env: dict[str, str]) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-c", CLI, "mcp", "--no-cache"],
        env=isolated_env(home, env),
        cwd=str(home),
    )


async def test_mcp_over_stdio_answers_an_error_naming_the_engines_when_none_answered(tmp_path, dead):
    async with Client(_mcp(tmp_path, environment(dead, None))) as client:
        result = await client.call_tool("web_search", {"query": QUERY})
        explained = await client.call_tool("explain_search", {"query": QUERY, "engines": ["ddg", "bing"]})
    assert result.is_error and explained.is_error
    (content,) = result.content
    text = content.text
    assert "No results" not in text and text.startswith("No engine answered: ")
    assert all(name in text for name in [*KEYLESS_WEB, "brave"]), text
    assert "\n" not in text and SECRET not in text
    assert explained.content[0].text.startswith("No engine answered: bing ")


async def test_mcp_over_stdio_says_degraded_beside_the_rows(tmp_path, dead, healthy):
    async with Client(_mcp(tmp_path, environment(dead, healthy.url))) as client:
        result = await client.call_tool("web_search", {"query": QUERY, "engines": [*FAILING, *HEALTHY]})
    assert not result.is_error
    data, text = result.structured_content, result.content[0].text
    assert data["results"] and data["outcome"]["status"] == "degraded"
    assert "\nDegraded: 2 of 4 engines failed: bing (network), ddg (network)." in text
    engines_line = next(line for line in text.splitlines() if line.startswith("Engines: "))
    assert engines_line.index("bing") < engines_line.index("wikipedia")  # what failed first
