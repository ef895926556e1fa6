"""The search service every interface shares: settings + source + result cache + cooldown store + metrics.

The MCP server, the HTTP API and the ``search`` command all search through ``SearchService.search``,
so they share one cache policy and one view of the engines' cooldowns. Where those live (this process, SQLite
files, Redis) is ``serpfuse.state.open_stores``' choice.

Cooldowns are applied here as well as inside the live source: before each search the service reads the state of
every engine the search could ask from the store and marks cooling ones unavailable, so an engine put in cooldown
by another process is skipped before the tiers are planned, and the replay source behaves like the live one.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import logging
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal, get_args

from serpfuse.config import RankingConfig
from serpfuse.deployment import check_engines, settings_source
from serpfuse.engines.base import ErrorStatus
from serpfuse.errors import InputError
from serpfuse.models import EngineReport, Model, SearchRequest, SearchResponse
from serpfuse.pipeline import fell_back
from serpfuse.pipeline import search as run_pipeline
from serpfuse.ranking.rankers import get_ranker
from serpfuse.settings import ConfigError, Settings
from serpfuse.sources.base import EngineSlot, Source, SourceBase
from serpfuse.sources.fanout import select_slots
from serpfuse.state import Stores, UnusableStore, open_stores
from serpfuse.state.cache import ResultCache, cache_key, cached_body, decode
from serpfuse.state.cooldown import CooldownStore, InMemoryCooldownStore
from serpfuse.state.metrics import Metrics
from serpfuse.urls import suffix_list
from serpfuse.workers import ranking

log = logging.getLogger(__name__)

# A search with passages may read pages this long past its deadline (settings.passages_deadline_s to change).
PASSAGES_GRACE_S = 2.0
# A response some engine failed on is kept briefly: the engine may be back in a minute.
DEGRADED_TTL_S = 120.0
# A fleet's search in flight (Redis): claimed for the deadline and this margin (the ranking's grace, a slow
# store), so a claimant that died holds its waiters no longer; they ask whether it landed this often.
FLIGHT_MARGIN_S = 5.0
FLEET_POLL_S = 0.02
_FAILED = frozenset(get_args(ErrorStatus)) | {"decoy"}  # a decoy list is an engine not heard

# What to try when no engine answered, as every face says it (the CLI prefixes "serpfuse: ").
NO_ANSWER_HINT = (
    "no engine answered; check the network connection (and any proxy settings), "
    "or search a recording with --replay FILE"
)
# Every engine refused, cooled down or was not set up: the network is not what to check.
NOT_REACHED_HINT = (
    "no engine answered (each line says why; serpfuse engines shows keys and cooldowns), "
    "or search a recording with --replay FILE"
)


def no_answer_hint(resp: SearchResponse) -> str | None:
    """The hint for a search no engine answered (None when some engine did, even with no rows)."""
    if resp.outcome is None or resp.outcome.status != "failed":
        return None
    return NO_ANSWER_HINT if any(e.status in ("error", "timeout") for e in resp.engines) else NOT_REACHED_HINT


class QueryTooLong(InputError):
    def __init__(self, length: int, limit: int) -> None:
        super().__init__(f"query is {length} characters long; the limit is {limit}")


class EngineHealth(Model):
    """One engine as ``engine_status`` reports it. Key status only, never a key."""

    engine: str
    available: bool
    state: Literal["ready", "cooling down", "unavailable"]
    reason: str | None = None
    tier: str | None = None
    region: str | None = None
    key: str | None = None  # configured | missing | not needed; None for a replay source
    cooldown_remaining_s: float | None = None
    cooldown_failures: int | None = None
    last_status: str | None = None  # what this process saw on its last search
    last_latency_ms: float | None = None


class _CooldownGate(SourceBase):
    """One search's view of a source: its slots as the service saw them, with the store's cooldowns applied."""

    def __init__(self, inner: Source, slots: list[EngineSlot]) -> None:
        self.inner = inner
        self.name = inner.name
        self._slots = slots

    def slots(self, request: SearchRequest) -> list[EngineSlot]:
        return self._slots  # the gate lives for one search, so this is the request they were made for

    async def ask(self, engine: str, variant: str, request: SearchRequest):
        return await self.inner.ask(engine, variant, request)

    def expected_s(self, engine: str) -> float | None:
        return self.inner.expected_s(engine)

    def identity(self) -> str:
        return self.inner.identity()

    async def aclose(self) -> None:
        return None  # the service owns the inner source


class SearchService:
    def __init__(
        self,
        settings: Settings,
        source: Source,
        *,
        stores: Stores | None = None,
        cache: ResultCache | None = None,
        cooldowns: CooldownStore | None = None,
        metrics: Metrics | None = None,
        owns_source: bool = True,
    ) -> None:
        """``stores`` from ``open_stores``; without them, ``cache`` and ``cooldowns`` (this process's own)."""
        self.settings = settings
        self.source = source
        self.stores = stores or Stores(
            results=cache, pages=cache, cooldowns=cooldowns or InMemoryCooldownStore()
        )
        self.cache = self.stores.results
        self.cooldowns = self.stores.cooldowns
        self.metrics = metrics or Metrics()
        self.config: RankingConfig = settings.ranking_config  # fixed for the service's life (cache keys)
        self.identity = source.identity()
        self._fingerprint = self.config.fingerprint()  # the default strategy's, for every request's cache key
        self._owns_source = owns_source
        self._started = False  # start() ran: aclose() stops the workers
        self._last_seen: dict[str, EngineReport] = {}
        # cache key -> the search in flight: its response, and whether it was another process's
        self._flights: dict[str, asyncio.Future[tuple[SearchResponse, bool]]] = {}
        self._reader: Any = None  # the page reader passages use, built on first use (``reader``)
        suffix_list()  # parsed now (35-40 ms), not inside the first search's ranking step

    def __repr__(self) -> str:
        return f"SearchService(source={self.identity!r}, cache={self.cache!r}, cooldowns={self.cooldowns!r})"

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        *,
        use_cache: bool = True,
        source: Source | None = None,
        metrics: Metrics | None = None,
        shared_dir: Path | None = None,
    ) -> SearchService:
        """Build the whole service. Raises ConfigError or SourceError (one-line messages).

        ``shared_dir``: this is one of several processes on the machine (``serve --workers``): cooldowns (unless
        in Redis) and each engine's request interval live in SQLite files there, shared with the others.
        """
        try:
            stores = open_stores(settings, use_cache=use_cache, shared_dir=shared_dir)
        except UnusableStore as exc:
            raise ConfigError(str(exc)) from None
        owns = source is None
        # Nothing is open yet (the files were checked and closed, Redis connects on first use): a source that
        # fails to open leaves nothing to close.
        if source is None:  # the replay source when settings.replay is set, else the live engines
            per_min = settings.engine_budget_per_min
            live_options: dict[str, Any] = {}
            if stores.intervals is not None:
                live_options["rate_limiter"] = stores.intervals
            source = settings_source(
                settings,
                cooldowns=stores.cooldowns,
                **live_options,
                budget=stores.buckets(per_min, per_min, prefix="engine:") if per_min else None,
            )
        check_engines(settings, source)
        return cls(settings, source, stores=stores, metrics=metrics, owns_source=owns)

    # --- requests ----------------------------------------------------------------------------------------

    def make_request(self, /, **fields: Any) -> SearchRequest:
        """A request with this deployment's defaults for what the caller left out (None = left out).

        Raises pydantic's ValidationError or QueryTooLong.
        """
        given = {k: v for k, v in fields.items() if v is not None}
        given.setdefault("limit", self.settings.limit)
        if self.settings.engines:
            given.setdefault("engines", self.settings.engines)
        query = " ".join(str(given.get("query", "")).split())
        if len(query) > self.settings.max_query_chars:
            raise QueryTooLong(len(query), self.settings.max_query_chars)
        return SearchRequest(**given)

    async def _gate(self, request: SearchRequest) -> _CooldownGate:
        """The source with every engine the store says is cooling down marked unavailable.

        Only the engines this search could ask are looked up: an unavailable or unrequested one needs no read.
        """
        slots = self.source.slots(request)
        asked = [s.name for s in select_slots(slots, request) if s.available]
        states = await asyncio.gather(*(self.cooldowns.get(name) for name in asked))
        now = time.time()
        cooling = {name: st.describe(now) for name, st in zip(asked, states, strict=True) if st is not None}
        gated = [
            replace(s, available=False, unavailable_reason=cooling[s.name]) if s.name in cooling else s
            for s in slots
        ]
        return _CooldownGate(self.source, gated)

    async def search(
        self,
        request: SearchRequest,
        *,
        explain: bool = False,
        use_cache: bool = True,
        interface: str = "python",
    ) -> SearchResponse:
        """Search, from the cache when it holds this exact request under this exact configuration.

        Raises UnknownStrategy, UnknownEngine or SourceError for input the search cannot serve.
        """
        cache, key = self._cache_slot(request, explain=explain, use_cache=use_cache)
        body = await self._cache_get(cache, key)
        hit = decode(body) if body is not None else None
        if hit is not None:
            self._observe_hit(interface)
            return hit
        response, shared = await self._single_flight(
            cache, key, request, explain=explain, interface=interface
        )
        return response.model_copy(update={"shared": True}) if shared else response

    async def search_json(
        self,
        request: SearchRequest,
        *,
        explain: bool = False,
        use_cache: bool = True,
        interface: str = "python",
    ) -> bytes:
        """``search``'s response as the JSON the HTTP API sends; a cache hit is the stored bytes, sent as they are
        (no decode, validation or re-encode). Raises as ``search`` does."""
        cache, key = self._cache_slot(request, explain=explain, use_cache=use_cache)
        body = await self._cache_get(cache, key)
        if body is not None:
            self._observe_hit(interface)
            return body
        response, shared = await self._single_flight(
            cache, key, request, explain=explain, interface=interface
        )
        return (response.model_copy(update={"shared": True}) if shared else response).to_json_bytes()

    async def _single_flight(
        self, cache: ResultCache | None, key: str, request: SearchRequest, *, explain: bool, interface: str
    ) -> tuple[SearchResponse, bool]:
        """The response for ``key``, and whether it was shared: an identical search already in flight in this
        process (same cache key: the request, ``explain``, the configuration and the source) is awaited, not
        fanned out again, so N identical searches at once ask each engine once. Its answer is shared as it is
        (``shared`` marks the copies the callers after the first get).

        The search runs as its own task: a caller that goes away (a client disconnecting) neither cancels it
        for the others nor loses its result, which still fills the cache. Its failure is every caller's. With
        Redis, that task in turn shares the search of another process already searching the key
        (``state.flights``)."""
        flight = self._flights.get(key)
        if flight is not None:
            self.metrics.observe_search(interface, "shared")
            return (await asyncio.shield(flight))[0], True
        flight = asyncio.ensure_future(self._fleet_flight(cache, key, request, explain, interface))
        self._flights[key] = flight
        flight.add_done_callback(functools.partial(self._landed, key))
        return await asyncio.shield(flight)

    async def _fleet_flight(
        self, cache: ResultCache | None, key: str, request: SearchRequest, explain: bool, interface: str
    ) -> tuple[SearchResponse, bool]:
        """This process's search of ``key``: another process's answer when it is searching the key now (Redis),
        else its own search, landed for the processes that wait on it."""
        flights = self.stores.flights
        if flights is None:
            return await self._compute_and_keep(cache, key, request, explain, interface), False
        claim_s = self.settings.deadline_s + FLIGHT_MARGIN_S
        token = await flights.claim(key, claim_s)
        if token is None:
            answer = await self._await_fleet(flights, key, claim_s)
            if answer is not None:
                self.metrics.observe_search(interface, "shared")
                return answer, True
        try:
            response = await self._compute_and_keep(cache, key, request, explain, interface)
        except BaseException:
            if token is not None:
                await asyncio.shield(flights.abandon(key, token))
            raise
        if token is not None:
            await flights.land(key, token, response.to_json_bytes())
        return response, False

    async def _await_fleet(self, flights: Any, key: str, wait_s: float) -> SearchResponse | None:
        """The answer of the process searching ``key``, or None when its claim went without one (or it took
        longer than a search may)."""
        token = await flights.holder(key)
        until = time.monotonic() + wait_s
        while token is not None and time.monotonic() < until:
            holder, body = await flights.peek(key, token)
            if body is not None:
                return decode(body)
            if holder != token:
                return None
            await asyncio.sleep(FLEET_POLL_S)
        return None

    async def _compute_and_keep(
        self, cache: ResultCache | None, key: str, request: SearchRequest, explain: bool, interface: str
    ) -> SearchResponse:
        response = await self._compute(
            request, explain=explain, cache_on=cache is not None, interface=interface
        )
        await self._cache_set(cache, key, response)
        return response

    def _landed(self, key: str, flight: asyncio.Future) -> None:
        if self._flights.get(key) is flight:
            del self._flights[key]
        if not flight.cancelled():
            flight.exception()  # retrieved: every caller may have gone; theirs to raise, not the loop's to log

    def _cache_slot(
        self, request: SearchRequest, *, explain: bool, use_cache: bool
    ) -> tuple[ResultCache | None, str]:
        cache = self.cache if use_cache else None
        get_ranker(request.strategy or self.config.strategy)  # a bad strategy fails before any lookup
        config = self.config.with_strategy(request.strategy)  # itself for the default strategy
        fingerprint = self._fingerprint if config is self.config else config.fingerprint()
        key = cache_key(request, fingerprint, self.identity, explain=explain)
        return cache, key

    def _observe_hit(self, interface: str) -> None:
        self.metrics.observe_cache("hit")
        self.metrics.observe_search(interface, "cached")

    async def _compute(
        self, request: SearchRequest, *, explain: bool, cache_on: bool, interface: str
    ) -> SearchResponse:
        self.metrics.observe_cache("miss" if cache_on else "bypass")
        started = time.monotonic()
        response = await run_pipeline(
            request,
            source=await self._gate(request),
            config=self.config,
            deadline_s=self.settings.deadline_s,
            explain=explain,
        )
        self.metrics.observe_engines(response.engines)
        # results, empty, degraded or failed: what an operator alerts on (with cached and shared, the searches
        # that asked no engine)
        self.metrics.observe_search(interface, response.outcome.status if response.outcome else "results")
        for report in response.engines:
            self._last_seen[report.engine] = report
        if request.passages and response.results:
            response = await self._add_passages(
                response, request, started=started, explain=explain, use_cache=cache_on
            )
        return response

    async def _cache_set(self, cache: ResultCache | None, key: str, response: SearchResponse) -> None:
        """Store ``response`` when it has results."""
        if cache is None or not response.results:
            return
        degraded = (
            fell_back(response)
            or any(e.status in _FAILED for e in response.engines)
            or any(r.passages_status in ("timeout", "error") for r in response.results)
        )
        ttl = min(self.settings.cache_ttl_s, DEGRADED_TTL_S) if degraded else self.settings.cache_ttl_s
        try:
            await cache.set_body(key, cached_body(response), ttl)
        except Exception as exc:  # an unreachable cache costs a recomputation later, never this answer
            log.warning("result cache write failed: %s", type(exc).__name__)

    @staticmethod
    async def _cache_get(cache: ResultCache | None, key: str) -> bytes | None:
        if cache is None:
            return None
        try:
            return await cache.get_body(key)
        except Exception as exc:  # an unreachable cache is a miss, not a failed search
            log.warning("result cache read failed: %s", type(exc).__name__)
            return None

    # --- passages ---------------------------------------------------------------------------------------

    @property
    def reader(self):
        """The page reader a search with passages reads through: this deployment's (its policy, robots.txt
        rule, limits, and the page cache beside the result cache), built on first use."""
        if self._reader is None:
            from serpfuse.reader.service import Reader

            self._reader = Reader.from_settings(self.settings, self.stores.pages)
        return self._reader

    @reader.setter
    def reader(self, reader) -> None:
        self._reader = reader

    def passages_time_left(self, started: float) -> float:
        """How long a search that started at ``started`` (time.monotonic) may still read pages."""
        if self.settings.passages_deadline_s is not None:
            return self.settings.passages_deadline_s
        return max(0.0, self.settings.deadline_s + PASSAGES_GRACE_S - (time.monotonic() - started))

    async def _add_passages(
        self,
        response: SearchResponse,
        request: SearchRequest,
        *,
        started: float,
        explain: bool,
        use_cache: bool,
    ) -> SearchResponse:
        from serpfuse.reader.evidence import add_passages

        return await add_passages(
            self.reader,
            response,
            request,
            self.passages_time_left(started),
            explain=explain,
            use_cache=use_cache,
        )

    async def context(
        self, request: SearchRequest, max_chars: int, *, per_page: int | None = None, interface: str = "http"
    ) -> dict[str, Any]:
        """The query's best passages across the shown rows' pages under one budget (``reader.evidence``)."""
        from serpfuse.reader.evidence import context

        started = time.monotonic()
        plain = request.model_copy(update={"passages": False, "max_chars": None})
        response = await self.search(plain, interface=interface)
        return await context(
            self.reader, response, max_chars, self.passages_time_left(started), per_page=per_page
        )

    # --- engines -----------------------------------------------------------------------------------------

    def engine_names(self, query: str | None = None) -> list[str]:
        """The engines this deployment has; a recording's for ``query`` when it holds that query; else those
        the last searches saw."""
        names = self.source.engine_names(query)
        return names if names is not None else sorted(self._last_seen)

    def recorded_queries(self) -> list[str] | None:
        """The queries a replay source holds, in the recording's spelling (None: live engines)."""
        return self.source.recorded_queries()

    async def engine_status(self) -> list[EngineHealth]:
        """Per engine: ready / cooling down / unavailable (and why), key status, what the last search saw."""
        names = self.engine_names()
        states = await asyncio.gather(*(self.cooldowns.get(n) for n in names))
        now = time.time()
        out = []
        for name, state in zip(names, states, strict=True):
            facts = self.source.facts(name)
            static = facts.unavailable
            seen = self._last_seen.get(name)
            if state is not None:
                kind, reason = "cooling down", state.describe(now)
            elif static:
                kind, reason = "unavailable", static
            else:
                kind, reason = "ready", None
            out.append(
                EngineHealth(
                    engine=name,
                    available=kind == "ready",
                    state=kind,
                    reason=reason,
                    tier=facts.tier,
                    region=facts.region,
                    key=facts.key,
                    cooldown_remaining_s=round(state.remaining_s(now), 1) if state else None,
                    cooldown_failures=state.failures if state else None,
                    last_status=seen.status if seen else None,
                    last_latency_ms=seen.latency_ms if seen else None,
                )
            )
        return out

    async def ping(self) -> bool:
        """True when the shared store (if any) answers; False while it is being skipped (``degraded``)."""
        return await self.stores.ping()

    def degraded(self) -> dict[str, str]:
        """Each shared store being skipped now, with the failure's type, e.g. ``{"redis": "TimeoutError"}``."""
        return self.stores.degraded()

    def start(self) -> None:
        """What a long-running server starts first: the worker processes that rank (``workers.ranking``) and parse
        the live source's answers (``sources.parsing``): ``worker_processes`` of them when set."""
        ranking.start(self.settings.worker_processes)
        self._started = True
        self.source.start()
        gc.freeze()  # what a server holds once started lives as long as it: no collection rescans it

    async def aclose(self) -> None:
        if self._started:
            ranking.close()
        if self._owns_source:
            await self.source.aclose()
        await self.stores.aclose()
