"""Agreement with INDEPENDENT evidence: each engine's consensus excludes its near-duplicates. Scratch."""
import sys, itertools; sys.path.insert(0, 'bench-notes')
from mq2008_redund import *

def fuse_generic(lists, w, shape, k=60):
    sc = collections.defaultdict(float)
    for e, l in lists.items():
        n = len(l)
        for j, d in enumerate(l, 1):
            s = 1 / (k + j) if shape == 'rrf' else (n - j + 1) if shape == 'borda' else (n - j + 1) / n
            sc[d] += w[e] * s
    return order(sc)

def indep_reliability(lists, sim, gamma, g_est, md, iters, p):
    es = list(lists)
    S = {(e, f): sim(lists[e], lists[f]) for e in es for f in es if e != f}
    w = {e: 1.0 for e in es}
    for _ in range(iters):
        rel = {}
        for e in es:
            c = collections.defaultdict(float)
            for f in es:
                if f == e: continue
                wf = w[f] * (1 - S[e, f]) ** gamma
                n = len(lists[f])
                for j, d in enumerate(lists[f], 1):
                    c[d] += wf * g_est(j, n)
            rel[e] = ndcg_vs(lists[e], c, md)
        top = max(rel.values()) or 1.0
        w = {e: (r / top) ** p + 1e-9 for e, r in rel.items()}
    return w

def fuser(sim=rbo, gamma=2.0, g_est=g_rrf, md=8, iters=1, p=2.0, shape='rrf'):
    def f(lists):
        if len(lists) < 3:
            return fuse_generic(lists, {e: 1.0 for e in lists}, shape)
        w = indep_reliability(lists, sim, gamma, g_est, md, iters, p)
        return fuse_generic(lists, w, shape)
    return f

if __name__ == '__main__':
    base = {s: max(ev(f, TRAIN, s) for f in (rrf, borda, combmnz)) for s in SETUPS}
    print('train best baseline', {s: round(v, 4) for s, v in base.items()})
    for gamma, p, shape, iters in itertools.product([0, 1, 4], [1, 2, 4], ['rrf', 'borda'], [1, 2]):
        f = fuser(gamma=gamma, p=p, shape=shape, iters=iters)
        r = {s: ev(f, TRAIN, s) for s in SETUPS}
        print(gamma, p, shape, iters, ' '.join(f'{s}={v:.4f}({(v / base[s] - 1) * 100:+.1f}%)' for s, v in r.items()), flush=True)
