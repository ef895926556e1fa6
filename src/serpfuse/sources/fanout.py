"""Fan out: ask every engine at once, under one deadline, primaries first.

- Primaries run concurrently, each query variant too; the overall deadline cancels whoever is late, and the
  fan-out waits at most ``UNWIND_GRACE_S`` for them to unwind (closing a connection, a store write): one that
  takes longer finishes unwinding in the background, so no engine's clean-up can hold the search.
- The core-word retry runs only when the first answer has no row that survives the relevance gate (the cost
  guard): one more request per engine is not free.
- The fallback tier runs only when every primary came back with nothing usable.
- An engine the source cannot use (no key, cooling down, no time-range support) is reported as skipped, with why.
- Only the engines of the request's category are asked (a news search asks the news endpoints); the others are
  not part of the search at all, so they are not reported.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from serpfuse.config import engine_table
from serpfuse.engines import UnknownEngine, category_of
from serpfuse.errors import InputError
from serpfuse.models import ANSWERED, EngineAnswer, EngineRow, SearchRequest
from serpfuse.ranking.query import QueryAnalysis
from serpfuse.sources.base import EngineSlot, Source

RowGate = Callable[[EngineRow], bool]
DEFAULT_DEADLINE_S = 20.0
UNWIND_GRACE_S = 0.05  # how long cancelled engine calls may take to unwind before the search goes on
_UNWINDING: set[asyncio.Task] = set()  # cancelled calls still unwinding after their search went on
CJK_LEAD_REGIONS = ("cjk", "both")
CJK_LANGUAGES = ("zh", "ja", "ko")
# Why a CJK-region engine (baidu, sogou, so360, naver, bing-cn) is not asked for another query: their indexes
# answer Chinese and Korean sources, so for an English query they only spend requests and rate limits.
NOT_A_CJK_QUERY = "asked for Chinese, Japanese and Korean queries (or when named)"


def asks_cjk_engines(request: SearchRequest, query: QueryAnalysis) -> bool:
    """Region policy: the CJK tier is asked for a CJK query, a zh/ja/ko language or region, or when named."""
    if query.is_cjk or request.engines:
        return True
    language = (request.language or "").lower().replace("_", "-").split("-")[0]
    region = (request.region or "").lower().replace("_", "-")
    return language in CJK_LANGUAGES or any(
        part in ("cn", "tw", "hk", "jp", "kr") for part in region.split("-")
    )


@dataclass
class FanoutResult:
    answers: list[EngineAnswer] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    retried: bool = False
    fallback_used: bool = False
    lead_engines: list[str] = field(default_factory=list)


class NoEngineInCategory(UnknownEngine):
    """Every named engine searches another category, and none has a counterpart in this one."""

    def __init__(self, names: list[str], category: str, valid: list[str]):
        InputError.__init__(
            self,
            f"no {category} search among {', '.join(map(repr, names))}; "
            f"{category} engines: {', '.join(valid) or 'none'}",
        )


def select_slots(slots: list[EngineSlot], request: SearchRequest) -> list[EngineSlot]:
    """Keep the engines of the request's category, and of those the requested ones (all when none named). An
    unknown name is an error, never a silent 'auto'.

    A name also finds the engine under its alias (data/engine_weights.json): ``ddg`` asks a recording's
    ``duckduckgo``, and ``duckduckgo`` asks the live ``ddg``. A named engine of another category stands for
    its counterpart in this one (``bing`` in a news search asks ``bing-news``, ``bing-news`` in a web search
    ``bing``); one without a counterpart is left out, and a request left with none is an error.
    """
    category = request.category
    in_category = [s for s in slots if category_of(s.name) == category]
    if not request.engines:
        return in_category
    aliases = engine_table()["aliases"]
    by_name = {s.name: s for s in slots}
    for s in slots:
        by_name.setdefault(aliases.get(s.name, s.name), s)

    def find(name: str) -> EngineSlot | None:
        return by_name.get(name, by_name.get(aliases.get(name, name)))

    unknown = [e for e in request.engines if find(e) is None]
    if unknown:
        raise UnknownEngine(unknown, sorted(s.name for s in slots))
    chosen = [counterpart(find(e), category, find) for e in request.engines]
    kept = list({s.name: s for s in chosen if s is not None}.values())
    if not kept:
        raise NoEngineInCategory(request.engines, category, sorted(s.name for s in in_category))
    return kept


def counterpart(
    slot: EngineSlot | None, category: str, find: Callable[[str], EngineSlot | None]
) -> EngineSlot | None:
    """``slot`` when it searches ``category``, else its engine's counterpart there (``bing`` and ``bing-news``
    are one engine's web and news search), else None."""
    if slot is None or category_of(slot.name) == category:
        return slot
    own = category_of(slot.name)
    base = slot.name.removesuffix(f"-{own}")
    other = find(base if category == "general" else f"{base}-{category}")
    return other if other is not None and category_of(other.name) == category else None


def lead_engines(slots: list[EngineSlot], query: QueryAnalysis) -> list[str]:
    """Region policy: a CJK query leads with the engines that answer Chinese sources, an ASCII one with the rest."""
    if query.is_cjk:
        return [s.name for s in slots if s.region in CJK_LEAD_REGIONS]
    return [s.name for s in slots if s.region != "cjk"]


async def _ask_all(
    source: Source,
    names: list[str],
    variants: list[str],
    request: SearchRequest,
    deadline: float,
) -> list[EngineAnswer]:
    keys = [(e, v) for e in names for v in variants]
    if not keys:
        return []
    # Each call runs on the loop until its request is sent (~1 ms each): the engine expected to answer last is
    # asked first, so it is not also the last to start. The answers keep the engines' order (the ranking's).
    expected = {e: source.expected_s(e) for e in names}
    by_expected = sorted(keys, key=lambda k: -(expected[k[0]] or 0.0))
    tasks = {k: asyncio.ensure_future(source.ask(k[0], k[1], request)) for k in by_expected}
    jobs = {k: tasks[k] for k in keys}
    started = time.monotonic()
    _, pending = await asyncio.wait(jobs.values(), timeout=max(0.0, deadline - time.monotonic()))
    for task in pending:
        task.cancel()
    if pending:
        _, unwinding = await asyncio.wait(pending, timeout=UNWIND_GRACE_S)
        for task in unwinding:  # kept (a task nobody holds may be collected) until it ends by itself
            _UNWINDING.add(task)
            task.add_done_callback(_unwound)
    waited_ms = (time.monotonic() - started) * 1000
    out = []
    for (engine, variant), task in jobs.items():
        if task in pending:
            out.append(
                EngineAnswer(
                    engine=engine,
                    status="timeout",
                    variant=variant,
                    latency_ms=waited_ms,
                    reason="no answer before the search deadline",
                )
            )
        elif task.exception() is not None:
            exc = task.exception()
            out.append(
                EngineAnswer(
                    engine=engine,
                    status="error",
                    variant=variant,
                    reason=f"engine failed: {type(exc).__name__}",
                )
            )
        else:
            out.append(task.result())
    return out


def _unwound(task: asyncio.Task) -> None:
    _UNWINDING.discard(task)
    if not task.cancelled():
        task.exception()  # retrieved: a late failure of an abandoned call is nobody's to report


def _usable(answers: list[EngineAnswer], gate: RowGate | None) -> bool:
    return any(gate is None or gate(row) for a in answers for row in a.rows)


async def fan_out(
    source: Source,
    request: SearchRequest,
    query: QueryAnalysis,
    *,
    deadline_s: float = DEFAULT_DEADLINE_S,
    gate: RowGate | None = None,
) -> FanoutResult:
    deadline = time.monotonic() + deadline_s
    slots = select_slots(source.slots(request), request)
    result = FanoutResult(lead_engines=lead_engines(slots, query))
    if not slots:  # a recording without news, say: say so rather than answer nothing without a word
        result.warnings.append(f"no {request.category} engine to ask")
    if not asks_cjk_engines(request, query):
        slots = [
            dataclasses.replace(s, available=False, unavailable_reason=NOT_A_CJK_QUERY)
            if s.region == "cjk" and s.available
            else s
            for s in slots
        ]
    usable_slots = [s for s in slots if s.available]
    for s in slots:
        if not s.available:
            result.answers.append(
                EngineAnswer(engine=s.name, status="skipped", tier=s.tier, reason=s.unavailable_reason)
            )
    primaries = [s.name for s in usable_slots if s.tier == "primary"]
    fallbacks = [s.name for s in usable_slots if s.tier == "fallback"]
    if not primaries:  # nothing leads: the fallback tier is all there is
        primaries, fallbacks = fallbacks, []

    first = await _ask_all(source, primaries, query.variants, request, deadline)
    result.answers.extend(first)
    if primaries and not _usable(first, gate) and query.core_variant and time.monotonic() < deadline:
        result.retried = True
        answered = sorted({a.engine for a in first if a.status in ANSWERED})
        retry = await _ask_all(source, answered, [query.core_variant], request, deadline)
        result.answers.extend(retry)
        result.warnings.append(
            f"no relevant rows for the query; retried with core words {query.core_variant!r}"
        )
    if fallbacks and not _usable(result.answers, gate):
        if time.monotonic() < deadline:
            result.fallback_used = True
            result.answers.extend(await _ask_all(source, fallbacks, query.variants, request, deadline))
            any_answered = any(a.status in ANSWERED for a in result.answers)
            why = "no primary engine returned a usable row" if any_answered else "every primary engine failed"
            result.warnings.append(f"{why}; used the fallback tier")
        else:
            for name in fallbacks:
                result.answers.append(
                    EngineAnswer(engine=name, status="skipped", tier="fallback", reason="deadline reached")
                )
    else:
        for name in fallbacks:
            result.answers.append(
                EngineAnswer(
                    engine=name, status="skipped", tier="fallback", reason="fallback tier not needed"
                )
            )
    return result
