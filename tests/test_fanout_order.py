"""The fan-out's use of what it knows about each engine's speed: the engine expected to answer last is asked
first (the answers keep the engines' order)."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from pathlib import Path

import pytest

from serpfuse.models import SearchRequest
from serpfuse.ranking.query import analyze_query
from serpfuse.sources.base import EngineSlot
from serpfuse.sources.fanout import fan_out
from test_fanout import ScriptedSource, row

Q = "rust async runtime"
NOW = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


class TimedSource(ScriptedSource):
    """A scripted source that says how long each engine is expected to take (``expected_s``)."""

    def __init__(self, slots, script, expected):
        super().__init__(slots, script)
        self.expected = expected
        self.answered: list[str] = []

    def expected_s(self, engine):
        return self.expected.get(engine)

    async def ask(self, engine, variant, request):
        answer = await super().ask(engine, variant, request)
        self.answered.append(engine)
        return answer


def rows_of(engine: str) -> list:
    shared = [
        row(engine, i, f"https://shared{i}.example.org/rust-async", f"Rust async runtime {i}") for i in (1, 2)
    ]
    return shared + [row(engine, 3, f"https://{engine}.example.net/tokio", "Tokio, a Rust async runtime")]


def source(expected: dict[str, float], delays: dict[str, float] | None = None) -> TimedSource:
    delays = delays or {"a": 0.0, "b": 0.15, "c": 0.01}
    script = {e: (d, rows_of(e)) for e, d in delays.items()}
    return TimedSource([EngineSlot(e) for e in delays], script, expected)


async def test_the_engine_expected_slowest_is_asked_first_and_the_answers_keep_the_engines_order():
    src = source({"a": 0.01, "b": 0.15, "c": 0.05})
    res = await fan_out(src, SearchRequest(query=Q), analyze_query(Q))
    assert [e for e, _ in src.calls] == ["b", "c", "a"]
    assert [a.engine for a in res.answers] == ["a", "b", "c"]
    unknown = source({})
    await fan_out(unknown, SearchRequest(query=Q), analyze_query(Q))
    assert [e for e, _ in unknown.calls] == ["a", "b", "c"]  # nothing known: the slots' order


# A new process (so no earlier test has loaded the tables): one engine that answers only once the ranking's word
# tables are loaded, or after WAIT_S. With the tables loaded while the engines are asked it answers at once. With a
# ranking worker (a server's), the tables are the worker's: this process must not load them too (66 MB).
FIRST_SEARCH = """
import asyncio, sys, time
from serpfuse.ranking import specificity
from serpfuse.models import SearchRequest
from serpfuse.pipeline import search
from serpfuse.sources.base import EngineSlot
from serpfuse.workers import WORKERS, ranking
from test_fanout import ScriptedSource, row

WITH_WORKER = sys.argv[1] == "worker"
WAIT_S = 3 if WITH_WORKER else 20

class WaitsForTables(ScriptedSource):
    async def ask(self, engine, variant, request):
        deadline = time.monotonic() + WAIT_S
        while not specificity.tables_loaded(None) and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        self.loaded_before_answer = specificity.tables_loaded(None)
        return await super().ask(engine, variant, request)

if WITH_WORKER:
    ranking.start()
    deadline = time.monotonic() + 60
    while not WORKERS.ready and time.monotonic() < deadline:
        time.sleep(0.05)
rows = [row("a", 1, "https://example.org/rust-async", "Rust async runtime")]
source = WaitsForTables([EngineSlot("a")], {"a": (0.0, rows)})
assert not specificity.tables_loaded(None)
response = asyncio.run(search(SearchRequest(query="rust async runtime"), source=source))
print(source.loaded_before_answer, len(response.results), specificity.tables_loaded(None))
ranking.close()
"""


@pytest.mark.parametrize(
    "ranking, expected",
    [("here", ["True", "1", "True"]), ("worker", ["False", "1", "False"])],
)
def test_a_process_first_search_loads_the_ranking_tables_while_the_engines_are_asked(ranking, expected):
    tests = Path(__file__).parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tests), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-c", FIRST_SEARCH, ranking], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == expected
