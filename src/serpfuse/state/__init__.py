"""What survives between requests: the result cache (pages too), engine cooldowns, each engine's send slots,
and token buckets (API callers, engines' outbound budgets); with Redis, which searches are in flight across the
fleet (``flights``).

``open_stores`` is the one place they are chosen: in Redis when ``redis_url`` is set (every process of a
deployment shares them), in SQLite files in the cache directory (the cache always; with ``shared_dir``, as for
``serve --workers``, the rest too), else in this process. Every shared store stands behind ``failsoft.FailSoft``:
while its backend fails, the process serves from its own state and says so once. Bad settings (a cache
directory that cannot be used, a ``redis_url`` that is not a URL) raise ``UnusableStore`` here, before serving.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from serpfuse.errors import ConfigError
from serpfuse.state.cache import NoCache, RedisResultCache, ResultCache, SqliteResultCache
from serpfuse.state.cooldown import CooldownStore, InMemoryCooldownStore
from serpfuse.state.failsoft import Breaker, FailSoft
from serpfuse.state.flights import FailSoftFlights, LocalFlights, RedisFlights
from serpfuse.state.ratelimit import Buckets, LocalSlots, RateLimiter, TokenBuckets
from serpfuse.state.sqlite_store import (
    SqliteCooldownStore,
    SqliteFile,
    SqliteSlots,
    SqliteTokenBuckets,
    state_file,
)

__all__ = ["StoreSettings", "Stores", "UnusableStore", "open_stores"]

# Each Redis call's ceiling, over the client's socket timeouts (``redis_store.TIMEOUT_S``): a cooldown write is
# a few round trips, and a search with a hung Redis must be at most this much slower, once per breaker period.
REDIS_CALL_S = 0.4


class UnusableStore(ConfigError, ValueError):
    """Settings no store can work with; the message is one line, and never holds the Redis URL."""


class StoreSettings(Protocol):
    """What ``open_stores`` reads of ``serpfuse.settings.Settings``."""

    @property
    def cache_backend(self) -> str: ...

    @property
    def cache_path(self) -> Path: ...

    @property
    def redis_url(self) -> str | None: ...


@dataclass
class Stores:
    """One deployment's stores. ``results`` and ``pages`` are None when the cache is off; ``intervals`` is None
    when each engine's send slots are the live source's own (one process)."""

    results: ResultCache | None = None
    pages: ResultCache | None = None  # the reader's pages: the result cache's store, under keys of their own
    cooldowns: CooldownStore = field(default_factory=InMemoryCooldownStore)
    intervals: RateLimiter | None = None
    flights: Any = None  # searches in flight across the fleet (flights.FailSoftFlights), with Redis only
    redis: Any = None  # the redis.asyncio client every Redis store shares
    state: SqliteFile | None = None  # the state file shared with the other workers
    breakers: tuple[Breaker, ...] = ()
    _buckets: Callable[[float, float, str], Buckets] | None = None
    _closers: list[Callable[[], Any]] = field(default_factory=list)

    def buckets(self, per_min: float, burst: float, *, prefix: str) -> Buckets:
        """``per_min`` tokens a minute, at most ``burst`` at once, under ``prefix``: shared as the cooldowns
        are (Redis, else the workers' state file), else in this process."""
        if self._buckets is None:
            return TokenBuckets(per_min / 60.0, burst)
        return self._buckets(per_min, burst, prefix)

    def degraded(self) -> dict[str, str]:
        """Each shared backend being skipped now, with the failure's type: ``{"redis": "TimeoutError"}``."""
        return {b.name: b.error for b in self.breakers if b.error is not None}

    async def ping(self) -> bool:
        """True when the shared store (if any) answers; False, without asking, while its breaker is open."""
        if self.redis is None:
            return True
        on_redis = next(b for b in self.breakers if b.name == "redis")
        return bool(await FailSoft(self.redis, _Unreachable(), on_redis, bound_s=REDIS_CALL_S).ping())

    async def aclose(self) -> None:
        for close in reversed(self._closers):
            await close()
        self._closers.clear()


class _Unreachable:
    """What a ping answers while Redis is skipped."""

    async def ping(self) -> bool:
        return False


def open_stores(settings: StoreSettings, *, use_cache: bool = True, shared_dir: Path | None = None) -> Stores:
    """The stores ``settings`` ask for. ``shared_dir``: this is one of several processes on the machine
    (``serve --workers``): cooldowns (unless in Redis), send slots and buckets live in its state file.

    Raises UnusableStore for settings that cannot work."""
    backend = settings.cache_backend if use_cache else "off"
    if backend == "redis" and not settings.redis_url:
        raise UnusableStore(
            "cache = redis needs redis_url (--redis redis://host:6379/0 or SERPFUSE_REDIS_URL)"
        )
    stores = Stores()
    breakers: list[Breaker] = []
    local_cooldowns = InMemoryCooldownStore()

    if settings.redis_url:
        from serpfuse.state.redis_store import RedisCooldownStore, RedisTokenBuckets, redis_client

        try:
            redis = redis_client(settings.redis_url)
        except ValueError as exc:
            raise UnusableStore(str(exc)) from None
        stores.redis = redis
        stores._closers.append(redis.aclose)
        on_redis = Breaker("redis")
        breakers.append(on_redis)
        stores.cooldowns = FailSoft(
            RedisCooldownStore(redis), local_cooldowns, on_redis, bound_s=REDIS_CALL_S
        )
        stores.flights = FailSoftFlights(RedisFlights(redis), LocalFlights(), on_redis, bound_s=REDIS_CALL_S)

        def redis_buckets(per_min: float, burst: float, prefix: str) -> Buckets:
            shared = RedisTokenBuckets(redis, per_min / 60.0, burst, prefix=prefix)
            return FailSoft(shared, TokenBuckets(per_min / 60.0, burst), on_redis, bound_s=REDIS_CALL_S)

        stores._buckets = redis_buckets

    if shared_dir is not None:
        state = state_file(shared_dir)
        _check_usable(state, "state file")
        stores.state = state
        stores._closers.append(_async(state.close))
        on_state = Breaker("state file")
        breakers.append(on_state)
        stores.intervals = RateLimiter(FailSoft(SqliteSlots(state), LocalSlots(), on_state))
        if settings.redis_url is None:
            stores.cooldowns = FailSoft(SqliteCooldownStore(state), local_cooldowns, on_state)

            def state_buckets(per_min: float, burst: float, prefix: str) -> Buckets:
                shared = SqliteTokenBuckets(state, per_min / 60.0, burst, prefix=prefix)
                return FailSoft(shared, TokenBuckets(per_min / 60.0, burst), on_state)

            stores._buckets = state_buckets

    if backend == "sqlite":
        file_cache = SqliteResultCache(settings.cache_path)
        _check_usable(file_cache.file, "result cache")
        on_cache = Breaker("result cache")
        breakers.append(on_cache)
        stores.results = FailSoft(file_cache, NoCache(), on_cache)
        stores._closers.append(file_cache.aclose)
    elif backend == "redis":
        stores.results = FailSoft(
            RedisResultCache(stores.redis), NoCache(), breakers[0], bound_s=REDIS_CALL_S
        )
    stores.pages = stores.results
    stores.breakers = tuple(breakers)
    return stores


def _check_usable(file: SqliteFile, what: str) -> None:
    """Open ``file`` once now (its directory, its mode, its schema), so an unusable cache directory is a one-line
    error at start, not a warning on every request. Closed again: each thread connects with its own wait."""
    try:
        file.connect(1.0)
    except (OSError, sqlite3.Error) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise UnusableStore(f"cannot use the {what} at {file.path}: {reason}") from None
    finally:
        file.close()


def _async(close: Callable[[], None]) -> Callable[[], Any]:
    async def aclose() -> None:
        close()

    return aclose
