"""Fan-out rules (seed 000) with an in-memory source: deadline, tier gate, core-word retry cost guard."""

from __future__ import annotations

import asyncio

import pytest

from serpfuse.config import DEFAULT_FILTERS
from serpfuse.models import EngineAnswer, EngineRow, SearchRequest
from serpfuse.pipeline import relevance_gate
from serpfuse.ranking.query import analyze_query
from serpfuse.sources.base import EngineSlot, SourceBase
from serpfuse.sources.fanout import UnknownEngine, fan_out


class ScriptedSource(SourceBase):
    """Answers from a script: engine -> (delay seconds, rows factory or status)."""

    name = "scripted"

    def __init__(self, slots, script):
        self._slots = slots
        self.script = script
        self.calls: list[tuple[str, str]] = []
        self.cancelled: list[str] = []

    def slots(self, request):
        return self._slots

    async def ask(self, engine, variant, request):
        self.calls.append((engine, variant))
        delay, rows = self.script[engine]
        try:
            await asyncio.sleep(delay)
        except asyncio.CancelledError:
            self.cancelled.append(engine)
            raise
        rows = rows(variant) if callable(rows) else rows
        return EngineAnswer(engine=engine, status="ok" if rows else "empty", rows=rows, variant=variant)

    async def aclose(self):
        pass


def row(engine, rank, url, title="", snippet=""):
    return EngineRow(engine=engine, rank=rank, url=url, title=title, snippet=snippet)


async def test_deadline_cancels_late_engines_and_keeps_the_rest():
    src = ScriptedSource(
        [EngineSlot("fast"), EngineSlot("slow")],
        {"fast": (0, [row("fast", 1, "https://a.example/")]), "slow": (30, [])},
    )
    res = await asyncio.wait_for(
        fan_out(src, SearchRequest(query="rust async"), analyze_query("rust async"), deadline_s=0.3), 5
    )
    status = {a.engine: a.status for a in res.answers}
    assert status == {"fast": "ok", "slow": "timeout"}
    assert src.cancelled == ["slow"]
    assert not [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]


async def test_fallback_tier_only_when_primaries_have_nothing():
    slots = [EngineSlot("p1"), EngineSlot("f1", tier="fallback")]
    src = ScriptedSource(
        slots,
        {"p1": (0, [row("p1", 1, "https://a.example/")]), "f1": (0, [row("f1", 1, "https://b.example/")])},
    )
    res = await fan_out(src, SearchRequest(query="x y"), analyze_query("x y"))
    assert ("f1", "x y") not in src.calls and not res.fallback_used
    assert {a.engine: a.status for a in res.answers}["f1"] == "skipped"

    src = ScriptedSource(slots, {"p1": (0, []), "f1": (0, [row("f1", 1, "https://b.example/")])})
    res = await fan_out(src, SearchRequest(query="x y"), analyze_query("x y"))
    assert res.fallback_used and any(a.engine == "f1" and a.status == "ok" for a in res.answers)


async def test_core_word_retry_only_when_nothing_passes_the_relevance_gate():
    q = "东数西算 八个国家枢纽节点 定位"
    analysis = analyze_query(q)
    assert analysis.core_variant
    junk = [
        row("bing-cn", 1, "https://dict.example/dong", "东", "汉字 东 的解释"),
        row("bing-cn", 2, "https://co.example/", "李在东", "公司"),
    ]
    good = [
        row(
            "bing-cn",
            1,
            "https://gov.example/eds",
            "东数西算工程 国家枢纽节点",
            "东数西算 八个国家枢纽节点的定位",
        )
    ]
    src = ScriptedSource(
        [EngineSlot("bing-cn", region="cjk")],
        {"bing-cn": (0, lambda v: good if v == analysis.core_variant else junk)},
    )
    res = await fan_out(src, SearchRequest(query=q), analysis, gate=relevance_gate(analysis, DEFAULT_FILTERS))
    assert res.retried and ("bing-cn", analysis.core_variant) in src.calls

    # the cost guard: a first answer with a relevant row is not retried
    src = ScriptedSource([EngineSlot("bing-cn", region="cjk")], {"bing-cn": (0, good)})
    res = await fan_out(src, SearchRequest(query=q), analysis, gate=relevance_gate(analysis, DEFAULT_FILTERS))
    assert not res.retried and src.calls == [("bing-cn", analysis.cleaned)]


async def test_unavailable_engines_are_reported_skipped_with_reason():
    slots = [
        EngineSlot("brave", available=False, unavailable_reason="no API key (set BRAVE_API_KEY)"),
        EngineSlot("ddg"),
    ]
    src = ScriptedSource(slots, {"ddg": (0, [row("ddg", 1, "https://a.example/")])})
    res = await fan_out(src, SearchRequest(query="x"), analyze_query("x"))
    brave = [a for a in res.answers if a.engine == "brave"][0]
    assert brave.status == "skipped" and "BRAVE_API_KEY" in brave.reason
    assert ("brave", "x") not in src.calls


async def test_or_alternatives_are_asked_as_variants():
    src = ScriptedSource([EngineSlot("ddg")], {"ddg": (0, [row("ddg", 1, "https://a.example/")])})
    await fan_out(src, SearchRequest(query="fetch cancel OR abort"), analyze_query("fetch cancel OR abort"))
    assert sorted(v for _, v in src.calls) == ["abort", "fetch cancel"]


async def test_unknown_engine_is_an_error():
    src = ScriptedSource([EngineSlot("ddg")], {"ddg": (0, [])})
    with pytest.raises(UnknownEngine, match="nope"):
        await fan_out(src, SearchRequest(query="x", engines=["nope"]), analyze_query("x"))


async def test_an_engine_call_slow_to_unwind_cannot_hold_the_search():
    """Cancelled at the deadline, a call that takes 5 s to unwind (a hung connection close, a slow store
    write) is left to finish in the background: the fan-out ends within its short grace."""
    from serpfuse.sources import fanout

    unwound = asyncio.Event()

    class SlowToUnwind(ScriptedSource):
        async def ask(self, engine, variant, request):
            if engine != "stuck":
                return await super().ask(engine, variant, request)
            try:
                await asyncio.sleep(30)
            finally:
                await asyncio.shield(asyncio.sleep(5))  # clean-up that ignores the cancellation
                unwound.set()

    src = SlowToUnwind(
        [EngineSlot("fast"), EngineSlot("stuck")], {"fast": (0, [row("fast", 1, "https://a.example/")])}
    )
    loop = asyncio.get_running_loop()
    started = loop.time()
    res = await fan_out(src, SearchRequest(query="rust async"), analyze_query("rust async"), deadline_s=0.3)
    took = loop.time() - started
    assert {a.engine: a.status for a in res.answers} == {"fast": "ok", "stuck": "timeout"}
    assert took < 0.3 + fanout.UNWIND_GRACE_S + 0.5, took
    assert len(fanout._UNWINDING) == 1 and not unwound.is_set()  # still unwinding, and held on to
    for task in list(fanout._UNWINDING):
        task.cancel()
