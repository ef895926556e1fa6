"""ddgs's side of ``benchmarks.ddgs_side``, run by path with an interpreter that has ddgs installed:
``python ddgs_probe.py JSON``. It imports nothing of serpfuse's and prints one JSON object.

ddgs's engine registry is replaced by five copies of its own Mojeek engine (its lxml XPath parser, its primp
client), one per fake engine on 127.0.0.1, so ddgs can reach nothing else. One ``DDGS`` is shared by every
thread (its engines' connection pools with it), and ``max_results`` is high enough that ddgs asks all five
engines of a search at once and waits for the slowest, as a serpfuse search does.
"""

from __future__ import annotations

import json
import resource
import statistics
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

MAX_RESULTS = 40  # ddgs runs ceil(40 / 10) + 1 = 5 engines at once: all five


def engines(port: int, latencies: dict[str, int]) -> dict[str, type]:
    from ddgs.engines.mojeek import Mojeek

    out = {}
    for name, ms in latencies.items():
        attrs = {"name": name, "provider": name, "search_url": f"http://127.0.0.1:{port}/{ms}/{name}.html"}
        out[name] = type(f"Fake{name}", (Mojeek,), attrs)
    return out


def rss_mb() -> float:
    import os

    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 1e6


class PeakRss:
    """This process's peak RSS over a ``with`` block, sampled every 50 ms."""

    def __init__(self) -> None:
        self.peak, self._stop = rss_mb(), threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            self.peak = max(self.peak, rss_mb())

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, rss_mb())


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)  # every thread of the process
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    args = json.loads(sys.argv[1])
    from ddgs import DDGS
    from ddgs.engines import ENGINES

    ENGINES["text"] = engines(args["port"], args["latencies"])
    backend = ",".join(args["latencies"])
    ddgs = DDGS(timeout=10)

    def search(q: str) -> int:
        return len(ddgs.text(q, backend=backend, max_results=MAX_RESULTS))

    for q in args["warm"]:
        search(q)
    sequential = []
    for q in args["sequential"]:
        t0 = time.perf_counter()
        search(q)
        sequential.append(time.perf_counter() - t0)
    batches = []
    for qs in args["batches"]:
        with ThreadPoolExecutor(max_workers=len(qs)) as pool, PeakRss() as rss:
            cpu0, t0 = cpu_s(), time.perf_counter()
            rows = list(pool.map(search, qs))
            seconds, cpu = time.perf_counter() - t0, cpu_s() - cpu0
        batches.append(
            {
                "s": seconds,
                "cpu_ms": cpu * 1000 / len(qs),
                "rss_mb": rss.peak,
                "empty": rows.count(0),
                "rows": statistics.mean(rows),
            }
        )
    p50 = statistics.median(sequential) if sequential else None
    print(json.dumps({"sequential_s": p50, "batches": batches}))


if __name__ == "__main__":
    main()
