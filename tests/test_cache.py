"""The result cache: what the key holds (every request field, every ranking knob, the score version, the
source), the SQLite store's TTL, and the service's cache policy on the crw56 recording."""

from __future__ import annotations

import asyncio
import copy
import datetime as dt
import json
import re
from typing import Any

import pytest
from pydantic import ValidationError

import serpfuse.config as config_module
from serpfuse.config import DEFAULT_STRATEGY, RankingConfig
from serpfuse.engines.base import RateLimited
from serpfuse.models import SearchRequest, SearchResponse
from serpfuse.service import SearchService
from serpfuse.settings import Settings
from serpfuse.state.cache import SqliteResultCache, cache_key

QUERY = "top restaurants in belgrad"
SOURCE = "replay:/data/x.json:1:2"


def _key(
    request: SearchRequest, config: RankingConfig | None = None, source: str = SOURCE, explain=False
) -> str:
    fingerprint = (config or RankingConfig()).with_strategy(request.strategy).fingerprint()
    return cache_key(request, fingerprint, source, explain=explain)


# --- the key -----------------------------------------------------------------------------------------------------


def test_equivalent_requests_share_a_key():
    base = SearchRequest(query="rust  async\truntime", include_domains=["b.org", "a.com"])
    same = SearchRequest(query=" rust async runtime ", include_domains=["A.com", "https://b.org/x"])
    assert _key(base) == _key(same)
    # An absent strategy is the configuration's default one.
    assert _key(SearchRequest(query="q")) == _key(SearchRequest(query="q", strategy=RankingConfig().strategy))


@pytest.mark.parametrize(
    "change",
    [
        {"query": "rust async runtimes"},
        {"limit": 9},
        {"engines": ["ddg"]},
        {"engines": ["ddg", "bing"]},
        {"include_domains": ["rust-lang.org"]},
        {"exclude_domains": ["reddit.com"]},
        {"time_range": "week"},
        {"date_from": dt.date(2025, 1, 1)},
        {"date_to": dt.date(2025, 1, 1)},
        {"region": "de"},
        {"language": "de"},
        {"strategy": "rrf"},
        {"min_score": 0.5},
    ],
)
def test_every_request_field_changes_the_key(change):
    base = SearchRequest(query="rust async runtime")
    assert _key(base) != _key(base.model_copy(update=change))


def test_explain_and_source_change_the_key():
    request = SearchRequest(query="q")
    assert _key(request) != _key(request, explain=True)
    assert _key(request) != _key(request, source="replay:/data/x.json:1:3")
    assert _key(request) != _key(request, source="live:bing,ddg")


def test_score_version_changes_the_key(monkeypatch):
    request = SearchRequest(query="q")
    before = _key(request)
    monkeypatch.setattr(config_module, "SCORE_VERSION", "serpfuse-999")  # the fingerprint carries it
    assert _key(request) != before


def _leaves(value: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    if isinstance(value, dict) and value:
        return [leaf for k, v in value.items() for leaf in _leaves(v, (*path, k))]
    return [path]


def _changed(value: Any) -> Any:
    if value is None:  # an optional limit left open (e.g. combmnz.depth): set it
        return 10
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):  # halving stays inside every bound (gt 0, ge 0, le 1)
        return value / 2 if value else 0.5
    if isinstance(value, str):
        return "rrf" if value == "consensus" else value + "-x"
    if isinstance(value, dict):  # an empty table: give it an entry
        return {"some-engine": 1.5}
    raise AssertionError(f"no change defined for {value!r}")


def _set(data: dict, path: tuple[str, ...], value: Any) -> dict:
    node = data
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return data


def _validated(dumped: dict, path: tuple[str, ...], value: Any) -> RankingConfig:
    """The config with one leaf changed; a closed choice (Literal) takes another of its allowed values."""
    try:
        return RankingConfig.model_validate(_set(copy.deepcopy(dumped), path, value))
    except ValidationError as exc:
        err = exc.errors()[0]
        if err["type"] not in ("literal_error", "enum"):
            raise
        current = dumped
        for part in path:
            current = current[part]
        choices = [c for c in re.findall(r"'([^']*)'", str(err["ctx"]["expected"])) if c != current]
        return RankingConfig.model_validate(_set(copy.deepcopy(dumped), path, choices[0]))


def test_every_ranking_knob_changes_the_key():
    request = SearchRequest(query="rust async runtime")
    # experimental: every knob may be turned, the rules that measured zero included. The switch itself ranks
    # nothing (it only permits them), so it is not in the key: the same key as without it.
    base_config = RankingConfig(experimental=True)
    base = _key(request, base_config)
    assert base == _key(request, RankingConfig())
    leaves = [leaf for leaf in _leaves(base_config.model_dump(mode="json")) if leaf != ("experimental",)]
    assert len(leaves) > 40  # every ranker's knobs, the filters, the tables: a real walk, not a token one
    seen = {base}
    for path in leaves:
        dumped = base_config.model_dump(mode="json")
        node: Any = dumped
        for part in path:
            node = node[part]
        changed = _validated(dumped, path, _changed(node))
        key = _key(request, changed)
        assert key != base, f"changing ranking knob {'.'.join(path)} left the cache key unchanged"
        seen.add(key)
    assert len(seen) == len(leaves) + 1


def test_the_remembered_fingerprint_follows_every_copy_and_assignment():
    config = RankingConfig()
    plain = config.fingerprint()
    rrf = config.with_strategy("rrf")
    assert config.with_strategy("rrf") is rrf  # made once per strategy
    assert rrf.fingerprint() == RankingConfig(strategy="rrf").fingerprint() != plain
    tuned = config.model_copy(update={"rrf": config.rrf.model_copy(update={"rrf_constant": 40.0})}, deep=True)
    assert tuned.fingerprint() == RankingConfig(rrf={"rrf_constant": 40.0}).fingerprint() != plain
    assert copy.deepcopy(config).fingerprint() == plain
    config.strategy = "consensus"  # an assignment forgets what was remembered, copies included
    assert config.fingerprint() == RankingConfig(strategy="consensus").fingerprint() != plain
    assert config.with_strategy("rrf").fingerprint() == rrf.fingerprint()
    assert config.with_strategy(DEFAULT_STRATEGY).fingerprint() == plain


# --- SQLite -------------------------------------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def _response(query: str = "q") -> SearchResponse:
    return SearchResponse(
        query=query, strategy="consensus", results=[], engines=[], score_version="v", config_fingerprint="f"
    )


async def test_sqlite_round_trip_ttl_and_purge(tmp_path):
    clock = Clock()
    store = SqliteResultCache(tmp_path / "c" / "results.sqlite3", clock=clock)
    assert await store.get("k1") is None
    await store.set("k1", _response("one"), ttl_s=60)
    hit = await store.get("k1")
    assert hit is not None and hit.cached is True and hit.query == "one"
    clock.now += 61
    assert await store.get("k1") is None  # expired: never served
    assert store.count_rows() == 1
    await store.set("k2", _response("two"), ttl_s=60)
    assert store.count_rows() == 1  # writing purged the expired row
    await store.set("k3", _response("three"), ttl_s=0)
    assert await store.get("k3") is None  # ttl 0 stores nothing


async def test_sqlite_rows_are_shared_by_every_store_and_thread_on_the_file(tmp_path):
    """Two stores on one file are two server workers: a row one writes, the other reads (WAL mode)."""
    path = tmp_path / "results.sqlite3"
    one, two = SqliteResultCache(path), SqliteResultCache(path)
    try:
        await one.set("k", _response("shared"), ttl_s=60)
        body = await two.get_body("k")
        assert body is not None and json.loads(body)["cached"] is True
        assert (await two.get("k")).query == "shared"
        bodies = await asyncio.gather(*(asyncio.to_thread(two._get, "k") for _ in range(4)))
        assert bodies == [body] * 4  # each thread reads through its own connection
        assert two._connect().execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        await one.aclose()
        await two.aclose()


async def test_sqlite_ignores_unreadable_rows(tmp_path):
    store = SqliteResultCache(tmp_path / "results.sqlite3")
    await store.set("k", _response(), ttl_s=60)
    conn = store._connect()
    with conn:
        conn.execute("UPDATE results SET body = ?", ('{"query": 1}',))
    assert await store.get("k") is None


# --- the service's cache policy -----------------------------------------------------------------------------------


async def test_service_serves_the_second_search_from_the_cache(recording, tmp_path):
    settings = Settings(replay=recording, cache_dir=tmp_path)
    service = SearchService.from_settings(settings)
    try:
        request = service.make_request(query=QUERY)
        first = await service.search(request)
        second = await service.search(request)
        bypass = await service.search(request, use_cache=False)
        explained = await service.search(request, explain=True)
        nothing = await service.search(service.make_request(query=QUERY, min_score=1e6))
        again = await service.search(service.make_request(query=QUERY, min_score=1e6))
    finally:
        await service.aclose()
    assert (first.cached, second.cached, bypass.cached) == (False, True, False)
    assert second.model_dump(exclude={"cached"}) == first.model_dump(exclude={"cached"})
    assert explained.cached is False and explained.candidates  # explain has its own entry
    assert not nothing.results and again.cached is False  # empty answers are never cached
    assert 'result="hit"} 1' in service.metrics.render()


async def cached_search(
    request: SearchRequest, *, settings: Settings, use_cache: bool = True
) -> SearchResponse:
    """One search through a service of its own, as each `serpfuse search` run is."""
    service = SearchService.from_settings(settings, use_cache=use_cache)
    try:
        return await service.search(request, use_cache=use_cache, interface="cli")
    finally:
        await service.aclose()


async def test_a_changed_knob_misses_the_cache(recording, tmp_path):
    request = SearchRequest(query=QUERY)
    base = Settings(replay=recording, cache_dir=tmp_path)
    assert (await cached_search(request, settings=base)).cached is False
    assert (await cached_search(request, settings=base)).cached is True
    tweaked = base.model_copy(
        update={"ranking": RankingConfig.model_validate({"consensus": {"kappa": 11.0}})}
    )
    assert (await cached_search(request, settings=tweaked)).cached is False
    assert (await cached_search(request, settings=base, use_cache=False)).cached is False
    off = base.model_copy(update={"cache": "off"})
    assert (await cached_search(request, settings=off)).cached is False


async def test_cooling_engine_is_skipped_and_reported(recording):
    service = SearchService.from_settings(Settings(replay=recording, cache="off"))
    try:
        await service.cooldowns.record_failure("duckduckgo", RateLimited(retry_after_s=300))
        response = await service.search(service.make_request(query=QUERY))
    finally:
        await service.aclose()
    report = next(e for e in response.engines if e.engine == "duckduckgo")
    assert report.status == "skipped" and report.reason.startswith("cooling down")
    assert all("duckduckgo" not in r.engines for r in response.results)
    assert response.results  # the other engines still answer
