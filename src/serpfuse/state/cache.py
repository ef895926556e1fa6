"""The result cache: a finished response keyed on everything that could change it.

The key is the sha256 of every request field (``SearchRequest`` has already collapsed the query's whitespace
and sorted the domain lists), the fingerprint of the ranking configuration with the request's strategy applied
(which holds the effective strategy and the score version), whether candidates were asked for, and the source's
identity (the replay file and its version, or "live" and its engine set). A change of any ranking knob therefore
changes the key: a cache can never serve a ranking computed under another configuration.

Two stores share one protocol: SQLite (stdlib, one WAL-mode file in the user's cache directory, shared by every
process and worker on the machine) and Redis (SET ... EX) for several machines. Both store the response's JSON as
the HTTP API sends it, already marked ``cached: true``, so a face that answers JSON sends a hit's stored bytes as
they are (``get_body``); ``get`` decodes them into a ``SearchResponse`` for the others.
"""

from __future__ import annotations

import asyncio
import hashlib
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from serpfuse.models import SearchRequest, SearchResponse
from serpfuse.state.sqlite_store import SqliteFile, transaction
from serpfuse.version import __version__

KEY_VERSION = 4  # bump when the key's layout changes, so old rows are never read under a new meaning
REDIS_PREFIX = "serpfuse:result:"
Clock = Callable[[], float]


class ResultCache(Protocol):
    async def get_body(self, key: str) -> bytes | None:
        """The stored JSON (marked ``cached: true``), or None when absent or expired."""
        ...

    async def get(self, key: str) -> SearchResponse | None:
        """The cached response marked ``cached=True``, or None when absent, expired or unreadable."""
        ...

    async def set(self, key: str, response: SearchResponse, ttl_s: float) -> None: ...

    async def set_body(self, key: str, body: bytes, ttl_s: float) -> None:
        """Store ``cached_body(response)`` (a caller that already encoded the response skips a second encode)."""
        ...

    async def aclose(self) -> None: ...


def cache_key(
    request: SearchRequest, fingerprint: str, source_identity: str, *, explain: bool = False
) -> str:
    """The key of a response: every field of the request but its strategy, the fingerprint of the configuration
    that ranks it (``config.with_strategy(request.strategy).fingerprint()``: an absent strategy and the default
    one share a key), the source, ``explain`` and the version (a hit may be sent as stored: never one another
    version wrote). The request's JSON is pydantic's, in its fields' fixed order, hashed as it is: no dict built
    and sorted on the way (a third of the time)."""
    head = f"{KEY_VERSION}|{__version__}|{source_identity}|{int(explain)}|{fingerprint}|"
    blob = head.encode("utf-8") + request.model_dump_json(exclude={"strategy"}).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()


def cached_body(response: SearchResponse) -> bytes:
    return response.model_copy(update={"cached": True}).to_json_bytes()


def decode(body: str | bytes) -> SearchResponse | None:
    try:
        response = SearchResponse.model_validate_json(body)
    except ValueError:  # a row written by another version: a miss, never an error
        return None
    response.cached = True
    return response


class _Store:
    """``get``/``set`` of a response over a store's ``get_body``/``set_body``."""

    async def get_body(self, key: str) -> bytes | None:
        raise NotImplementedError

    async def set_body(self, key: str, body: bytes, ttl_s: float) -> None:
        raise NotImplementedError

    async def get(self, key: str) -> SearchResponse | None:
        body = await self.get_body(key)
        return decode(body) if body is not None else None

    async def set(self, key: str, response: SearchResponse, ttl_s: float) -> None:
        if ttl_s > 0:
            await self.set_body(key, cached_body(response), ttl_s)


class NoCache(_Store):
    """Every lookup a miss, every write dropped: what a process serves from while its shared cache is down."""

    def __repr__(self) -> str:
        return "NoCache()"

    async def get_body(self, key: str) -> bytes | None:
        return None

    async def set_body(self, key: str, body: bytes, ttl_s: float) -> None:
        return None

    async def aclose(self) -> None:
        return None


RESULTS_SCHEMA = """
CREATE TABLE IF NOT EXISTS results (key TEXT PRIMARY KEY, expires REAL NOT NULL, body BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS results_expires ON results (expires);
"""


class SqliteResultCache(_Store):
    """One SQLite file in WAL mode, so readers never wait for a writer, in this process or another.

    A read is one primary-key lookup (tens of microseconds) and runs on the caller's thread with that thread's
    own connection: a hop to a worker thread cost more than the read. Writes wait for the file's write lock,
    so they run in a worker thread, each worker thread with its own connection.
    """

    # How long a busy file is waited for. A WAL reader waits only while a crashed writer's log is recovered, and
    # it waits on the caller's thread: a miss is better. Writers wait their turn in their own thread.
    READ_WAIT_S = 0.1
    WRITE_WAIT_S = 10.0

    def __init__(self, path: Path, *, clock: Clock = time.time) -> None:
        self.path = Path(path)
        self.file = SqliteFile(self.path, RESULTS_SCHEMA)
        self._clock = clock

    def __repr__(self) -> str:
        return f"SqliteResultCache({str(self.path)!r})"

    def _connect(self, wait_s: float = WRITE_WAIT_S) -> sqlite3.Connection:
        return self.file.connect(wait_s)

    def _get(self, key: str) -> bytes | None:
        row = (
            self._connect(self.READ_WAIT_S)
            .execute("SELECT body FROM results WHERE key = ? AND expires > ?", (key, self._clock()))
            .fetchone()
        )
        if row is None:
            return None
        body = row[0]
        return body.encode("utf-8") if isinstance(body, str) else body

    def _set(self, key: str, body: bytes, ttl_s: float) -> None:
        with transaction(self._connect()) as conn:
            now = self._clock()
            conn.execute("DELETE FROM results WHERE expires <= ?", (now,))
            conn.execute(
                "INSERT OR REPLACE INTO results (key, expires, body) VALUES (?, ?, ?)",
                (key, now + ttl_s, body),
            )

    def count_rows(self) -> int:
        """Rows stored, expired or not (tests and diagnostics)."""
        return int(self._connect().execute("SELECT COUNT(*) FROM results").fetchone()[0])

    async def get_body(self, key: str) -> bytes | None:
        return self._get(key)

    async def set_body(self, key: str, body: bytes, ttl_s: float) -> None:
        if ttl_s > 0:
            await asyncio.to_thread(self._set, key, body, ttl_s)

    async def aclose(self) -> None:
        self.file.close()


class RedisResultCache(_Store):
    """``SET serpfuse:result:<key> ... EX ttl`` (SETEX's modern form): Redis expires the rows itself."""

    def __init__(self, client: Any, *, prefix: str = REDIS_PREFIX) -> None:
        self._redis = client  # a redis.asyncio.Redis, shared with the cooldown store
        self._prefix = prefix

    def __repr__(self) -> str:
        return "RedisResultCache()"

    async def get_body(self, key: str) -> bytes | None:
        body = await self._redis.get(self._prefix + key)
        if body is None:
            return None
        return body.encode("utf-8") if isinstance(body, str) else body

    async def set_body(self, key: str, body: bytes, ttl_s: float) -> None:
        seconds = int(round(ttl_s))
        if seconds > 0:
            await self._redis.set(self._prefix + key, body, ex=seconds)

    async def aclose(self) -> None:
        return None  # the client belongs to whoever made it
