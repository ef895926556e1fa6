"""Where a server's memory and CPU go: ``serve`` (the perf probe's: uvicorn, 1 worker, the processes it parses and
ranks in) against the fake engines, each process's RSS once started and warmed, and at the peak of 100 concurrent
searches (the perf table's memory row is the sum at that peak), and the CPU a search costs each kind of process in
that batch. For another tree, ``--src``:

    python -m benchmarks.serve_memory [--src /tmp/base/src] [--soak 10]   # git archive REV src | tar -x -C /tmp/base

``--soak K`` first runs K batches of new searches: the memory of a server that has ranked many rows (its memos full).
Memory is RSS per process and, for the tree, PSS summed: a page its processes share (the interpreter, libraries, the
mapped word tables) counts once, as it costs the machine; RSS summed counts it once per process.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from benchmarks.perf import LATENCIES_MS, THIS_SRC, served_concurrent, start_engines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=THIS_SRC, help="the src directory of the tree to measure")
    parser.add_argument("-n", type=int, default=100, help="searches at once")
    parser.add_argument("--soak", type=int, default=0, help="batches of new searches run before measuring")
    args = parser.parse_args()
    engines, port = start_engines(lifetime_s=300)
    with engines, tempfile.TemporaryDirectory(prefix="serpfuse-memory-") as tmp:
        got = served_concurrent(args.src, port, args.n, Path(tmp), "memory", args.soak)
    print(
        f"{args.src}: {args.n} searches at once, {got['failed']} failed answers; batch {got['serve_s']:.3f} s"
        f" = {got['ratio']:.2f} x the raw gather ({got['raw_s']:.3f} s); CPU {got['cpu_ms']:.1f} ms a search"
    )
    first, median, last = got["finished_s"]
    print(
        f"  answered at (s from the batch's start): first {first:.3f}, median {median:.3f}, last {last:.3f};"
        f" the slowest engine answers after {max(LATENCIES_MS.values()) / 1000:.3f}"
    )
    split = ", ".join(
        f"{role} {ms:.1f}" for role, ms in sorted(got["cpu_ms_by_role"].items(), key=lambda r: -r[1])
    )
    print(f"  CPU a search by role (ms): {split}")
    for label, rows, pss in (
        ("started", got["idle_rss_by_role"], got["idle_pss_mb"]),
        ("peak", got["rss_by_role"], got["pss_mb"]),
    ):
        parts = ", ".join(f"{role} {mb:.0f}" for role, mb in sorted(rows, key=lambda r: -r[1]))
        print(f"  {label}: RSS {sum(mb for _, mb in rows):.0f} MB = {parts}; PSS {pss:.0f} MB")


if __name__ == "__main__":
    main()
