"""Rate limits: each engine's minimum interval between requests, and token buckets (API callers, engines'
outbound budgets) kept in this process or shared: by every process of a deployment with Redis, by every
worker of ``serve --workers`` through a SQLite file otherwise.

Minimum interval: calls queue for their turn instead of earning a 429.

Brave's free plan allows one request per second, and an agent firing parallel tool calls exceeds that at once.
Each call reserves the next free send slot (last slot + interval) and sleeps until it. Reserving is a plain
read-and-write with no await in between, so it is atomic under asyncio and needs no loop-bound lock; slots
are handed out in arrival order. A call whose slot would come after its deadline fails at once instead of
waiting for nothing.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

log = logging.getLogger(__name__)

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]


class QueueTooLong(Exception):
    """The engine's next free slot is later than the caller can wait."""

    def __init__(self, engine: str, wait_s: float) -> None:
        self.engine = engine
        self.wait_s = wait_s
        super().__init__(f"{engine}: next request slot is {wait_s:.1f} s away, past the deadline")


class RateLimiter:
    """Spaces requests to each engine at least ``min_interval_s`` apart (monotonic time)."""

    def __init__(self, *, clock: Clock = time.monotonic, sleep: Sleep = asyncio.sleep) -> None:
        self._clock = clock
        self._sleep = sleep
        self._next_slot: dict[str, float] = {}

    def _reserve(self, engine: str, min_interval_s: float, max_wait_s: float | None) -> float:
        now = self._clock()
        slot = max(now, self._next_slot.get(engine, now))
        wait_s = slot - now
        if max_wait_s is not None and wait_s > max_wait_s:
            raise QueueTooLong(engine, wait_s)
        self._next_slot[engine] = slot + min_interval_s
        return wait_s

    async def wait_turn(
        self, engine: str, min_interval_s: float, *, max_wait_s: float | None = None
    ) -> float:
        """Wait until this call may send; return the seconds waited. Raises ``QueueTooLong``.

        A cancelled waiter keeps its reserved slot: the gap it leaves only errs on the polite side.
        """
        if min_interval_s <= 0:
            return 0.0
        wait_s = self._reserve(engine, min_interval_s, max_wait_s)
        if wait_s > 0:
            await self._sleep(wait_s)
        return wait_s


# --- token buckets: callers of the HTTP API, and each engine's outbound budget -----------------------------


class Buckets(Protocol):
    """Token buckets by key. ``take`` spends one token: 0 when the caller may go, else seconds until a token."""

    async def take(self, key: str) -> float: ...


class TokenBuckets:
    """Process-local buckets: ``burst`` requests at once, refilled at ``rate_per_s``."""

    MAX_KEYS = 10_000

    def __init__(self, rate_per_s: float, burst: float, *, clock: Clock = time.monotonic) -> None:
        self.rate = rate_per_s
        self.burst = float(burst)
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, last refill)

    async def take(self, key: str) -> float:
        now = self._clock()
        tokens, last = self._buckets.get(key, (self.burst, now))
        tokens = min(self.burst, tokens + (now - last) * self.rate)
        if tokens >= 1.0:
            self._buckets[key] = (tokens - 1.0, now)
            if len(self._buckets) > self.MAX_KEYS:
                self._forget_full(now)
            return 0.0
        self._buckets[key] = (tokens, now)
        return (1.0 - tokens) / self.rate

    def _forget_full(self, now: float) -> None:
        # A bucket that has refilled is the same as no bucket: drop those to bound memory.
        for key, (tokens, last) in list(self._buckets.items()):
            if tokens + (now - last) * self.rate >= self.burst:
                del self._buckets[key]


class FailSoftBuckets:
    """Shared buckets (Redis, SQLite) that fall back to process-local ones while the store cannot be reached: an
    outage loosens the limit to one per process, it never fails or blocks a request."""

    def __init__(self, shared: Buckets, local: Buckets) -> None:
        self.shared = shared
        self.local = local

    async def take(self, key: str) -> float:
        try:
            return await self.shared.take(key)
        except Exception as exc:
            log.warning("shared rate limit unreachable, limiting this process alone: %s", type(exc).__name__)
            return await self.local.take(key)


def buckets(per_min: float, burst: float, redis: Any = None, *, prefix: str, shared: Any = None) -> Buckets:
    """``per_min`` tokens a minute, at most ``burst`` at once: in Redis under ``prefix`` when a client is
    given, else in ``shared`` (a ``sqlite_store.SqliteFile``: every process on the machine that opens it, as
    ``serve --workers`` does) when given, else in this process."""
    local = TokenBuckets(per_min / 60.0, burst)
    if redis is not None:
        from serpfuse.state.redis_store import RedisTokenBuckets

        return FailSoftBuckets(RedisTokenBuckets(redis, per_min / 60.0, burst, prefix=prefix), local)
    if shared is not None:
        from serpfuse.state.sqlite_store import SqliteTokenBuckets

        return FailSoftBuckets(SqliteTokenBuckets(shared, per_min / 60.0, burst, prefix=prefix), local)
    return local
