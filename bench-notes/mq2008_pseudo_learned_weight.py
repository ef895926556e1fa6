"""Second attempt (scratch): ceiling of per-query weighting built from the unlabeled lists.

A supervised regressor (least squares on quadratic features, per setup, 5-fold) predicts each engine's true
per-query nDCG@8 from engine-agnostic, label-free features of the query's lists (coverage, pseudo-relevance
qualities, RBO agreement, top-row votes). Its prediction, to a power chosen on the validation subset, weights
RRF k=10. Labels train the regressor, so this bounds from above any unsupervised weighting that is a function of
those features: if it cannot reach +3 %, re-weighting by them cannot.
Run: PYTHONPATH=src:.venv/lib/python3.11/site-packages:bench-notes python3 bench-notes/mq2008_pseudo_learned_weight.py
"""

from __future__ import annotations

import numpy as np
from mq2008_pseudo import lengths, pseudo_quality, rbo_matrix, votes
from mq2008_pseudo_data import NAMED, baselines, load, ndcg

from serpfuse.bench import mq2008 as m
from serpfuse.bench import stats


def features(R):
    n = lengths(R)
    V = votes(R, "rrf", 10)
    Sm = V.sum(0)[None, :] - V
    sim = rbo_matrix(R, 0.9)
    np.fill_diagonal(sim, 0)
    shown = (R > 0).sum(0)
    top1 = np.array([shown[np.argmin(np.where(r > 0, r, 1e9))] - 1 for r in R]) / max(R.shape[0] - 1, 1)
    base = np.stack(
        [
            n / n.max(),
            pseudo_quality(R, Sm, 8, 0.8, "graded"),
            pseudo_quality(R, Sm, 8, 0.8, "decay"),
            pseudo_quality(R, Sm, 20, 0.9, "decay"),
            sim.sum(1) / max(R.shape[0] - 1, 1),
            top1,
        ],
        1,
    )
    quad = np.stack(
        [base[:, i] * base[:, j] for i in range(base.shape[1]) for j in range(i, base.shape[1])], 1
    )
    return np.hstack([np.ones((R.shape[0], 1)), base, quad])


if __name__ == "__main__":
    data = load()
    for name in NAMED:
        qas = [qa for qa in data[name]]
        X = [features(qa.R) if qa.R.shape[0] >= 1 else None for qa in qas]
        Y = [np.array([ndcg(qa, np.where(r > 0, -r, -np.inf)) for r in qa.R]) for qa in qas]
        b = baselines(qas)
        bname = max(("rrf", "borda", "combmnz", "single"), key=lambda x: b[x].mean())
        test = np.zeros(len(qas))

        def fused(i, coef, p, qas=qas, X=X):
            qa = qas[i]
            if X[i] is None:
                return 0.0
            w = np.maximum(X[i] @ coef, 1e-3) ** p
            return ndcg(qa, (w[:, None] * votes(qa.R, "rrf", 10)).sum(0))

        for fold in m.FOLDS:
            tr = [i for i, qa in enumerate(qas) if qa.subset in fold.train and X[i] is not None]
            coef, *_ = np.linalg.lstsq(
                np.vstack([X[i] for i in tr]), np.concatenate([Y[i] for i in tr]), rcond=None
            )
            va = [i for i, qa in enumerate(qas) if qa.subset == fold.vali]
            p = max((1, 2, 4, 8), key=lambda p: np.mean([fused(i, coef, p) for i in va]))
            for i, qa in enumerate(qas):
                if qa.subset == fold.test:
                    test[i] = fused(i, coef, p)
        best = b[bname]
        boot = stats.paired_bootstrap(list(best), list(test))
        print(
            f"{name}: best baseline {bname} {best.mean():.4f}; learned per-query weights {test.mean():.4f} "
            f"({100 * (test.mean() - best.mean()) / best.mean():+.1f}%) CI [{boot.low:+.4f}, {boot.high:+.4f}]",
            flush=True,
        )
