"""Second attempt (scratch): how good must a per-query engine-quality estimate be to reach +3 %?

Noisy oracle: each engine's true per-query nDCG@8 (labels of the query: an upper-bound device, not a method)
plus Gaussian noise of scale sigma; the weights are (noisy quality, clipped at 0)^power times list coverage,
fused by RRF k=10. The mean Spearman between the noisy and the true quality says which correlation a real
estimator would need; the unsupervised ones reach 0.60 / 0.38 / 0.59 (mq2008_pseudo_diag.py).
Run: PYTHONPATH=src:.venv/lib/python3.11/site-packages:bench-notes python3 bench-notes/mq2008_pseudo_noisy_oracle.py
"""

from __future__ import annotations

import numpy as np
from mq2008_pseudo import lengths, votes
from mq2008_pseudo_data import NAMED, baselines, load, ndcg
from mq2008_pseudo_diag import spearman

if __name__ == "__main__":
    data = load()
    rng = np.random.default_rng(11)
    for name in NAMED:
        qas = data[name]
        b = baselines(qas)
        best = max(float(b[x].mean()) for x in ("rrf", "borda", "combmnz", "single"))
        truths = [np.array([ndcg(qa, np.where(r > 0, -r, -np.inf)) for r in qa.R]) for qa in qas]
        line = []
        for sigma in (0.0, 0.1, 0.2, 0.3, 0.5):
            for power in (1, 2, 4):
                vals, rhos = [], []
                for qa, t in zip(qas, truths, strict=True):
                    if not qa.R.size:
                        vals.append(0.0)
                        continue
                    noisy = t + sigma * rng.standard_normal(len(t))
                    if len(t) >= 3:
                        rho = spearman(noisy, t)
                        if rho is not None:
                            rhos.append(rho)
                    n = lengths(qa.R)
                    w = (n / n.max()) * np.maximum(noisy, 1e-3) ** power
                    vals.append(ndcg(qa, (w[:, None] * votes(qa.R, "rrf", 10)).sum(0)))
                g = 100 * (np.mean(vals) - best) / best
                line.append(
                    f"s{sigma} p{power}: rho {np.mean(rhos):.2f} ndcg {np.mean(vals):.4f} ({g:+.1f}%)"
                )
        print(name, f"best baseline {best:.4f}")
        print("   " + "\n   ".join(line), flush=True)
