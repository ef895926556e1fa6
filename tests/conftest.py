"""Shared fixtures. Recorded data lives outside the package: $SERPFUSE_DATA, default ../shared/data."""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import time
from pathlib import Path

import pytest

from serpfuse.config import FilterConfig
from serpfuse.models import DateStatus, SearchRequest
from serpfuse.ranking.context import FilterContext
from serpfuse.ranking.query import analyze_query
from serpfuse.ranking.types import Candidate
from serpfuse.urls import host_of, registrable_domain

REPO = Path(__file__).resolve().parent.parent


def running(pid: int) -> bool:
    """Linux: the process exists and has not ended (a zombie, not yet reaped by its parent, has ended)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


async def until(condition, what: str, timeout_s: float = 60.0) -> None:
    """Wait (on the event loop) until ``condition()`` holds; fail with ``what`` after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.05)


def data_root() -> Path:
    return Path(os.environ.get("SERPFUSE_DATA", REPO.parent / "shared" / "data")).resolve()


@pytest.fixture(scope="session")
def data_dir() -> Path:
    root = data_root()
    if not root.is_dir():
        pytest.skip(f"recorded data not found at {root} (set SERPFUSE_DATA)")
    return root


def need(path: Path) -> Path:
    """Skip, saying why, when one recorded data file is missing."""
    if not path.exists():
        pytest.skip(f"recorded data file missing: {path}")
    return path


def crw56_subset(data_dir: Path, folder: Path, count: int) -> tuple[Path, Path]:
    """A SearXNG recording of the first ``count`` crw56 queries with a relevant dev judgment (``rec.json``) and
    the dev judgments of those queries (``dev.jsonl``): a small recording for the judge's loop."""
    import json

    from serpfuse.sources.replay import normalise_query

    recording = json.loads(need(data_dir / "crw56" / "searxng_raw.json").read_text(encoding="utf-8"))
    dev = [json.loads(line) for line in need(data_dir / "crw56" / "qrels-dev.jsonl").read_text().splitlines()]
    relevant = {normalise_query(j["query"]) for j in dev if j["rel"] >= 1}
    chosen = [e for e in recording if normalise_query(e["query"]) in relevant][:count]
    assert len(chosen) == count
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "rec.json").write_text(json.dumps(chosen), encoding="utf-8")
    keep = {normalise_query(e["query"]) for e in chosen}
    lines = [json.dumps(j) for j in dev if normalise_query(j["query"]) in keep]
    (folder / "dev.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder / "rec.json", folder / "dev.jsonl"


@pytest.fixture(scope="session")
def recording(data_dir: Path) -> Path:
    """The crw56 SearXNG recording that the replay tests serve."""
    return need(data_dir / "crw56" / "searxng_raw.json")


@pytest.fixture(scope="module")
def api(recording: Path, tmp_path_factory):
    """A real `serpfuse serve --replay crw56` process on loopback, one per test module. A generous bucket:
    the rate limit has its own servers and tests."""
    from redis_server import start_serpfuse, stop

    server = start_serpfuse(
        tmp_path_factory.mktemp("api"),
        ["--replay", str(recording)],
        env={"SERPFUSE_RATE_LIMIT_BURST": "10000"},
    )
    yield server
    stop(server.proc)


def cand(
    url: str,
    title: str = "",
    snippet: str = "",
    published: dt.datetime | None = None,
    date_status: DateStatus = "unknown",
) -> Candidate:
    """A filter-stage row keyed by its URL, with the host and domain the pipeline would give it."""
    return Candidate(
        key=url,
        url=url,
        title=title,
        snippet=snippet,
        domain=registrable_domain(url),
        host=host_of(url),
        published=published,
        date_status=date_status,
    )


def filter_ctx(
    query: str,
    config: FilterConfig | None = None,
    *,
    now: dt.datetime = dt.datetime(2026, 6, 1, 12, 0, tzinfo=dt.UTC),
    **request,
) -> FilterContext:
    """What the filters see for `query` (request fields as keywords); the clock is fixed, as the time-range
    cases in test_filters are written against 2026-06-01 12:00 UTC."""
    return FilterContext(
        request=SearchRequest(query=query, **request),
        query=analyze_query(query),
        config=config or FilterConfig(),
        now=now,
    )


@pytest.fixture(autouse=True, scope="session")
def _private_cache_dir(tmp_path_factory):
    """Tests (and the serpfuse processes they start) never read or fill the user's real result cache."""
    os.environ["SERPFUSE_CACHE_DIR"] = str(tmp_path_factory.mktemp("serpfuse-cache"))
    yield


# --- the fake engine server and a transport, for the network tests (loopback only, bounded lifetime) --------


@pytest.fixture
def server():
    from fakeserver import FakeServer

    with FakeServer(lifetime_s=60) as srv:
        yield srv


# The engine clients a transport can send through, by its ``impersonate`` flag: libcurl's (the default: browser
# engines impersonated, APIs plain) and httpx2's (``SERPFUSE_IMPERSONATE=0``).
CLIENTS = {"libcurl": True, "httpx2": False}


@pytest.fixture(params=list(CLIENTS.values()), ids=list(CLIENTS))
async def transport(request):
    """Each test on both clients. test_transport pins httpx2's; test_transport_impersonate is libcurl's."""
    from serpfuse.sources.transport import Transport

    async with Transport(trust_env=False, impersonate=request.param) as t:
        yield t


@pytest.fixture
async def httpx_transport():
    """httpx2's client alone (impersonation off)."""
    from serpfuse.sources.transport import Transport

    async with Transport(trust_env=False, impersonate=False) as t:
        yield t


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory):
    """A real redis-server for one test module (the Redis-shared state's tests)."""
    from redis_server import start_redis, stop

    server = start_redis(tmp_path_factory.mktemp("redis"))
    yield server.url
    stop(server.proc)


# --- the browser tests (test_page_browser, test_judge_browser; browser_support skips them without Chromium) ---


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    from browser_support import CHROMIUM, CHROMIUM_ARGS

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, timeout=60_000)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    """Where the browser tests save their screenshots: ``docs/`` under ``make screenshots``, else a tmp folder."""
    if os.environ.get("SERPFUSE_SCREENSHOTS") == "docs":
        return Path(__file__).resolve().parent.parent / "docs"
    return tmp_path_factory.mktemp("screenshots")
