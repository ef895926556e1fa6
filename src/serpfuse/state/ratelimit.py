"""Rate limits: each engine's minimum interval between requests, and token buckets (API callers, engines'
outbound budgets), with this process's own state. Their shared kinds (``redis_store``, ``sqlite_store``) have the
same methods; ``serpfuse.state.open_stores`` chooses which a deployment uses.

Minimum interval: calls queue for their turn instead of earning a 429.

Brave's free plan allows one request per second, and an agent firing parallel tool calls exceeds that at once.
Each call reserves the next free send slot (last slot + interval) and sleeps until it. Reserving is a plain
read-and-write with no await in between, so it is atomic under asyncio and needs no loop-bound lock; slots
are handed out in arrival order. A call whose slot would come after its deadline fails at once instead of
waiting for nothing.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Protocol

from serpfuse.errors import SerpfuseError

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]


class QueueTooLong(SerpfuseError):
    """The engine's next free slot is later than the caller can wait."""

    def __init__(self, engine: str, wait_s: float) -> None:
        self.engine = engine
        self.wait_s = wait_s
        super().__init__(f"{engine}: next request slot is {wait_s:.1f} s away, past the deadline")


class Slots(Protocol):
    """Each engine's next free send slot. ``reserve`` takes the next one for a call that may wait at most
    ``max_wait_s`` and returns the wait until it; raises ``QueueTooLong`` (taking nothing) when it is later."""

    async def reserve(self, engine: str, min_interval_s: float, max_wait_s: float | None) -> float: ...


class LocalSlots:
    """This process's send slots (monotonic time)."""

    def __init__(self, *, clock: Clock = time.monotonic) -> None:
        self._clock = clock
        self._next_slot: dict[str, float] = {}

    async def reserve(self, engine: str, min_interval_s: float, max_wait_s: float | None) -> float:
        now = self._clock()
        slot = max(now, self._next_slot.get(engine, now))
        wait_s = slot - now
        if max_wait_s is not None and wait_s > max_wait_s:
            raise QueueTooLong(engine, wait_s)
        self._next_slot[engine] = slot + min_interval_s
        return wait_s


class RateLimiter:
    """Spaces requests to each engine at least ``min_interval_s`` apart, in ``slots`` (this process's own by
    default; ``sqlite_store.SqliteSlots`` for every process on the machine)."""

    def __init__(
        self, slots: Slots | None = None, *, clock: Clock = time.monotonic, sleep: Sleep = asyncio.sleep
    ) -> None:
        self.slots = slots if slots is not None else LocalSlots(clock=clock)
        self._sleep = sleep

    def __repr__(self) -> str:
        return f"RateLimiter({self.slots!r})"

    async def wait_turn(
        self, engine: str, min_interval_s: float, *, max_wait_s: float | None = None
    ) -> float:
        """Wait until this call may send; return the seconds waited. Raises ``QueueTooLong``.

        A cancelled waiter keeps its reserved slot: the gap it leaves only errs on the polite side.
        """
        if min_interval_s <= 0:
            return 0.0
        wait_s = await self.slots.reserve(engine, min_interval_s, max_wait_s)
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
