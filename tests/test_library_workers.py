"""``serpfuse.start_workers()``: a program that runs many searches at once ranks and parses in worker processes,
as a server does. What it must keep: the same responses as without workers, and no process left behind, whether
the program stops the workers or just ends."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time

import serpfuse
from conftest import running, until
from serpfuse.sources.replay import ReplaySource
from serpfuse.workers import WORKERS


async def test_concurrent_searches_with_workers_answer_as_without_them_and_stop_clean(recording):
    source = ReplaySource(recording)
    queries = [e["query"] for e in json.loads(recording.read_text(encoding="utf-8"))][:12]
    plain = await asyncio.gather(*(serpfuse.asearch(q, source=source) for q in queries))
    serpfuse.start_workers()
    try:
        await until(lambda: WORKERS.ready, "the workers did not start")  # one pool: they parse and rank
        pids = WORKERS.pids()
        assert pids and all(running(p) for p in pids)
        pooled = await asyncio.gather(*(serpfuse.asearch(q, source=source) for q in queries))
    finally:
        serpfuse.stop_workers()
    for a, b in zip(plain, pooled, strict=True):
        a, b = a.to_json_dict(), b.to_json_dict()
        a.pop("tookMs"), b.pop("tookMs")
        assert a == b
    await until(lambda: not any(running(p) for p in pids), "a worker outlived stop_workers()", 30)


PROGRAM = """
import time, serpfuse
from serpfuse.workers import WORKERS
serpfuse.start_workers()
deadline = time.monotonic() + 60
while not WORKERS.ready and time.monotonic() < deadline:
    time.sleep(0.05)
print(*WORKERS.pids())
"""


def test_a_program_that_never_stops_its_workers_ends_and_takes_them_with_it():
    done = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    pids = [int(p) for p in done.stdout.split()]
    assert pids
    deadline = time.monotonic() + 30
    while any(running(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(running(p) for p in pids)
