"""State shared by the processes of one machine through SQLite files (WAL mode): what Redis shares between
machines, for ``serve --workers N`` without Redis.

- ``SqliteFile``: one file, one connection per thread, created with its schema on first use. The result cache
  (``cache.SqliteResultCache``) stands on it too.
- ``SqliteCooldownStore``: engine cooldowns, the ``CooldownStore`` every worker reads and writes.
- ``SqliteTokenBuckets``: ``ratelimit.Buckets`` (``await take(key)``) with one bucket per key for every process.
- ``SqliteSlots``: each engine's send slots (``ratelimit.Slots``, under ``ratelimit.RateLimiter``), one queue per
  engine for every process.

Each operation is one short transaction on the caller's thread: the write lock is held for microseconds, and
``BEGIN IMMEDIATE`` takes it before reading, so two processes never both read the same old state. Times are
wall-clock epoch seconds, which mean the same in every process. Files are made 0600 (SQLite gives its -wal and
-shm files the database's mode), in a directory made 0700: cached answers and state are the user's alone.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from serpfuse.engines.base import EngineError
from serpfuse.files import private_dir
from serpfuse.state.cooldown import CooldownPolicy, CooldownState, next_state
from serpfuse.state.ratelimit import QueueTooLong

Clock = Callable[[], float]
STATE_FILE = "state.sqlite3"
STATE_SCHEMA = """
CREATE TABLE IF NOT EXISTS cooldowns (engine TEXT PRIMARY KEY, state TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS buckets (key TEXT PRIMARY KEY, tokens REAL NOT NULL, at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS slots (engine TEXT PRIMARY KEY, next REAL NOT NULL);
"""


class SqliteFile:
    """One SQLite file in WAL mode, one connection per thread (sqlite3 connections are not shared across
    threads), made on first use with ``schema`` applied once."""

    def __init__(self, path: Path, schema: str) -> None:
        self.path = Path(path)
        self._schema = schema
        self._ready = False
        self._lock = threading.Lock()
        self._local = threading.local()
        self._open: list[sqlite3.Connection] = []

    def connect(self, wait_s: float) -> sqlite3.Connection:
        """This thread's connection, waiting at most ``wait_s`` for a lock (fixed by the thread's first call)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            return conn
        with self._lock:
            if not self._ready:
                private_dir(self.path.parent)  # every folder it creates 0700, not the leaf alone
                _private(self.path)
            # Autocommit: each operation opens its own transaction (BEGIN IMMEDIATE where it reads to write).
            conn = sqlite3.connect(self.path, timeout=wait_s, check_same_thread=False, isolation_level=None)
            if not self._ready:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.executescript(self._schema)
                self._ready = True
            # In WAL mode NORMAL never corrupts the file; a power cut may lose the last writes.
            conn.execute("PRAGMA synchronous=NORMAL")
            self._open.append(conn)
        self._local.conn = conn
        return conn

    def close(self) -> None:
        with self._lock:
            conns, self._open = self._open, []
        for conn in conns:
            conn.close()
        self._local = threading.local()


def _private(path: Path) -> None:
    """Make ``path`` 0600 before SQLite opens it (it would create it 0644 under the usual umask)."""
    os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
    if path.stat().st_mode & 0o077:
        path.chmod(0o600)  # a file an older version made readable by others


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """BEGIN IMMEDIATE (the write lock, before anything is read) ... COMMIT, or ROLLBACK on an exception."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def state_file(cache_dir: Path) -> SqliteFile:
    return SqliteFile(Path(cache_dir) / STATE_FILE, STATE_SCHEMA)


class SqliteCooldownStore:
    """A ``CooldownStore`` shared by every process on the machine that opens the same file."""

    WAIT_S = 1.0

    def __init__(
        self, file: SqliteFile, *, clock: Clock = time.time, policy: CooldownPolicy | None = None
    ) -> None:
        self._file = file
        self._clock = clock
        self._policy = policy or CooldownPolicy()

    def __repr__(self) -> str:
        return f"SqliteCooldownStore({str(self._file.path)!r})"

    def _read(self, conn: sqlite3.Connection, engine: str) -> CooldownState | None:
        row = conn.execute("SELECT state FROM cooldowns WHERE engine = ?", (engine,)).fetchone()
        if row is None:
            return None
        try:
            return CooldownState.from_json(json.loads(row[0]))
        except (ValueError, KeyError, TypeError):
            return None  # unreadable: the engine is treated as healthy, as the Redis store does

    async def get(self, engine: str) -> CooldownState | None:
        state = self._read(self._file.connect(self.WAIT_S), engine)
        return state if state is not None and state.active(self._clock()) else None

    async def record_failure(self, engine: str, error: EngineError) -> CooldownState:
        with transaction(self._file.connect(self.WAIT_S)) as conn:
            state = next_state(self._read(conn, engine), engine, error, self._clock(), self._policy)
            conn.execute(
                "INSERT OR REPLACE INTO cooldowns (engine, state) VALUES (?, ?)",
                (engine, json.dumps(state.to_json())),
            )
        return state

    async def record_success(self, engine: str) -> None:
        self._file.connect(self.WAIT_S).execute("DELETE FROM cooldowns WHERE engine = ?", (engine,))


class SqliteTokenBuckets:
    """``ratelimit.Buckets`` in SQLite: ``burst`` at once, refilled at ``rate_per_s``, one bucket per key for
    every process on the machine."""

    WAIT_S = 1.0
    PURGE_EVERY = 1000  # takes between removals of buckets that have refilled (bounded memory)

    def __init__(
        self, file: SqliteFile, rate_per_s: float, burst: float, *, prefix: str, clock: Clock = time.time
    ) -> None:
        self._file = file
        self.rate = rate_per_s
        self.burst = float(burst)
        self._prefix = prefix
        self._clock = clock
        self._takes = 0

    def __repr__(self) -> str:
        return f"SqliteTokenBuckets(prefix={self._prefix!r})"

    def take_now(self, key: str) -> float:
        """0 when the caller may go (a token is spent), else the seconds until a token is due."""
        name = self._prefix + key
        with transaction(self._file.connect(self.WAIT_S)) as conn:
            now = self._clock()
            row = conn.execute("SELECT tokens, at FROM buckets WHERE key = ?", (name,)).fetchone()
            tokens, at = row if row else (self.burst, now)
            tokens = min(self.burst, tokens + max(0.0, now - at) * self.rate)
            wait_s = 0.0 if tokens >= 1.0 else (1.0 - tokens) / self.rate
            tokens = tokens - 1.0 if tokens >= 1.0 else tokens
            conn.execute(
                "INSERT OR REPLACE INTO buckets (key, tokens, at) VALUES (?, ?, ?)", (name, tokens, now)
            )
            self._takes += 1
            if self._takes % self.PURGE_EVERY == 0:
                conn.execute("DELETE FROM buckets WHERE at < ?", (now - self.burst / self.rate,))
        return wait_s

    async def take(self, key: str) -> float:
        return self.take_now(key)


class SqliteSlots:
    """``ratelimit.Slots`` in SQLite: one queue of send slots per engine for every process on the machine."""

    WAIT_S = 1.0

    def __init__(self, file: SqliteFile, *, clock: Clock = time.time) -> None:
        self._file = file
        self._clock = clock

    def __repr__(self) -> str:
        return f"SqliteSlots({str(self._file.path)!r})"

    def reserve_now(self, engine: str, min_interval_s: float, max_wait_s: float | None) -> float:
        with transaction(self._file.connect(self.WAIT_S)) as conn:
            now = self._clock()
            row = conn.execute("SELECT next FROM slots WHERE engine = ?", (engine,)).fetchone()
            slot = max(now, row[0] if row else now)
            wait_s = slot - now
            if max_wait_s is not None and wait_s > max_wait_s:
                raise QueueTooLong(engine, wait_s)
            conn.execute(
                "INSERT OR REPLACE INTO slots (engine, next) VALUES (?, ?)", (engine, slot + min_interval_s)
            )
        return wait_s

    async def reserve(self, engine: str, min_interval_s: float, max_wait_s: float | None) -> float:
        return self.reserve_now(engine, min_interval_s, max_wait_s)
