"""Does a piece of speed machinery pay? Two source trees side by side on the end-to-end probes it could move.

Issue 40's rule: machinery that does not pay more than 5 % end to end on ``make bench-perf`` goes. Each piece is
measured alone, as two trees that differ by it only: two adjacent commits (the one that retired it and the one
before), or a commit and that commit with a patch that puts the piece back (``bench-notes/patches/``):

    python -m benchmarks.machinery --a 1865bf6 --b 71f6d49 --probes e2e --repeat 6
    python -m benchmarks.machinery --a HEAD --a-patch bench-notes/patches/key-memo.patch --b HEAD --probes rps

Each tree is ``git archive REV src`` in a temporary directory (the patch applied there). The trees run
interleaved, A first on even repetitions and B first on odd ones, each probe in a process of its own, against the
same fake engines (``benchmarks.perf``). It prints, per measure, the median of each tree, B ÷ A and every value:
a figure means something only as the ratio of two trees measured together.

Probes: ``e2e`` (a search ÷ its slowest engine, p50 of 15), ``batch`` (100 concurrent searches ÷ a bare httpx
gather, without and with the workers), ``served`` (100 concurrent searches through ``serve``: ÷ raw, its CPU a
search, its PSS), ``ranking`` (the crw56 ranking step, warm and cold), ``rps`` (``/v1/search`` cache hits: requests
a second and server CPU a hit), ``hit`` (an in-process cache hit: ``SearchService.search`` and ``search_json``),
``mcp`` (an MCP ``web_search`` cache hit over real stdio, the round trip).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks import perf
from benchmarks.perf import LATENCIES_MS, RECORDING, run_probe, served_concurrent, start_engines

REPO = Path(__file__).resolve().parents[1]
PROBES = ("e2e", "batch", "served", "ranking", "rps", "hit", "mcp")
MCP_CALL = r"""
import asyncio, json, os, statistics, sys, time
from mcp import Client, StdioServerParameters

async def main(recording, home, rounds):
    queries = [e["query"] for e in json.load(open(recording, encoding="utf-8"))]
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", "from serpfuse.cli import main; main()", "mcp", "--replay", recording],
        env=dict(os.environ), cwd=home,  # the tree's PYTHONPATH: the SDK's default passes only a few variables
    )
    async with Client(params) as client:
        for q in queries:
            await client.call_tool("web_search", {"query": q})
        hits = []
        for q in queries:
            if (await client.call_tool("web_search", {"query": q})).structured_content.get("cached"):
                hits.append(q)
        times = []
        for _ in range(rounds):
            for q in hits:
                t0 = time.perf_counter()
                await client.call_tool("web_search", {"query": q})
                times.append((time.perf_counter() - t0) * 1000)
    print(json.dumps({"mcp_hit_ms": statistics.median(times), "hits": len(hits)}))

asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
"""


def tree(rev: str, patch: Path | None, into: Path) -> Path:
    """``git archive REV src`` under ``into``, with ``patch`` applied; returns its ``src``."""
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev, "src"], check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    if patch is not None:
        subprocess.run(["git", "apply", str(patch.resolve())], cwd=into, check=True)
    return into / "src"


def mcp_hit(src: Path, recording: Path, home: Path, rounds: int = 5) -> dict[str, float]:
    home.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "PYTHONPATH": str(src),
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / "cache"),
        "XDG_CONFIG_HOME": str(home / "config"),
    }
    out = subprocess.run(
        [sys.executable, "-c", MCP_CALL, str(recording), str(home), str(rounds)],
        env=env,
        cwd=home,
        capture_output=True,
        text=True,
        check=True,
        timeout=900,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure(
    trees: dict[str, Path], probes: list[str], repeat: int, data: Path
) -> dict[str, dict[str, list[float]]]:
    recording = data / RECORDING
    values: dict[str, dict[str, list[float]]] = {}

    def note(name: str, label: str, value: float) -> None:
        values.setdefault(name, {}).setdefault(label, []).append(value)

    with tempfile.TemporaryDirectory(prefix="serpfuse-machinery-") as tmp_name:
        tmp = Path(tmp_name)
        engines, port = start_engines(lifetime_s=3600)
        with engines:
            for rep in range(repeat):
                order = list(trees.items()) if rep % 2 == 0 else list(reversed(trees.items()))
                for label, src in order:
                    print(f"repetition {rep + 1}/{repeat}: {label}", file=sys.stderr)
                    fake = {"port": port, "latencies": LATENCIES_MS, "salt": f"{label}{rep}"}
                    for name in probes:
                        _probe(name, src, label, fake, recording, tmp / f"{name}-{label}-{rep}", note)
    return values


def _probe(
    name: str,
    src: Path,
    label: str,
    fake: dict[str, Any],
    recording: Path,
    scratch: Path,
    note: Callable[[str, str, float], None],
) -> None:
    if name == "e2e":
        note("e2e", label, run_probe(src, "e2e", {**fake, "n": 15})["e2e"])
    elif name == "batch":
        note("batch", label, run_probe(src, "concurrent", {**fake, "n": 100})["ratio"])
        workers = run_probe(src, "concurrent", {**fake, "n": 100, "server": True})
        note("batch_workers", label, workers["ratio"])
    elif name == "served":
        scratch.mkdir(parents=True)
        _served(note, label, served_concurrent(src, fake["port"], 100, scratch, fake["salt"]))
    elif name == "ranking":
        _ranking(note, label, run_probe(src, "ranking", {"recording": str(recording), "repeat": 3}))
    elif name == "rps":
        scratch.mkdir(parents=True)
        _rps(note, label, perf.serve_rps(src, recording, None, 3.0, scratch))
    elif name == "hit":
        scratch.mkdir(parents=True)
        _hit(
            note,
            label,
            run_probe(src, "cache_hit", {"recording": str(recording), "repeat": 3, "tmp": str(scratch)}),
        )
    elif name == "mcp":
        note("mcp_hit_ms", label, mcp_hit(src, recording, scratch)["mcp_hit_ms"])


def _served(note: Callable[[str, str, float], None], label: str, out: dict[str, float]) -> None:
    note("served", label, out["ratio"])
    note("served_cpu_ms", label, out["cpu_ms"])
    note("served_pss_mb", label, out["pss_mb"])


def _ranking(note: Callable[[str, str, float], None], label: str, out: dict[str, Any]) -> None:
    note("ranking_warm_ms", label, out["ranking_ms"])
    note("ranking_cold_ms", label, out["cold_ms"])


def _rps(note: Callable[[str, str, float], None], label: str, out: dict[str, float]) -> None:
    note("hit_rps", label, out["search_rps"])
    note("hit_server_cpu_ms", label, out["search_cpu_ms"])


def _hit(note: Callable[[str, str, float], None], label: str, out: dict[str, float]) -> None:
    note("hit_search_ms", label, out["search_ms"])
    if "search_json_ms" in out:
        note("hit_search_json_ms", label, out["search_json_ms"])


def report(values: dict[str, dict[str, list[float]]]) -> str:
    lines = ["| measure | A median | B median | B ÷ A | A | B |", "|---|---:|---:|---:|---|---|"]
    for name, by_tree in values.items():
        a, b = statistics.median(by_tree["A"]), statistics.median(by_tree["B"])
        every = [" ".join(f"{v:.3f}" for v in by_tree[t]) for t in ("A", "B")]
        lines.append(f"| {name} | {a:.3f} | {b:.3f} | {b / a:.3f} | {every[0]} | {every[1]} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", required=True, help="tree A's revision")
    parser.add_argument("--a-patch", type=Path, help="a patch applied to tree A")
    parser.add_argument("--b", required=True, help="tree B's revision")
    parser.add_argument("--b-patch", type=Path, help="a patch applied to tree B")
    parser.add_argument("--probes", default="e2e", help=f"comma-separated, of: {', '.join(PROBES)}")
    parser.add_argument("--repeat", type=int, default=6)
    parser.add_argument("--data", type=Path, default=Path(os.environ.get("SERPFUSE_DATA", "../shared/data")))
    args = parser.parse_args()
    probes = [p.strip() for p in args.probes.split(",") if p.strip()]
    unknown = [p for p in probes if p not in PROBES]
    if unknown:
        parser.error(f"unknown probe {unknown[0]!r}; choose from: {', '.join(PROBES)}")
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    with tempfile.TemporaryDirectory(prefix="serpfuse-trees-") as trees_dir:
        trees = {
            "A": tree(args.a, args.a_patch, Path(trees_dir) / "a"),
            "B": tree(args.b, args.b_patch, Path(trees_dir) / "b"),
        }
        started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        values = measure(trees, probes, args.repeat, args.data)
    a = args.a + (f" + {args.a_patch}" if args.a_patch else "")
    b = args.b + (f" + {args.b_patch}" if args.b_patch else "")
    print(
        f"A = {a}; B = {b}; {started}; {args.repeat} interleaved repetitions; load {os.getloadavg()[0]:.1f}\n"
    )
    print(report(values))


if __name__ == "__main__":
    main()
