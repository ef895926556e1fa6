"""serpfuse's ``serve`` and ddgs's library side by side, on the perf probe's five fake engines (50-300 ms, on
127.0.0.1): 100 searches at once through each, against the raw asyncio gather of the same engine requests; the
CPU a search costs each (serve's whole process tree; ddgs's one process, all its threads); the memory each holds
at that peak (RSS); ddgs's one search alone ÷ the slowest engine. ddgs runs in an interpreter of its own:

    python -m venv /tmp/ddgs && /tmp/ddgs/bin/pip install ddgs==9.16.0
    python -m benchmarks.ddgs_side --ddgs-python /tmp/ddgs/bin/python [--rounds 3] [--src SRC]

ddgs reads each fake's rows as a Mojeek results page with its own parser; serpfuse's probe engines read the same
rows as JSON (``benchmarks/probe_path/perf_fake_answer.py``). Rounds alternate the two; medians are printed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from benchmarks.perf import LATENCIES_MS, THIS_SRC, served_concurrent, start_engines
from benchmarks.perf_probe import queries, raw_gather

DDGS_PROBE = Path(__file__).with_name("ddgs_probe.py")


def ddgs_round(python: str, port: int, n: int, salt: str, sequential: int) -> dict:
    """Two batches of ``n`` new searches through ddgs, each after a raw gather of its requests; the better of each."""
    args = {
        "port": port,
        "latencies": LATENCIES_MS,
        "warm": queries(3, f"{salt}-warm"),
        "sequential": queries(sequential, f"{salt}-seq"),
        "batches": [queries(n, f"{salt}-ddgs-{i}") for i in range(2)],
    }
    raw = []
    for qs in args["batches"]:
        t0 = time.perf_counter()
        asyncio.run(raw_gather(port, LATENCIES_MS, qs))
        raw.append(time.perf_counter() - t0)
    done = subprocess.run(
        [python, str(DDGS_PROBE), json.dumps(args)], capture_output=True, text=True, timeout=600, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"the ddgs probe failed under {python}: {done.stderr.strip()[-400:]}")
    got = json.loads(done.stdout)
    best = min(got["batches"], key=lambda b: b["s"])
    return {
        "batch_s": best["s"],
        "raw_s": min(raw),
        "cpu_ms": min(b["cpu_ms"] for b in got["batches"]),
        "rss_mb": max(b["rss_mb"] for b in got["batches"]),
        "empty": sum(b["empty"] for b in got["batches"]),
        "rows": statistics.mean(b["rows"] for b in got["batches"]),
        "sequential_s": got["sequential_s"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ddgs-python", required=True, help="an interpreter with ddgs installed")
    parser.add_argument("--src", type=Path, default=THIS_SRC, help="the src directory of the serpfuse tree")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("-n", type=int, default=100, help="searches at once")
    parser.add_argument("--sequential", type=int, default=10, help="ddgs searches one at a time, per round")
    args = parser.parse_args()
    slowest = max(LATENCIES_MS.values()) / 1000
    ddgs, serve = [], []
    engines, port = start_engines(lifetime_s=120 * args.rounds + 60)
    with engines, tempfile.TemporaryDirectory(prefix="serpfuse-ddgs-") as tmp:
        for r in range(args.rounds):
            d = ddgs_round(args.ddgs_python, port, args.n, f"r{r}", args.sequential)
            s = served_concurrent(args.src, port, args.n, Path(tmp), f"ddgs-side-{r}")
            ddgs.append(d)
            serve.append(s)
            print(
                f"round {r + 1}: ddgs {d['batch_s']:.3f} s = {d['batch_s'] / d['raw_s']:.2f} x raw,"
                f" CPU {d['cpu_ms']:.1f} ms, {d['rss_mb']:.0f} MB, {d['rows']:.1f} rows a search,"
                f" {d['empty']} empty; serve {s['serve_s']:.3f} s = {s['ratio']:.2f} x raw,"
                f" CPU {s['cpu_ms']:.1f} ms, {s['rss_mb']:.0f} MB (PSS {s['pss_mb']:.0f}), {s['failed']} failed",
                flush=True,
            )

    def med(rows: list[dict], key: str) -> float:
        return statistics.median(row[key] for row in rows)

    d_ratio = statistics.median(d["batch_s"] / d["raw_s"] for d in ddgs)
    print(f"medians of {args.rounds} rounds, {args.n} searches at once:")
    print(
        f"  batch: ddgs {med(ddgs, 'batch_s'):.3f} s ({d_ratio:.2f} x raw); serve {med(serve, 'serve_s'):.3f} s"
        f" ({med(serve, 'ratio'):.2f} x raw); serve / ddgs {med(serve, 'serve_s') / med(ddgs, 'batch_s'):.2f}"
    )
    faster = sum(s["serve_s"] < d["batch_s"] for d, s in zip(ddgs, serve, strict=True))
    leaner = sum(s["cpu_ms"] < d["cpu_ms"] for d, s in zip(ddgs, serve, strict=True))
    print(f"  serve faster in {faster} of {args.rounds} rounds, its CPU lower in {leaner}")
    print(f"  CPU a search: ddgs {med(ddgs, 'cpu_ms'):.1f} ms; serve {med(serve, 'cpu_ms'):.1f} ms")
    print(
        f"  memory at the peak: ddgs {med(ddgs, 'rss_mb'):.0f} MB (one process); serve {med(serve, 'rss_mb'):.0f} MB"
        f" RSS summed over its three, PSS {med(serve, 'pss_mb'):.0f} MB"
    )
    print(f"  ddgs one search alone: {med(ddgs, 'sequential_s') / slowest:.2f} x the slowest engine")


if __name__ == "__main__":
    main()
