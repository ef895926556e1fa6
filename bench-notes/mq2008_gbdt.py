"""Supervised ceiling (cheating w.r.t. the unsupervised brief, labels of training folds): a small histogram GBDT on
per-engine ranks plus per-query consensus features, 5-fold. Tells whether ANY function of the shown lists could
reach the +3 % target. Scratch, not shipped. Run: PYTHONPATH=src python3 bench-notes/mq2008_gbdt.py"""
import math, collections, sys
import numpy as np
from serpfuse.bench import mq2008 as m
import os
DATA_DIR = os.path.join(os.environ.get('SERPFUSE_DATA', '../shared/data'), 'mq2008-agg')

C = m.load_mq2008(DATA_DIR)
S7 = (2, 7, 9, 12, 16, 21, 25)
SETUPS = {'all25@20': (m.RANKERS, 20), 'r1-5@10': (tuple(range(1, 6)), 10), 'S7@20': (S7, 20)}

def feats(queries, rk, D, per_engine=True):
    rows, X = [], []
    for qid, q in queries.items():
        lists = m.shown_lists(q, rk, D)
        pool = sorted({d for l in lists.values() for d in l})
        pos = {e: {d: j for j, d in enumerate(l, 1)} for e, l in lists.items()}
        ne = len(lists)
        rrf = {d: sum(1 / (60 + p[d]) for p in pos.values() if d in p) for d in pool}
        bor = {d: sum(len(lists[e]) - p[d] + 1 for e, p in pos.items() if d in p) for d in pool}
        rrf_rank = {d: i for i, d in enumerate(sorted(pool, key=lambda d: -rrf[d]), 1)}
        bor_rank = {d: i for i, d in enumerate(sorted(pool, key=lambda d: -bor[d]), 1)}
        for d in pool:
            ranks = [p[d] for p in pos.values() if d in p]
            f = [len(ranks), len(ranks) / ne, rrf[d], bor[d], min(ranks), sum(ranks) / len(ranks), len(pool), ne,
                 rrf_rank[d], bor_rank[d], rrf_rank[d] / len(pool)]
            if per_engine:
                for r in rk:
                    e = m.engine_name(r)
                    f.append(1 / pos[e][d] if e in pos and d in pos[e] else (0 if e in pos else -1))
                    f.append(len(lists.get(e, [])))
            rows.append((qid, d)); X.append(f)
    return rows, np.array(X, dtype=float)

def binning(X, nb=32):
    edges = [np.unique(np.quantile(X[:, j], np.linspace(0, 1, nb + 1)[1:-1])) for j in range(X.shape[1])]
    return edges

def apply_bins(X, edges):
    return np.stack([np.searchsorted(edges[j], X[:, j], side='right') for j in range(X.shape[1])], 1)

def fit_tree(B, g, depth, nb=33, min_leaf=20, lam=1.0):
    n, F = B.shape
    nodes = [(np.arange(n), 0, 0)]  # idx, depth, id
    tree = {}
    leaves = {}
    nid = 1
    while nodes:
        idx, dep, me = nodes.pop()
        G = g[idx]
        if dep == depth or len(idx) < 2 * min_leaf:
            leaves[me] = G.sum() / (len(idx) + lam); continue
        best = (0, None, None)
        tot, cnt = G.sum(), len(idx)
        base = tot * tot / (cnt + lam)
        for j in range(F):
            hs = np.bincount(B[idx, j], weights=G, minlength=nb); hc = np.bincount(B[idx, j], minlength=nb)
            cs, cc = np.cumsum(hs)[:-1], np.cumsum(hc)[:-1]
            ok = (cc >= min_leaf) & (cnt - cc >= min_leaf)
            if not ok.any(): continue
            gain = cs ** 2 / (cc + lam) + (tot - cs) ** 2 / (cnt - cc + lam) - base
            gain[~ok] = -1
            t = int(gain.argmax())
            if gain[t] > best[0]: best = (gain[t], j, t)
        if best[1] is None:
            leaves[me] = G.sum() / (len(idx) + lam); continue
        _, j, t = best
        left, right = nid, nid + 1; nid += 2
        tree[me] = (j, t, left, right)
        mask = B[idx, j] <= t
        nodes.append((idx[mask], dep + 1, left)); nodes.append((idx[~mask], dep + 1, right))
    return tree, leaves

def predict_tree(model, B):
    tree, leaves = model
    out = np.zeros(len(B)); node = np.zeros(len(B), dtype=int)
    for _ in range(20):
        for me, (j, t, l, r) in tree.items():
            sel = node == me
            if sel.any():
                node[sel] = np.where(B[sel, j] <= t, l, r)
    return np.array([leaves[k] for k in node])

def gbdt(Btr, y, trees=200, depth=4, lr=0.1):
    pred = np.full(len(y), y.mean()); models = []
    for _ in range(trees):
        mdl = fit_tree(Btr, y - pred, depth); models.append(mdl)
        pred += lr * predict_tree(mdl, Btr)
    return y.mean(), models, lr

def gbdt_predict(model, B):
    b0, models, lr = model
    return b0 + lr * sum(predict_tree(mm, B) for mm in models)

def evaluate(rows, scores, queries):
    by = collections.defaultdict(list)
    for (qid, d), s in zip(rows, scores): by[qid].append((d, s))
    vals = {}
    for qid, q in queries.items():
        if not q.has_relevant: continue
        ranked = [d for d, s in sorted(by.get(qid, []), key=lambda x: (-x[1], x[0]))]
        vals[qid] = m.score_ranked(ranked[:8], q.grades)[0]
    return vals

if __name__ == '__main__':
    per_engine = sys.argv[1:] != ['agnostic']
    for name, (rk, D) in SETUPS.items():
        tot = {}
        for fold in m.FOLDS:
            tr = m.queries_of(C, fold.train); te = m.queries_of(C, [fold.test])
            rtr, Xtr = feats(tr, rk, D, per_engine); rte, Xte = feats(te, rk, D, per_engine)
            edges = binning(Xtr)
            y = np.array([2 ** tr[q].grades[d] - 1 for q, d in rtr], dtype=float)
            model = gbdt(apply_bins(Xtr, edges), y, trees=150, depth=4, lr=0.1)
            tot.update(evaluate(rte, gbdt_predict(model, apply_bins(Xte, edges)), te))
        print(name, 'per_engine' if per_engine else 'agnostic', 'supervised GBDT 5-fold nDCG@8', round(np.mean(list(tot.values())), 4), flush=True)
