"""Second attempt (scratch): the metasearch setups as numpy arrays per query, and a fast nDCG@8 scorer.

Run with python3 (numpy; the venv has none): PYTHONPATH=src python3 bench-notes/mq2008_pseudo.py ...
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import numpy as np

from serpfuse.bench import mq2008 as m

DATA_DIR = os.path.join(os.environ.get("SERPFUSE_DATA", "../shared/data"), "mq2008-agg")
CACHE = Path("/tmp/sf/mq2008_arrays.pkl")
S7 = (2, 7, 9, 12, 16, 21, 25)
NAMED = {"all25@20": (m.RANKERS, 20), "r1-5@10": ((1, 2, 3, 4, 5), 10), "S7@20": (S7, 20)}
GAIN = np.array([0.0, 1.0, 3.0])
DISC = 1.0 / np.log2(np.arange(2, 10))


def setups() -> dict[str, tuple[tuple[int, ...], int]]:
    out = dict(NAMED)
    for i, s in enumerate(m.random_setups(18, seed=7)):
        out[f"rnd{i}"] = (s.rankers, s.depth)
    return out


class QA:
    """One query in one setup: R[e, d] = shown rank (0 = absent), grades[d], subset, idcg."""

    __slots__ = ("qid", "subset", "R", "grades", "idcg", "order_key", "engines")

    def __init__(self, qid, subset, R, grades, idcg, order_key, engines):
        self.qid, self.subset, self.R, self.grades, self.idcg = qid, subset, R, grades, idcg
        self.order_key, self.engines = order_key, engines


def build(q: m.QueryData, rankers, depth) -> QA:
    lists = m.shown_lists(q, rankers, depth)
    engines = list(lists)
    pool = sorted({d for lst in lists.values() for d in lst})
    idx = {d: i for i, d in enumerate(pool)}
    R = np.zeros((len(engines), len(pool)))
    for i, e in enumerate(engines):
        for j, d in enumerate(lists[e], 1):
            R[i, idx[d]] = j
    grades = np.array([q.grades[d] for d in pool], dtype=int)
    ideal = sorted((g for g in q.grades.values() if g > 0), reverse=True)[:8]
    idcg = float(sum(GAIN[g] * DISC[i] for i, g in enumerate(ideal)))
    # docid order (ascending) is pool order, so a stable sort on -score breaks ties by docid ascending
    return QA(q.qid, q.subset, R, grades, idcg, None, engines)


def load() -> dict[str, list[QA]]:
    import mq2008_pseudo_data as mod  # pickle by module name, not __main__

    if CACHE.exists():
        return pickle.loads(CACHE.read_bytes())
    corpus = m.load_mq2008(DATA_DIR)
    queries = [q for q in m.queries_of(corpus).values() if q.has_relevant]
    data = {name: [mod.build(q, rk, d) for q in queries] for name, (rk, d) in setups().items()}
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    CACHE.write_bytes(pickle.dumps(data))
    return data


def ndcg(qa: QA, scores: np.ndarray) -> float:
    top = np.argsort(-scores, kind="stable")[:8]
    top = top[scores[top] > -np.inf]  # a single engine shows only its own rows
    return float((GAIN[qa.grades[top]] * DISC[: len(top)]).sum() / qa.idcg)


def rrf(R, w=None, k=60.0):
    V = np.where(R > 0, 1.0 / (k + R), 0.0)
    return (V if w is None else V * w[:, None]).sum(0)


def lengths(R):
    return (R > 0).sum(1).astype(float)


def borda(R, w=None):
    n = lengths(R)[:, None]
    V = np.where(R > 0, n - R + 1, 0.0)
    return (V if w is None else V * w[:, None]).sum(0)


def combmnz(R, w=None):
    n = lengths(R)[:, None]
    V = np.where(R > 0, (n - R + 1) / n, 0.0)
    return (V if w is None else V * w[:, None]).sum(0) * (R > 0).sum(0)


def single_scores(qa: QA) -> dict[int, float]:
    """nDCG of each engine alone (index into qa.engines); label use: only for baselines/oracles."""
    out = {}
    for i in range(qa.R.shape[0]):
        s = np.where(qa.R[i] > 0, -qa.R[i], -np.inf)
        out[i] = ndcg(qa, s)
    return out


def evaluate(qas, method) -> np.ndarray:
    return np.array([ndcg(qa, method(qa.R)) if qa.R.size else 0.0 for qa in qas])


def baselines(qas) -> dict[str, np.ndarray]:
    out = {"rrf": evaluate(qas, rrf), "borda": evaluate(qas, borda), "combmnz": evaluate(qas, combmnz)}
    names = sorted({e for qa in qas for e in qa.engines})
    best = None
    for e in names:
        v = np.array(
            [
                ndcg(qa, np.where(qa.R[qa.engines.index(e)] > 0, -qa.R[qa.engines.index(e)], -np.inf))
                if e in qa.engines
                else 0.0
                for qa in qas
            ]
        )
        if best is None or v.mean() > best[1].mean():
            best = (e, v)
    out["single"] = best[1]
    out["single_name"] = best[0]
    return out


if __name__ == "__main__":
    data = load()
    for name in NAMED:
        b = baselines(data[name])
        print(name, {k: (round(float(v.mean()), 4) if not isinstance(v, str) else v) for k, v in b.items()})
