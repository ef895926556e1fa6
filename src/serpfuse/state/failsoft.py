"""A shared store that fails must not take requests down, nor slow each of them by its timeout.

``FailSoft`` puts one shared store (in Redis, or in a SQLite file) in front of this process's own store of the
same kind: cooldowns, token buckets, send slots, the result cache. A call that fails, or that outlasts its
bound, is answered by the process's own store instead, and opens the backend's ``Breaker``: every store on that
backend then skips it for ``retry_s`` seconds, so a hung Redis costs one timeout, not one per call. Then one
call probes it; the breaker closes when a probe succeeds. Each change of state is one log line.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from serpfuse.state.ratelimit import QueueTooLong

log = logging.getLogger(__name__)

Clock = Callable[[], float]
RETRY_S = 5.0  # how long a failed backend is skipped before one call probes it again

# A call's kind: writes change state, so only a write that succeeds shows that a backend which failed a write
# (a full disk, a read-only replica) is back; a read's success would close the breaker too soon.
_SKIP, _PASS, _PROBE = 0, 1, 2
WRITES = frozenset(
    {"set", "set_body", "record_failure", "record_success", "take", "reserve", "claim", "land", "abandon"}
)
# Exceptions that are a store's answer, not its failure: passed to the caller as they are.
ANSWERS: tuple[type[BaseException], ...] = (QueueTooLong,)


class Breaker:
    """The health of one shared backend, for every store on it (one Redis client, one SQLite file)."""

    def __init__(self, name: str, *, retry_s: float = RETRY_S, clock: Clock = time.monotonic) -> None:
        self.name = name
        self.retry_s = retry_s
        self.clock = clock
        self.error: str | None = None  # while open: the failure's type (never its text: it may hold a URL)
        self._write_failed = False
        self._retry_at = 0.0
        self._probing = False

    def __repr__(self) -> str:
        return f"Breaker({self.name!r}, {'open: ' + self.error if self.error else 'closed'})"

    @property
    def is_open(self) -> bool:
        return self.error is not None

    def admit(self, write: bool) -> int:
        """Whether a call goes to the backend (_PASS, _PROBE) or to the process's own store (_SKIP)."""
        if self.error is None:
            return _PASS
        if self._probing or self.clock() < self._retry_at or (self._write_failed and not write):
            return _SKIP
        self._probing = True  # one probe at a time: the others are not made to wait for it
        return _PROBE

    def succeeded(self, ticket: int) -> None:
        if ticket == _PROBE:
            self._probing = False
            if self.error is not None:
                log.warning("%s answers again: shared state resumed", self.name)
                self.error = None
                self._write_failed = False
        # A call let through before the breaker opened proves nothing about now: only a probe closes it.

    def failed(self, ticket: int, exc: BaseException, write: bool) -> None:
        if ticket == _PROBE:
            self._probing = False
        self._retry_at = self.clock() + self.retry_s
        if self.error is None:
            self.error = type(exc).__name__
            self._write_failed = write
            log.warning(
                "%s failed (%s): using this process's own state, trying it again every %g s",
                self.name,
                self.error,
                self.retry_s,
            )

    def released(self, ticket: int) -> None:
        """The call was cancelled: no verdict, but the next probe may go."""
        if ticket == _PROBE:
            self._probing = False


class FailSoft:
    """``shared`` while its backend answers, else ``local`` (the same methods, this process's own state).

    ``bound_s`` caps each call to a networked store (None: the store's own timeouts bound it, as SQLite's lock
    waits do; a thread's blocking call cannot be interrupted anyway).
    """

    def __init__(self, shared: Any, local: Any, breaker: Breaker, *, bound_s: float | None = None) -> None:
        self.shared = shared
        self.local = local
        self.breaker = breaker
        self.bound_s = bound_s

    def __repr__(self) -> str:
        return f"FailSoft({self.shared!r})"

    async def _call(self, method: str, *args: Any) -> Any:
        write = method in WRITES
        ticket = self.breaker.admit(write)
        if ticket == _SKIP:
            return await getattr(self.local, method)(*args)
        try:
            if self.bound_s is None:  # no timer to arm (it costs more than a cache hit's whole lookup)
                result = await getattr(self.shared, method)(*args)
            else:
                async with asyncio.timeout(self.bound_s):
                    result = await getattr(self.shared, method)(*args)
        except ANSWERS:
            self.breaker.succeeded(ticket)
            raise
        except Exception as exc:  # any: an outage has many faces (redis, socket, sqlite, a timeout)
            self.breaker.failed(ticket, exc, write)
            return await getattr(self.local, method)(*args)
        except BaseException:
            self.breaker.released(ticket)
            raise
        self.breaker.succeeded(ticket)
        return result

    # Cooldowns (CooldownStore) and caches (ResultCache) both read with get(key).
    async def get(self, key: str) -> Any:
        return await self._call("get", key)

    async def record_failure(self, engine: str, error: Any) -> Any:
        return await self._call("record_failure", engine, error)

    async def record_success(self, engine: str) -> None:
        await self._call("record_success", engine)

    async def get_body(self, key: str) -> bytes | None:
        return await self._call("get_body", key)

    async def set(self, key: str, response: Any, ttl_s: float) -> None:
        await self._call("set", key, response, ttl_s)

    async def set_body(self, key: str, body: bytes, ttl_s: float) -> None:
        await self._call("set_body", key, body, ttl_s)

    async def take(self, key: str) -> float:
        return await self._call("take", key)

    async def reserve(self, engine: str, min_interval_s: float, max_wait_s: float | None) -> float:
        return await self._call("reserve", engine, min_interval_s, max_wait_s)

    async def ping(self) -> bool:
        """The backend's own liveness check (Redis's PING)."""
        return await self._call("ping")

    async def aclose(self) -> None:
        for store in (self.shared, self.local):
            close = getattr(store, "aclose", None)
            if close is not None:
                await close()
