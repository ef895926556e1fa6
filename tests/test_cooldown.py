"""The cooldown ladder and the per-engine rate limiter, on injected clocks (no real waiting)."""

from __future__ import annotations

import asyncio
import datetime as dt
import email.utils
import json

import pytest

from serpfuse.engines import ENGINES
from serpfuse.engines.base import (
    AccessDenied,
    ChallengeDetected,
    EngineError,
    EngineInfo,
    EngineTimeout,
    ParseFailure,
    RateLimited,
    classify_http,
)
from serpfuse.state.cooldown import CooldownPolicy, CooldownState, InMemoryCooldownStore, fit_to_engine
from serpfuse.state.ratelimit import QueueTooLong, RateLimiter


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds
        await asyncio.sleep(0)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(clock) -> InMemoryCooldownStore:
    return InMemoryCooldownStore(clock=clock)


async def cooldown_of(store: InMemoryCooldownStore, clock: Clock, error: EngineError) -> float:
    state = await store.record_failure("e", error)
    return state.until - clock.now


async def test_a_fresh_engine_is_not_cooling_down(store):
    assert await store.get("e") is None


@pytest.mark.parametrize(
    ("error", "seconds"),
    [
        (ChallengeDetected(), 3600),
        (RateLimited(), 180),
        (RateLimited(retry_after_s=42), 42),
        (AccessDenied(), 180),
        (AccessDenied("blocked by a firewall rule", cooldown_s=86400), 86400),
        (ChallengeDetected(cooldown_s=0), 0),  # a challenge that names its own pause keeps it
    ],
)
async def test_ladder_for_errors_that_name_their_cooldown(store, clock, error, seconds):
    assert await cooldown_of(store, clock, error) == pytest.approx(seconds)


def _info(**kw) -> EngineInfo:
    return EngineInfo(
        name="e", website="x", tier="primary", region="global", kind="html", needs_key=False, **kw
    )


@pytest.mark.parametrize(
    ("engine_s", "error", "seconds"),
    [
        (30.0, ChallengeDetected(), 30),  # DuckDuckGo-like: short
        (6 * 3600.0, ChallengeDetected("reCAPTCHA challenge"), 6 * 3600),  # Google-backed: long
        (30.0, ChallengeDetected(cooldown_s=7), 7),  # the error's own figure wins
        (30.0, RateLimited(), 180),  # only challenges take the engine's figure
        (30.0, EngineError("HTTP 500"), 5),
    ],
)
async def test_a_challenge_cools_down_as_long_as_the_engine_declares(store, clock, engine_s, error, seconds):
    fitted = fit_to_engine(_info(challenge_cooldown_s=engine_s), error)
    assert await cooldown_of(store, clock, fitted) == pytest.approx(seconds)


def test_engines_declare_their_challenge_cooldown_as_data():
    declared = {name: module.INFO.challenge_cooldown_s for name, module in ENGINES.items()}
    assert declared["ddg"] == 30  # SearXNG suspends ddg 0 s: its challenge is per request
    assert declared["bing"] == declared["yahoo"] == 3600
    assert declared["startpage"] >= 6 * 3600  # Google's wall behind Startpage lasts hours
    assert all(0 <= s <= CooldownPolicy().max_cooldown_s for s in declared.values())


async def test_plain_errors_and_timeouts_back_off_linearly_to_120_s(store, clock):
    errors = [EngineError("HTTP 500"), EngineTimeout(), ParseFailure()] * 10
    got = [await cooldown_of(store, clock, e) for e in errors]
    assert got[:5] == [5, 10, 15, 20, 25]
    assert got[23] == 120 and max(got) == 120


async def test_success_clears_the_state_and_the_backoff(store, clock):
    for _ in range(3):
        await store.record_failure("e", EngineError())
    assert (await store.get("e")).failures == 3
    await store.record_success("e")
    assert await store.get("e") is None
    assert await cooldown_of(store, clock, EngineError()) == 5  # the count started over


async def test_expiry_ends_the_cooldown_but_not_the_failure_count(store, clock):
    await store.record_failure("e", EngineError())
    clock.now += 4.9
    assert await store.get("e") is not None
    clock.now += 0.2
    assert await store.get("e") is None
    # Still no success: the next failure climbs the ladder instead of starting over.
    assert await cooldown_of(store, clock, EngineTimeout()) == 10


async def test_engines_are_independent(store):
    await store.record_failure("a", ChallengeDetected())
    assert await store.get("b") is None
    assert (await store.get("a")).status == "challenge"


@pytest.mark.parametrize(
    ("retry_after", "expected"),
    [("120", 120.0), (None, 180.0), ("soon", 180.0)],
)
async def test_retry_after_seconds_from_a_429(store, clock, retry_after, expected):
    headers = {"Retry-After": retry_after} if retry_after else {}
    error = classify_http(429, headers, b"")
    assert isinstance(error, RateLimited)
    assert await cooldown_of(store, clock, error) == pytest.approx(expected)


async def test_retry_after_http_date_from_a_429(clock):
    # classify_http reads the date against the real clock, so the store does too here.
    store = InMemoryCooldownStore()
    when = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=600)
    error = classify_http(429, {"retry-after": email.utils.format_datetime(when, usegmt=True)}, b"")
    state = await store.record_failure("e", error)
    assert 590 <= state.until - state.since <= 601
    assert error.retry_after_s == pytest.approx(state.until - state.since)


async def test_challenge_page_from_cloudflare_cools_for_an_hour(store, clock):
    error = classify_http(503, {"Server": "cloudflare"}, b"<script src='/cdn-cgi/challenge-platform/x'>")
    assert isinstance(error, ChallengeDetected)
    assert await cooldown_of(store, clock, error) == 3600


async def test_huge_retry_after_is_capped(store, clock):
    capped = CooldownPolicy().max_cooldown_s
    assert await cooldown_of(store, clock, RateLimited(retry_after_s=10**9)) == capped


async def test_state_is_json_and_says_why(store, clock):
    state = await store.record_failure("brave", RateLimited(retry_after_s=42))
    blob = json.dumps(state.to_json())
    again = CooldownState.from_json(json.loads(blob))
    assert again == state
    assert again.describe(clock.now) == "cooling down 42 s after: rate limited (HTTP 429)"
    clock.now += 40.4
    assert again.describe(clock.now) == "cooling down 2 s after: rate limited (HTTP 429)"
    assert json.loads(json.dumps(store.snapshot()))["brave"]["status"] == "rate-limited"


# --- rate limiter ----------------------------------------------------------------------------------------


async def test_parallel_calls_queue_one_interval_apart(clock):
    slept: list[float] = []

    async def record_sleep(seconds: float) -> None:  # concurrent sleepers overlap: do not advance the clock
        slept.append(seconds)
        await asyncio.sleep(0)

    limiter = RateLimiter(clock=clock, sleep=record_sleep)
    waits = await asyncio.gather(*(limiter.wait_turn("brave", 1.0) for _ in range(4)))
    assert waits == [0.0, 1.0, 2.0, 3.0]  # arrival order, one interval apart
    assert slept == [1.0, 2.0, 3.0]


async def test_a_call_after_a_quiet_spell_does_not_wait(clock):
    limiter = RateLimiter(clock=clock, sleep=clock.sleep)
    assert await limiter.wait_turn("brave", 1.0) == 0
    clock.now += 5
    assert await limiter.wait_turn("brave", 1.0) == 0
    assert await limiter.wait_turn("brave", 1.0) == pytest.approx(1.0)


async def test_engines_have_separate_queues_and_zero_interval_never_waits(clock):
    limiter = RateLimiter(clock=clock, sleep=clock.sleep)
    await limiter.wait_turn("brave", 1.0)
    assert await limiter.wait_turn("tavily", 1.0) == 0
    assert [await limiter.wait_turn("ddg", 0.0) for _ in range(3)] == [0, 0, 0]


async def test_a_slot_past_the_deadline_fails_at_once_without_taking_the_slot(clock):
    limiter = RateLimiter(clock=clock, sleep=clock.sleep)
    await limiter.slots.reserve("brave", 1.0, None)
    await limiter.slots.reserve("brave", 1.0, None)  # next free slot is 2 s away
    with pytest.raises(QueueTooLong):
        await limiter.wait_turn("brave", 1.0, max_wait_s=1.5)
    assert clock.now == 1_000_000.0  # it did not sleep
    assert await limiter.wait_turn("brave", 1.0, max_wait_s=2.5) == pytest.approx(2.0)
