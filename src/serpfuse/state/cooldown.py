"""Per-engine cooldowns: an engine that just failed is skipped for a while instead of being hammered.

The ladder (after SearXNG's suspension times, with the linear backoff SearXNG used to have):

- challenge/CAPTCHA: the engine's ``INFO.challenge_cooldown_s`` (30 s for DuckDuckGo, 3600 s by default,
  hours for Google-backed engines; ``fit_to_engine``); 429: the server's Retry-After, else 180 s; access denied: 180 s. These come
  from the error itself (``EngineError.cooldown_s``, set by ``serpfuse.engines.base``), so an engine can ask
  for its own (DuckDuckGo's challenge form, a Cloudflare firewall's day);
- every other error and every timeout: 5 s x consecutive failures, at most 120 s;
- a success clears the state.

State lives behind ``CooldownStore`` so a shared store (Redis, another issue) can replace the in-memory one.
States are plain JSON (``CooldownState.to_json``/``from_json``) and times are wall-clock epoch seconds,
which, unlike a monotonic clock, mean the same thing in every process sharing the store.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from serpfuse.engines.base import CHALLENGE_COOLDOWN_S, EngineError, EngineInfo

Clock = Callable[[], float]


@dataclass(frozen=True)
class CooldownPolicy:
    """The backoff for errors that do not name their own cooldown, and a ceiling for those that do."""

    error_step_s: float = 5.0
    error_cap_s: float = 120.0
    # A server can send any Retry-After; cap it at SearXNG's longest ban (15 days, a Cloudflare challenge).
    max_cooldown_s: float = 15 * 86400.0

    def seconds_for(self, error: EngineError, consecutive_failures: int) -> float:
        if error.cooldown_s is not None:
            return min(max(0.0, float(error.cooldown_s)), self.max_cooldown_s)
        if error.status == "challenge":  # no engine fitted it (fit_to_engine): the generic hour
            return CHALLENGE_COOLDOWN_S
        return min(self.error_step_s * max(1, consecutive_failures), self.error_cap_s)


def fit_to_engine(info: EngineInfo, error: EngineError) -> EngineError:
    """``error`` with the engine's own challenge cooldown when it is a challenge that names none itself."""
    if error.status == "challenge" and error.cooldown_s is None:
        error.cooldown_s = info.challenge_cooldown_s
    return error


@dataclass(frozen=True)
class CooldownState:
    """One engine's failure record. ``until`` is epoch seconds; the engine is skipped while now < until."""

    engine: str
    until: float
    failures: int
    status: str  # the EngineAnswer status of the last failure: error, timeout, rate-limited, challenge
    reason: str
    since: float

    def remaining_s(self, now: float) -> float:
        return max(0.0, self.until - now)

    def active(self, now: float) -> bool:
        return self.until > now

    def describe(self, now: float) -> str:
        """``cooling down 42 s after: rate limited (HTTP 429)``: the skip reason shown to users."""
        return f"cooling down {max(1, round(self.remaining_s(now)))} s after: {self.reason}"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CooldownState:
        return cls(
            engine=str(data["engine"]),
            until=float(data["until"]),
            failures=int(data["failures"]),
            status=str(data["status"]),
            reason=str(data["reason"]),
            since=float(data["since"]),
        )


class CooldownStore(Protocol):
    """Where cooldown states live. Async so a networked store fits the same interface."""

    async def get(self, engine: str) -> CooldownState | None:
        """The engine's state while it is cooling down; None when it may be asked."""
        ...

    async def record_failure(self, engine: str, error: EngineError) -> CooldownState: ...

    async def record_success(self, engine: str) -> None: ...


def next_state(
    previous: CooldownState | None, engine: str, error: EngineError, now: float, policy: CooldownPolicy
) -> CooldownState:
    """The state after one more failure. Pure, so any store applies the same ladder."""
    failures = (previous.failures if previous else 0) + 1
    seconds = policy.seconds_for(error, failures)
    return CooldownState(
        engine=engine,
        until=now + seconds,
        failures=failures,
        status=error.status,
        reason=error.message,  # fixed and key-free by contract (engines.base): safe to keep and show
        since=now,
    )


class InMemoryCooldownStore:
    """Process-local cooldowns. The failure count survives expiry: only a success resets the backoff."""

    def __init__(self, *, clock: Clock = time.time, policy: CooldownPolicy | None = None) -> None:
        self._clock = clock
        self._policy = policy or CooldownPolicy()
        self._states: dict[str, dict[str, Any]] = {}  # JSON, as a shared store would hold it

    async def get(self, engine: str) -> CooldownState | None:
        raw = self._states.get(engine)
        if raw is None:
            return None
        state = CooldownState.from_json(raw)
        return state if state.active(self._clock()) else None

    async def record_failure(self, engine: str, error: EngineError) -> CooldownState:
        # No await between read and write: atomic under asyncio, so no lock is needed.
        raw = self._states.get(engine)
        previous = CooldownState.from_json(raw) if raw else None
        state = next_state(previous, engine, error, self._clock(), self._policy)
        self._states[engine] = state.to_json()
        return state

    async def record_success(self, engine: str) -> None:
        self._states.pop(engine, None)

    def snapshot(self) -> dict[str, dict[str, Any]]:
        """Every stored state, expired or not, as JSON (for tests and diagnostics)."""
        return {name: dict(raw) for name, raw in self._states.items()}
