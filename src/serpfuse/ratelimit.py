"""Per-engine minimum interval between requests: calls queue for their turn instead of earning a 429.

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
