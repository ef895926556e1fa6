"""The result cache: a finished response keyed on everything that could change it.

The key is the sha256 of every request field (``SearchRequest`` has already collapsed the query's whitespace
and sorted the domain lists), the fingerprint of the ranking configuration with the request's strategy applied
(which holds the effective strategy and the score version), whether candidates were asked for, and the source's
identity (the replay file and its version, or "live" and its engine set). A change of any ranking knob therefore
changes the key: a cache can never serve a ranking computed under another configuration.

Two stores share one protocol: SQLite (stdlib, one file in the user's cache directory, run in a thread) for one
machine, Redis (SET ... EX) for several server processes. Both store the response's own JSON and hand it back marked
``cached: true``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from .config import RankingConfig
from .models import SearchRequest, SearchResponse

KEY_VERSION = 2  # bump when the key's layout changes, so old rows are never read under a new meaning
REDIS_PREFIX = "serpfuse:result:"
Clock = Callable[[], float]


class ResultCache(Protocol):
    async def get(self, key: str) -> SearchResponse | None:
        """The cached response marked ``cached=True``, or None when absent or expired."""
        ...

    async def set(self, key: str, response: SearchResponse, ttl_s: float) -> None: ...

    async def aclose(self) -> None: ...


def cache_key(
    request: SearchRequest, config: RankingConfig, source_identity: str, *, explain: bool = False
) -> str:
    blob = json.dumps(
        {
            "v": KEY_VERSION,
            # The strategy is the fingerprint's, so an absent one and the default one share a key.
            "request": request.model_dump(mode="json", exclude={"strategy"}),
            "config": config.with_strategy(request.strategy).fingerprint(),
            "source": source_identity,
            "explain": explain,
        },
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _encode(response: SearchResponse) -> str:
    return json.dumps(response.to_json_dict(), ensure_ascii=False, separators=(",", ":"))


def _decode(body: str | bytes) -> SearchResponse | None:
    try:
        response = SearchResponse.model_validate(json.loads(body))
    except ValueError:  # a row written by another version: a miss, never an error
        return None
    response.cached = True
    return response


class SqliteResultCache:
    """One SQLite file; every call runs in a worker thread with its own connection (sqlite3 is blocking)."""

    def __init__(self, path: Path, *, clock: Clock = time.time) -> None:
        self.path = Path(path)
        self._clock = clock
        self._ready = False

    def __repr__(self) -> str:
        return f"SqliteResultCache({str(self.path)!r})"

    def _connect(self) -> sqlite3.Connection:
        if not self._ready:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        conn = sqlite3.connect(self.path, timeout=10.0)
        if not self._ready:
            # WAL lets several processes read while one writes.
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS results (key TEXT PRIMARY KEY, expires REAL NOT NULL, body TEXT NOT NULL)"
            )
            conn.execute("CREATE INDEX IF NOT EXISTS results_expires ON results (expires)")
            conn.commit()
            self._ready = True
        return conn

    def _get(self, key: str) -> str | None:
        conn = self._connect()
        try:
            row = conn.execute(
                "SELECT body FROM results WHERE key = ? AND expires > ?", (key, self._clock())
            ).fetchone()
        finally:
            conn.close()
        return row[0] if row else None

    def _set(self, key: str, body: str, ttl_s: float) -> None:
        now = self._clock()
        conn = self._connect()
        try:
            with conn:
                conn.execute("DELETE FROM results WHERE expires <= ?", (now,))
                conn.execute(
                    "INSERT OR REPLACE INTO results (key, expires, body) VALUES (?, ?, ?)",
                    (key, now + ttl_s, body),
                )
        finally:
            conn.close()

    def count_rows(self) -> int:
        """Rows stored, expired or not (tests and diagnostics)."""
        conn = self._connect()
        try:
            return int(conn.execute("SELECT COUNT(*) FROM results").fetchone()[0])
        finally:
            conn.close()

    async def get(self, key: str) -> SearchResponse | None:
        body = await asyncio.to_thread(self._get, key)
        return _decode(body) if body is not None else None

    async def set(self, key: str, response: SearchResponse, ttl_s: float) -> None:
        if ttl_s <= 0:
            return
        await asyncio.to_thread(self._set, key, _encode(response), ttl_s)

    async def aclose(self) -> None:
        return None


class RedisResultCache:
    """``SET serpfuse:result:<key> ... EX ttl`` (SETEX's modern form): Redis expires the rows itself."""

    def __init__(self, client: Any, *, prefix: str = REDIS_PREFIX) -> None:
        self._redis = client  # a redis.asyncio.Redis, shared with the cooldown store
        self._prefix = prefix

    def __repr__(self) -> str:
        return "RedisResultCache()"

    async def get(self, key: str) -> SearchResponse | None:
        body = await self._redis.get(self._prefix + key)
        return _decode(body) if body is not None else None

    async def set(self, key: str, response: SearchResponse, ttl_s: float) -> None:
        seconds = int(round(ttl_s))
        if seconds <= 0:
            return
        await self._redis.set(self._prefix + key, _encode(response), ex=seconds)

    async def aclose(self) -> None:
        return None  # the client belongs to whoever made it
