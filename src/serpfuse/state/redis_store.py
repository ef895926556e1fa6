"""Engine cooldowns in Redis, so every server process of a deployment skips the same failing engine.

Each engine's state is the JSON of ``CooldownState`` at ``serpfuse:cooldown:<engine>``. A failure is a
read-modify-write of the failure count, done under WATCH/MULTI so two processes failing at once both count.
The key outlives the cooldown by a day: like the in-memory store, only a success resets the backoff, but a
state nobody touches for a day is forgotten rather than kept forever.
"""

from __future__ import annotations

import json
import math
import time
from typing import Any

from redis.exceptions import WatchError

from serpfuse.engines.base import EngineError
from serpfuse.state.cooldown import Clock, CooldownPolicy, CooldownState, next_state

COOLDOWN_PREFIX = "serpfuse:cooldown:"
MEMORY_S = 86400.0
_MAX_RETRIES = 20


# A store call on loopback or a LAN takes well under a millisecond; one that has not answered in this long is a
# hung or unreachable server, and waiting longer only slows every request that touches it.
TIMEOUT_S = 0.25


def redis_client(url: str, *, timeout_s: float = TIMEOUT_S) -> Any:
    """A ``redis.asyncio`` client answering str; connecting is lazy, so this never blocks.

    Raises ValueError for a URL redis cannot use (its message never holds the URL, which may hold a password).
    """
    from redis.asyncio import Redis

    try:
        return Redis.from_url(
            url, decode_responses=True, socket_connect_timeout=timeout_s, socket_timeout=timeout_s
        )
    except (ValueError, TypeError):
        raise ValueError(
            "redis_url is not a Redis URL (redis://host:6379/0, rediss://... or unix:///path)"
        ) from None


class RedisCooldownStore:
    """A ``CooldownStore`` shared by every process that points at the same Redis."""

    def __init__(
        self,
        client: Any,
        *,
        clock: Clock = time.time,
        policy: CooldownPolicy | None = None,
        prefix: str = COOLDOWN_PREFIX,
    ) -> None:
        self._redis = client
        self._clock = clock
        self._policy = policy or CooldownPolicy()
        self._prefix = prefix

    def __repr__(self) -> str:
        return "RedisCooldownStore()"

    def _key(self, engine: str) -> str:
        return self._prefix + engine

    async def get(self, engine: str) -> CooldownState | None:
        state = _parse(await self._redis.get(self._key(engine)))
        return state if state is not None and state.active(self._clock()) else None

    async def record_failure(self, engine: str, error: EngineError) -> CooldownState:
        key = self._key(engine)
        for _ in range(_MAX_RETRIES):
            async with self._redis.pipeline(transaction=True) as pipe:
                try:
                    await pipe.watch(key)
                    previous = _parse(await pipe.get(key))
                    now = self._clock()
                    state = next_state(previous, engine, error, now, self._policy)
                    ttl = max(1, math.ceil(state.remaining_s(now) + MEMORY_S))
                    pipe.multi()
                    pipe.set(key, json.dumps(state.to_json()), ex=ttl)
                    await pipe.execute()
                    return state
                except WatchError:
                    continue  # another process wrote first: read its count and try again
        raise RuntimeError(
            f"cooldown for {engine} kept changing under us; gave up after {_MAX_RETRIES} tries"
        )

    async def record_success(self, engine: str) -> None:
        await self._redis.delete(self._key(engine))

    async def snapshot(self) -> dict[str, dict[str, Any]]:
        """Every stored state, expired or not, as JSON (diagnostics and tests)."""
        out: dict[str, dict[str, Any]] = {}
        async for key in self._redis.scan_iter(match=self._prefix + "*"):
            state = _parse(await self._redis.get(key))
            if state is not None:
                out[key[len(self._prefix) :]] = state.to_json()
        return out


def _parse(raw: str | bytes | None) -> CooldownState | None:
    if raw is None:
        return None
    try:
        return CooldownState.from_json(json.loads(raw))
    except (ValueError, KeyError, TypeError):
        return None  # unreadable state: treat the engine as healthy rather than crash every search


# One atomic refill-and-take per call, on Redis's own clock, so every process (on any host) spends from the
# same bucket. Returns the wait in seconds as a string (Lua numbers come back as integers otherwise).
_TAKE = """
local rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1]) or burst
local at = tonumber(state[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) * rate)
local wait = 0
if tokens >= 1 then tokens = tokens - 1 else wait = (1 - tokens) / rate end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('EXPIRE', KEYS[1], math.ceil(burst / rate) + 1)
return tostring(wait)
"""
RATELIMIT_PREFIX = "serpfuse:ratelimit:"


class RedisTokenBuckets:
    """``ratelimit.Buckets`` in Redis: one bucket per key for every process pointing at the same server."""

    def __init__(self, client: Any, rate_per_s: float, burst: float, *, prefix: str) -> None:
        self._redis = client
        self._script = client.register_script(_TAKE)
        self.rate = rate_per_s
        self.burst = float(burst)
        self._prefix = RATELIMIT_PREFIX + prefix

    def __repr__(self) -> str:
        return f"RedisTokenBuckets(prefix={self._prefix!r})"

    async def take(self, key: str) -> float:
        wait = await self._script(keys=[self._prefix + key], args=[repr(self.rate), repr(self.burst)])
        return float(wait)
