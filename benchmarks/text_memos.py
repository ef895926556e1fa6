"""What the text memos (``serpfuse.text.text_memo``: a row's title, snippet, URL and host, worked out once) are worth
across searches: crw56's 56 queries ranked in turn in one process, the memos kept from query to query, against
the same with them emptied (``forget_texts``) before each query, as a server's worker does after each search.
Rounds alternate the two, each from every memo emptied; it prints the mean time per query of each round, their
medians, and whether every response was the same both ways.

    python -m benchmarks.text_memos [--rounds 4]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import statistics
import time
from pathlib import Path

from benchmarks.perf import RECORDING
from benchmarks.perf_probe import _replay_answers, clear_memos


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=4, help="rounds of each, alternated")
    args = parser.parse_args()
    from serpfuse.pipeline import rank_answers
    from serpfuse.text import forget_texts

    recording = Path(os.environ.get("SERPFUSE_DATA", "../shared/data")) / RECORDING
    _, cases, config = _replay_answers(str(recording))
    now = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)

    def rank_all(forget: bool) -> tuple[float, list[str]]:
        clear_memos()
        seconds, shown = 0.0, []
        for request, query, answers in cases:
            if forget:
                forget_texts()
            t0 = time.perf_counter()
            response = rank_answers(answers, request, config=config, query=query, now=now)
            seconds += time.perf_counter() - t0
            shown.append(response.model_dump_json(exclude={"took_ms"}))
        return seconds * 1000 / len(cases), shown

    rank_all(False)  # the tables loaded, the interpreter warm
    times: dict[str, list[float]] = {"kept": [], "emptied": []}
    same = True
    for _ in range(args.rounds):
        kept_ms, kept = rank_all(False)
        emptied_ms, emptied = rank_all(True)
        times["kept"].append(kept_ms)
        times["emptied"].append(emptied_ms)
        same = same and kept == emptied
    for name, values in times.items():
        rounds = " ".join(f"{ms:.3f}" for ms in values)
        print(
            f"text memos {name:7s} between queries: ms a query {rounds}; median {statistics.median(values):.3f}"
        )
    print(f"every response the same both ways: {same}")


if __name__ == "__main__":
    main()
