"""A one-shot search, the whole process: ``serpfuse search --replay crw56 "<query>"`` with a fresh result cache
each time (so it searches), its wall time and peak RSS, and ``serpfuse --help``'s wall time; for this tree
and, interleaved with it, another (``--baseline SRC``):

    python -m benchmarks.oneshot --baseline /tmp/base/src      # git archive REV src | tar -x -C /tmp/base

The word tables' and the suffix list's files in the user's cache directory are built by an untimed first run
(each tree builds its own when it has them), as a machine's first search builds them once. It prints one line
per tree: medians over ``--runs`` runs (timings mean something only as ratios of two trees measured together).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

THIS_SRC = Path(__file__).resolve().parents[1] / "src"
CLI = "from serpfuse.cli import main; main()"
QUERY = "top restaurants in belgrad"


def fresh_results(cache_dir: Path) -> None:
    """Empty the cache directory but for its word tables: the next search searches (no cached result), as a
    machine's tenth search does, not its first (the tables live in the cache directory since 10d5428, so a
    fresh directory per run timed their build every time)."""
    for entry in cache_dir.glob("*") if cache_dir.is_dir() else ():
        if entry.name != "word-tables":
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()


def run_once(src: Path, args: list[str], cache_dir: Path) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of one ``serpfuse ARGS`` process under ``src``."""
    env = {**os.environ, "PYTHONPATH": str(src), "SERPFUSE_CACHE_DIR": str(cache_dir), "COLUMNS": "100"}
    # Bytecode as an installed package has it (pip compiles at install; an editable checkout on first import):
    # with PYTHONDONTWRITEBYTECODE set, every run compiled some 70 modules first (0.16 s)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", CLI, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"serpfuse {' '.join(args)} failed under {src}: {proc.stderr.read()[-300:]!r}")
    return seconds, usage.ru_maxrss / 1024


def measure(recording: Path, trees: dict[str, Path], runs: int = 5) -> dict[str, dict[str, float]]:
    """Per tree: the one-shot search's median wall seconds and RSS, and ``--help``'s median wall seconds."""
    search = ["search", "--replay", str(recording), QUERY, "--limit", "3"]
    samples: dict[str, dict[str, list[float]]] = {
        t: {"search_s": [], "rss_mib": [], "help_s": []} for t in trees
    }
    with tempfile.TemporaryDirectory(prefix="serpfuse-oneshot-") as tmp:
        for label, src in trees.items():
            run_once(
                src, search, Path(tmp) / f"warm-{label}"
            )  # builds the tables' files, if this tree has them
        for i in range(runs):
            for label, src in trees.items() if i % 2 == 0 else reversed(trees.items()):
                fresh_results(Path(tmp) / f"warm-{label}")
                seconds, rss = run_once(src, search, Path(tmp) / f"warm-{label}")
                samples[label]["search_s"].append(seconds)
                samples[label]["rss_mib"].append(rss)
                samples[label]["help_s"].append(run_once(src, ["--help"], Path(tmp) / "help")[0])
    return {t: {k: statistics.median(v) for k, v in s.items()} for t, s in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="another checkout's src directory")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    data = Path(os.environ.get("SERPFUSE_DATA", "../shared/data"))
    trees = {"this": THIS_SRC} | ({"baseline": args.baseline} if args.baseline else {})
    for label, m in measure((data / "crw56" / "searxng_raw.json").resolve(), trees, args.runs).items():
        print(
            f"{label}: one-shot search {m['search_s']:.3f} s, {m['rss_mib']:.0f} MiB; --help {m['help_s']:.3f} s"
        )


if __name__ == "__main__":
    main()
