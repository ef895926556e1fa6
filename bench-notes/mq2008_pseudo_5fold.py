"""Second attempt (scratch): 5-fold choice of the pseudo-relevance EM family (pem, mq2008_pseudo.py), and the
headline table with a paired bootstrap against each setup's best baseline.

Protocol as in section 3 of mq2008-fusion.md: the objective is the mean relative nDCG@8 gain over each dev setup's
best baseline (3 named setups + rnd0..rnd7) on the three training subsets; the top 5 are re-ranked on the
validation subset; the winner is scored on the test subset. rnd8..rnd17 are never used for choosing.
Run: PYTHONPATH=src:.venv/lib/python3.11/site-packages:bench-notes python3 bench-notes/mq2008_pseudo_5fold.py
"""

from __future__ import annotations

import json
import multiprocessing as mp
from pathlib import Path

import numpy as np
from mq2008_pseudo import pem
from mq2008_pseudo_data import NAMED, baselines, evaluate, load

from serpfuse.bench import mq2008 as m
from serpfuse.bench import stats

DEV = list(NAMED) + [f"rnd{i}" for i in range(8)]
CHECK = [f"rnd{i}" for i in range(8, 18)]
OUT = Path("/tmp/sf/pseudo_5fold.json")

GRID = [
    dict(k=k, base=base, m=mm, decay=dec, mode=mode, power=pw, iters=it, cov=cov)
    for k, base in ((10, "rrf"), (30, "rrf"))
    for mm, dec, mode in ((8, 0.8, "decay"), (8, 0.8, "graded"), (20, 0.9, "decay"))
    for pw in (1, 2, 4)
    for it in (1, 3)
    for cov in (1.0, 2.0)
]


def run_config(cfg):
    data = load()
    return {name: evaluate(data[name], lambda R, c=cfg: pem(R, **c)).tolist() for name in DEV + CHECK}


def main():
    data = load()
    qids = {name: [qa.qid for qa in data[name]] for name in DEV + CHECK}
    subset_of = {qa.qid: qa.subset for qa in data["all25@20"]}
    if OUT.exists():
        scores = json.loads(OUT.read_text())
    else:
        with mp.Pool(2) as pool:
            scores = pool.map(run_config, GRID)
        OUT.write_text(json.dumps(scores))
    base = {}
    for name in DEV + CHECK:
        b = baselines(data[name])
        base[name] = {x: np.asarray(b[x]) for x in ("rrf", "borda", "combmnz", "single")}

    def objective(ci, subsets, names):
        gains = []
        for name in names:
            mask = np.array([subset_of[q] in subsets for q in qids[name]])
            v = np.asarray(scores[ci][name])[mask].mean()
            best = max(base[name][x][mask].mean() for x in base[name])
            gains.append((v - best) / best)
        return float(np.mean(gains))

    test = {name: np.zeros(len(qids[name])) for name in DEV + CHECK}
    for fold in m.FOLDS:
        ranked = sorted(range(len(GRID)), key=lambda c: -objective(c, set(fold.train), DEV))[:5]
        win = max(ranked, key=lambda c: objective(c, {fold.vali}, DEV))
        print(fold.name, "chose", GRID[win], f"train {objective(win, set(fold.train), DEV):+.4f}")
        for name in DEV + CHECK:
            mask = np.array([subset_of[q] == fold.test for q in qids[name]])
            test[name][mask] = np.asarray(scores[win][name])[mask]
    allq = set(m.SUBSETS)
    fixed = max(range(len(GRID)), key=lambda c: objective(c, allq, DEV))
    print(
        "best fixed config over all queries (in hindsight):",
        GRID[fixed],
        f"{objective(fixed, allq, DEV):+.4f}",
    )
    print(
        f"{'setup':10s} {'best base':>14s} {'5-fold':>8s} {'gain':>6s} {'95% CI':>20s} | {'fixed':>7s} {'gain':>6s}"
    )
    gaps5, gapsf = [], []
    for name in DEV + CHECK:
        bname = max(base[name], key=lambda x: base[name][x].mean())
        bv = base[name][bname]
        for _label, vals, acc in (("5f", test[name], gaps5), ("fx", np.asarray(scores[fixed][name]), gapsf)):
            acc.append(100 * (vals.mean() - bv.mean()) / bv.mean())
        boot = stats.paired_bootstrap(list(bv), list(test[name]))
        print(
            f"{name:10s} {bname:>6s} {bv.mean():.4f} {test[name].mean():.4f} {gaps5[-1]:+5.1f}% "
            f"[{boot.low:+.4f}, {boot.high:+.4f}] | {np.mean(scores[fixed][name]):.4f} {gapsf[-1]:+5.1f}%"
        )
    print(
        f"mean gap dev 5-fold {np.mean(gaps5[:11]):+.2f}%  check {np.mean(gaps5[11:]):+.2f}%  "
        f"| fixed dev {np.mean(gapsf[:11]):+.2f}% check {np.mean(gapsf[11:]):+.2f}%"
    )


if __name__ == "__main__":
    main()
