"""Is the selection's coverage rule earned, cross-validated? ``python -m benchmarks.passages_cv``

The selection counts a query term a chosen unit already shows at ``REPEAT`` of its part (``serpfuse.passages``;
1.0 turns the rule off). Here ``REPEAT`` is chosen on one half of WikiQA's dev queries (ids sorted, every other
one) by the sum of its scores at 300 and 500 characters, and scored on the other half, each way round, beside
the rule off on the same half; then NQ's 25 articles at 1,500 characters with the value each fold chose. No
score printed comes from the half that chose it.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from benchmarks.passages import contains, load, serpfuse_select
from serpfuse.passages import select

GRID = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0)
BUDGETS = (300, 500)


def score(rows: list[dict], repeat: float, budget: int) -> float:
    select.REPEAT = repeat
    hits = sum(
        contains(serpfuse_select(r["pages"][0]["html_or_text"], r["query"], budget), r["answers"])
        for r in rows
    )
    return hits / len(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path(os.environ.get("SERPFUSE_DATA", "../shared/data")))
    folder = ap.parse_args().data / "passages"
    rows = sorted(load(folder / "wikiqa-dev.jsonl"), key=lambda r: r["id"])
    halves = (rows[0::2], rows[1::2])
    nq = load(folder / "nq-dev-subset.jsonl")
    shipped = select.REPEAT
    print(
        "| held-out half | REPEAT chosen on the other | 300: rule / off | 500: rule / off | NQ @1,500: rule / off |"
    )
    print("|---|---:|---:|---:|---:|")
    try:
        for i, held_out in enumerate(halves):
            chooser = halves[1 - i]
            chosen = max(GRID, key=lambda v: (sum(score(chooser, v, b) for b in BUDGETS), -abs(v - 1.0)))
            cells = [f"{score(held_out, chosen, b):.3f} / {score(held_out, 1.0, b):.3f}" for b in BUDGETS]
            nq_cell = f"{round(score(nq, chosen, 1500) * len(nq))} / {round(score(nq, 1.0, 1500) * len(nq))}"
            print(f"| {i + 1} | {chosen} | {cells[0]} | {cells[1]} | {nq_cell} |")
    finally:
        select.REPEAT = shipped


if __name__ == "__main__":
    main()
