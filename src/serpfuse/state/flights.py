"""Searches in flight across a fleet: with Redis, identical searches on several processes or machines share one
fan-out, as identical searches in one process do (``SearchService._single_flight``).

The first process to search a key claims it: ``SET serpfuse:flight:<key> <token> NX PX <ttl>``. Another process
searching the same key meanwhile reads the token and waits for ``serpfuse:flight-answer:<key>:<token>``, the
response the claimant lands there (kept ``ANSWER_KEEP_S``, long enough for every waiter's next poll) before it
lets the claim go. A claim expires by itself after the search's deadline and a margin, so a claimant that died
holds nobody up for longer; a waiter that sees the claim go (or change hands) without an answer searches itself.
The answer is tied to its claim's token, so a waiter never takes an older search's answer for a newer one.

``LocalFlights`` is the same protocol with no fleet: every claim is granted, nothing is awaited. ``FailSoftFlights``
puts the Redis one in front of it behind the Redis breaker: while Redis fails, each process searches for itself.
"""

from __future__ import annotations

import secrets
from typing import Any

from serpfuse.state.failsoft import FailSoft

FLIGHT_PREFIX = "serpfuse:flight:"
ANSWER_PREFIX = "serpfuse:flight-answer:"
ANSWER_KEEP_S = 5.0
LOCAL = "local"  # the token of a claim nobody else can see

# Let the claim go only if it is still ours (it may have expired and been claimed again).
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


class RedisFlights:
    """The flights of every process pointing at one Redis."""

    def __init__(self, client: Any) -> None:
        self._redis = client
        self._release = client.register_script(_RELEASE)

    def __repr__(self) -> str:
        return "RedisFlights()"

    async def claim(self, key: str, ttl_s: float) -> str | None:
        """A token when this process now searches ``key`` for the fleet; None when another process already does."""
        token = secrets.token_hex(8)
        taken = await self._redis.set(FLIGHT_PREFIX + key, token, nx=True, px=max(1, int(ttl_s * 1000)))
        return token if taken else None

    async def holder(self, key: str) -> str | None:
        """The token of the claim on ``key`` now, or None."""
        return await self._redis.get(FLIGHT_PREFIX + key)

    async def peek(self, key: str, token: str) -> tuple[str | None, str | None]:
        """(the claim's token now, the answer landed under ``token``): one round trip."""
        holder, answer = await self._redis.mget([FLIGHT_PREFIX + key, f"{ANSWER_PREFIX}{key}:{token}"])
        return holder, answer

    async def land(self, key: str, token: str, body: bytes) -> None:
        """The answer of the claim ``token``, for its waiters; then the claim goes."""
        await self._redis.set(f"{ANSWER_PREFIX}{key}:{token}", body, px=int(ANSWER_KEEP_S * 1000))
        await self._release(keys=[FLIGHT_PREFIX + key], args=[token])

    async def abandon(self, key: str, token: str) -> None:
        """The claim goes without an answer (the search failed): its waiters search themselves."""
        await self._release(keys=[FLIGHT_PREFIX + key], args=[token])


class LocalFlights:
    """No fleet: every claim is this process's, and nobody waits on it."""

    async def claim(self, key: str, ttl_s: float) -> str | None:
        return LOCAL

    async def holder(self, key: str) -> str | None:
        return None

    async def peek(self, key: str, token: str) -> tuple[str | None, str | None]:
        return None, None

    async def land(self, key: str, token: str, body: bytes) -> None:
        return None

    async def abandon(self, key: str, token: str) -> None:
        return None


class FailSoftFlights(FailSoft):
    """``RedisFlights`` while Redis answers, else ``LocalFlights`` (behind the Redis breaker)."""

    async def claim(self, key: str, ttl_s: float) -> str | None:
        return await self._call("claim", key, ttl_s)

    async def holder(self, key: str) -> str | None:
        return await self._call("holder", key)

    async def peek(self, key: str, token: str) -> tuple[str | None, str | None]:
        return await self._call("peek", key, token)

    async def land(self, key: str, token: str, body: bytes) -> None:
        await self._call("land", key, token, body)

    async def abandon(self, key: str, token: str) -> None:
        await self._call("abandon", key, token)
