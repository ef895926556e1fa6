"""Corpus-level latent-class (Dawid-Skene style) EM over rank buckets, and a supervised LR ceiling. numpy, scratch.
Run: PYTHONPATH=src python3 bench-notes/mq2008_em.py"""
import math, collections, sys
import numpy as np
from serpfuse.bench import mq2008 as m
import os
DATA_DIR = os.path.join(os.environ.get('SERPFUSE_DATA', '../shared/data'), 'mq2008-agg')

C = m.load_mq2008(DATA_DIR)
Q = m.queries_of(C)
S7 = (2, 7, 9, 12, 16, 21, 25)
SETUPS = {'all25@20': (m.RANKERS, 20), 'r1-5@10': (tuple(range(1, 6)), 10), 'S7@20': (S7, 20)}
EDGES = [1, 2, 3, 4, 6, 9, 13, 21]  # bucket b holds ranks EDGES[b] .. EDGES[b+1]-1 ; last bucket = absent
NB = len(EDGES)  # buckets 0..NB-2 shown, NB-1 absent

def bucket(r):
    for b in range(len(EDGES) - 1):
        if r < EDGES[b + 1]: return b
    return NB - 2

def build(queries, rk, D):
    """rows: (qid, docid, grade), X: docs x engines int bucket (absent = NB-1, engine silent for query = -1)."""
    rows, X = [], []
    for qid, q in queries.items():
        lists = m.shown_lists(q, rk, D)
        pool = sorted({d for l in lists.values() for d in l})
        pos = {e: {d: j for j, d in enumerate(l, 1)} for e, l in lists.items()}
        for d in pool:
            x = []
            for r in rk:
                e = m.engine_name(r)
                if e not in lists: x.append(-1)
                elif d in pos[e]: x.append(bucket(pos[e][d]))
                else: x.append(NB - 1)
            rows.append((qid, d, q.grades[d])); X.append(x)
    return rows, np.array(X)

def em(X, iters=50, prior=0.3, seed_scores=None):
    n, E = X.shape
    # init posterior from a CombMNZ-like seed: count of engines showing, normalised
    shown = ((X >= 0) & (X < NB - 1)).sum(1)
    post = shown / shown.max() if seed_scores is None else seed_scores
    for _ in range(iters):
        pi = post.mean()
        P1 = np.ones((E, NB)); P0 = np.ones((E, NB))  # Laplace
        for e in range(E):
            for b in range(NB):
                mask = X[:, e] == b
                P1[e, b] += post[mask].sum(); P0[e, b] += (1 - post[mask]).sum()
        P1 /= P1.sum(1, keepdims=True); P0 /= P0.sum(1, keepdims=True)
        L = np.log(P1 / P0)
        logit = np.full(n, math.log(pi / (1 - pi)))
        for e in range(E):
            ok = X[:, e] >= 0
            logit[ok] += L[e, X[ok, e]]
        post = 1 / (1 + np.exp(-logit))
    return logit, L

def evaluate(rows, scores, queries):
    by = collections.defaultdict(list)
    for (qid, d, g), s in zip(rows, scores): by[qid].append((d, s))
    vals = {}
    for qid, q in queries.items():
        if not q.has_relevant: continue
        ranked = [d for d, s in sorted(by.get(qid, []), key=lambda x: (-x[1], x[0]))]
        vals[qid] = m.score_ranked(ranked[:8], q.grades)[0]
    return vals

if __name__ == '__main__':
    for name, (rk, D) in SETUPS.items():
        rows, X = build(Q, rk, D)
        logit, L = em(X)
        v = evaluate(rows, logit, Q)
        print(name, 'EM corpus-level (all queries, unsupervised):', round(np.mean(list(v.values())), 4))
        # 5-fold EM fit on train subsets only, applied on test (still unsupervised, to check transfer)
        # supervised LR ceiling with one-hot buckets, 5 folds
        tot = {}
        for fold in m.FOLDS:
            tr = m.queries_of(C, fold.train); te = m.queries_of(C, [fold.test])
            rtr, Xtr = build(tr, rk, D); rte, Xte = build(te, rk, D)
            def onehot(X):
                E = X.shape[1]; F = np.zeros((X.shape[0], E * (NB + 1)))
                for e in range(E): F[np.arange(X.shape[0]), e * (NB + 1) + X[:, e] + 1] = 1
                return F
            Ftr, Fte = onehot(Xtr), onehot(Xte)
            y = np.array([1.0 if g > 0 else 0.0 for _, _, g in rtr])
            wv = np.zeros(Ftr.shape[1]); b0 = 0.0
            for it in range(2000):
                p = 1 / (1 + np.exp(-(Ftr @ wv + b0)))
                gw = Ftr.T @ (p - y) / len(y) + 1e-3 * wv; gb = (p - y).mean()
                wv -= 1.0 * gw; b0 -= 1.0 * gb
            tot.update(evaluate(rte, Fte @ wv, te))
        print(name, 'supervised LR one-hot buckets 5-fold:', round(np.mean(list(tot.values())), 4))
