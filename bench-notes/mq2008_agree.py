"""Exploring unsupervised per-query reliability (agreement with the leave-one-out consensus). Not shipped."""
import sys, itertools; sys.path.insert(0, 'bench-notes')
from mq2008_explore import *

TRAIN = m.queries_of(C, ['S1', 'S2', 'S3'])

def g_rrf(j, n, k=60): return 1 / (k + j)
def g_lin(j, n): return (n - j + 1) / n
def g_borda(j, n): return n - j + 1

def consensus(lists, w, g, skip=None):
    sc = collections.defaultdict(float)
    for e, l in lists.items():
        if e == skip: continue
        n = len(l)
        for j, d in enumerate(l, 1):
            sc[d] += w[e] * g(j, n)
    return sc

def ndcg_vs(l, gains, depth):
    dcg = sum(gains.get(d, 0) / math.log2(j + 1) for j, d in enumerate(l[:depth], 1))
    ideal = sorted(gains.values(), reverse=True)[:depth]
    idcg = sum(v / math.log2(j + 1) for j, v in enumerate(ideal, 1))
    return dcg / idcg if idcg > 0 else 0.0

def reliabilities(lists, g_est, iters, p, measure_depth, w0=None):
    w = {e: 1.0 for e in lists} if w0 is None else dict(w0)
    if len(lists) < 3:
        return w
    for _ in range(iters):
        rel = {}
        for e, l in lists.items():
            c = consensus(lists, w, g_est, skip=e)
            rel[e] = ndcg_vs(l, c, measure_depth)
        top = max(rel.values()) or 1.0
        w = {e: (r / top) ** p + 1e-9 for e, r in rel.items()}
    return w

def agree_fuser(g_est=g_lin, iters=3, p=2.0, measure_depth=8, final='rrf', pf=None):
    def fuse(lists):
        w = reliabilities(lists, g_est, iters, p, measure_depth)
        if pf is not None:
            w = {e: v ** (pf / p) for e, v in w.items()}
        return {'rrf': rrf, 'borda': borda, 'combmnz': combmnz}[final](lists, w)
    return fuse

def ev(fuser, queries, setup):
    rk, D = SETUPS[setup]
    return m.metasearch(queries, fuser, rk, D).mean_ndcg

if __name__ == '__main__':
    base = {s: max(ev(f, TRAIN, s) for f in (rrf, borda, combmnz)) for s in SETUPS}
    print('train best baseline', {s: round(v, 4) for s, v in base.items()})
    for g_est, iters, p, md, final in itertools.product([g_lin, g_rrf], [1, 3], [1, 2, 4], [8, 20], ['rrf', 'borda']):
        f = agree_fuser(g_est, iters, p, md, final)
        r = {s: ev(f, TRAIN, s) for s in SETUPS}
        print(g_est.__name__, iters, p, md, final, ' '.join(f'{s}={v:.4f}({(v / base[s] - 1) * 100:+.1f}%)' for s, v in r.items()), flush=True)
