"""Second attempt (scratch): how well does each per-query engine-quality estimate track the engine's true
per-query nDCG@8 (Spearman, mean over queries; labels used only to measure the estimators)?
Run: PYTHONPATH=src:.venv/lib/python3.11/site-packages:bench-notes python3 bench-notes/mq2008_pseudo_diag.py
"""

from __future__ import annotations

import numpy as np
from mq2008_pseudo import families, lengths, pseudo_quality, rbo_matrix, votes
from mq2008_pseudo_data import NAMED, load, ndcg


def spearman(a, b):
    ra = np.argsort(np.argsort(a + 1e-12 * np.arange(len(a)))).astype(float)
    rb = np.argsort(np.argsort(b + 1e-12 * np.arange(len(b)))).astype(float)
    if a.std() == 0 or b.std() == 0:
        return None
    return float(np.corrcoef(ra, rb)[0, 1])


def estimates(R):
    n = lengths(R)
    V = votes(R, "rrf", 10)
    tot = V.sum(0)
    S_minus = tot[None, :] - V
    out = {"len": n}
    out["pem_graded_m8"] = pseudo_quality(R, S_minus, 8, 0.8, "graded")
    out["pem_decay.8_m8"] = pseudo_quality(R, S_minus, 8, 0.8, "decay")
    out["pem_decay.9_m20"] = pseudo_quality(R, S_minus, 20, 0.9, "decay")
    out["pem_decay.8_m8*len"] = out["pem_decay.8_m8"] * n
    sim = rbo_matrix(R, 0.9)
    np.fill_diagonal(sim, 0)
    out["rbo.9"] = sim.sum(1)
    fam = families(rbo_matrix(R, 0.9), 0.5)
    same = fam[:, None] == fam[None, :]
    share = 1.0 / same.sum(1)
    Sm = (~same).astype(float) @ (share[:, None] * V)
    out["pem_fam"] = pseudo_quality(R, Sm, 8, 0.8, "decay")
    # iterate graded with weights
    w = n / n.max() * out["pem_graded_m8"] / max(out["pem_graded_m8"].max(), 1e-9)
    C = w[:, None] * V
    out["pem_graded_it2"] = pseudo_quality(R, C.sum(0)[None, :] - C, 8, 0.8, "graded")
    return out


if __name__ == "__main__":
    data = load()
    for name in NAMED:
        acc = {}
        for qa in data[name]:
            if qa.subset not in {"S1", "S2", "S3"} or qa.R.shape[0] < 3:
                continue
            truth = np.array([ndcg(qa, np.where(r > 0, -r, -np.inf)) for r in qa.R])
            for k, est in estimates(qa.R).items():
                s = spearman(np.asarray(est, float), truth)
                if s is not None:
                    acc.setdefault(k, []).append(s)
        print(name, {k: round(float(np.mean(v)), 3) for k, v in acc.items()}, flush=True)
