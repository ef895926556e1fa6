"""How long parsing an answer stalls the event loop, in a thread and in a parse worker process, side by side.

``python tests/parse_stall.py`` parses real captured pages (AQL's Bing, Yahoo and DuckDuckGo captures, the
recorded API answers) and the fault matrix's 30,000-row answer, each way ``ROUNDS`` times, while a ticker
task on the loop sleeps 1 ms at a time; it prints, per answer, the parse's wall time and the loop's longest
stall (the longest gap between two ticks, minus the 1 ms sleep): what a server's parse workers cost an
ordinary page (``sources.parsing``, ``workers.pool``), and what they spare the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from fault_matrix import faults  # noqa: E402
from serpfuse.engines import get_engine  # noqa: E402
from serpfuse.engines.base import EngineError, EngineQuery  # noqa: E402
from serpfuse.sources import parsing  # noqa: E402
from serpfuse.workers import WORKERS  # noqa: E402
from test_engines_captures import YEARS, load_capture  # noqa: E402

ROUNDS = 5
Q = EngineQuery(text="q")


def answers(data: Path) -> list[tuple[str, str, dict, bytes]]:
    """(label, engine, headers, body): the smallest, median and largest current capture of each HTML engine,
    a recorded API answer, and the flood."""
    out = []
    for service, engine in (("bing", "bing"), ("yahoo", "yahoo"), ("duckduckgo", "ddg")):
        found = []
        for path in sorted((data / "aql-serps" / "warcs").glob(f"{service}-*.warc.gz")):
            try:
                capture = load_capture(path)
            except Exception:  # a capture without its expected file
                continue
            if capture.year in YEARS and capture.status == 200:
                found.append(capture)
        found.sort(key=lambda c: len(c.body))
        for which, capture in (
            ("smallest", found[0]),
            ("median", found[len(found) // 2]),
            ("largest", found[-1]),
        ):
            out.append((f"{engine} capture, {which}", engine, capture.headers, capture.body))
    brave = (data / "api-json" / "brave.json").read_bytes()
    out.append(("brave API answer", "brave", {"content-type": "application/json"}, brave))
    for fault in faults():
        if fault.name in ("SearXNG result naming 10 engines", "30,000 rows"):
            out.append(
                (f"fault: {fault.name}", "searxng", {"content-type": "application/json"}, fault.reply.body)
            )
    return out


async def stall(parse) -> tuple[float, float]:
    """(wall ms, the loop's longest stall in ms) of one awaited parse."""
    gaps = []
    running = True

    async def tick() -> None:
        last = time.perf_counter()
        while running:
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            gaps.append(now - last - 0.001)
            last = now

    ticker = asyncio.create_task(tick())
    await asyncio.sleep(0.005)
    started = time.perf_counter()
    with contextlib.suppress(EngineError):
        await parse()
    wall = time.perf_counter() - started
    running = False
    await ticker
    return wall * 1000, max(gaps, default=0.0) * 1000


async def main() -> None:
    data = Path(os.environ.get("SERPFUSE_DATA", HERE.parent.parent / "shared" / "data"))
    WORKERS.start()
    while not WORKERS.ready:
        await asyncio.sleep(0.05)
    await asyncio.sleep(1.0)  # every worker up
    print(f"{ROUNDS} rounds each; median wall ms and median of the loop's longest stall, ms")
    print(
        "| answer | size (KB) | thread: parse | thread: loop stall | process: parse | process: loop stall |"
    )
    print("|---|---|---|---|---|---|")
    for label, engine, headers, body in answers(data):
        fn, args = get_engine(engine).parse, (200, headers, body, Q)
        in_thread = functools.partial(parsing.parse_in_thread, functools.partial(fn, *args), 10.0)
        in_process = functools.partial(WORKERS.run, fn, args, 10.0)
        thread = [await stall(in_thread) for _ in range(ROUNDS)]
        process = [await stall(in_process) for _ in range(ROUNDS)]
        cells = [statistics.median(x[i] for x in runs) for runs in (thread, process) for i in (0, 1)]
        print(f"| {label} | {len(body) / 1024:.0f} | " + " | ".join(f"{c:.1f}" for c in cells) + " |")
    WORKERS.close()


if __name__ == "__main__":
    asyncio.run(main())
