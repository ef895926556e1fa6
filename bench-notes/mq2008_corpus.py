"""Corpus-level unsupervised engine weights: mean leave-one-out agreement over every query (no labels). Scratch."""
import sys, itertools; sys.path.insert(0, 'bench-notes')
from mq2008_agree import *

def corpus_agreement(queries, rk, D, g_est=g_rrf, md=8, iters=2):
    """engine -> mean over queries (where it shows something) of nDCG of its list against the LOO consensus."""
    w = {m.engine_name(r): 1.0 for r in rk}
    for _ in range(iters):
        acc = collections.defaultdict(list)
        for q in queries.values():
            lists = m.shown_lists(q, rk, D)
            if len(lists) < 3: continue
            for e, l in lists.items():
                acc[e].append(ndcg_vs(l, consensus(lists, w, g_est, skip=e), md))
        rel = {e: (sum(v) / len(v) if v else 0.0) for e, v in acc.items()}
        top = max(rel.values())
        w = {e: rel.get(e, 0.0) / top + 1e-6 for e in w}
    return w

def wfuse(w, p, shape, a=0.0, k=60):
    def f(lists):
        sc = collections.defaultdict(float)
        for e, l in lists.items():
            n = len(l)
            for j, d in enumerate(l, 1):
                s = 1 / (k + j) if shape == 'rrf' else (n - j + 1) / n
                sc[d] += w[e] ** p * n ** a * s
        return order(sc)
    return f

if __name__ == '__main__':
    base = {s: max(ev(f, TRAIN, s) for f in (rrf, borda, combmnz)) for s in SETUPS}
    print('train best baseline', {s: round(v, 4) for s, v in base.items()})
    W = {s: corpus_agreement(TRAIN, *SETUPS[s]) for s in SETUPS}
    for s in SETUPS: print(s, {e: round(v, 2) for e, v in sorted(W[s].items(), key=lambda x: -x[1])})
    for p, a, shape in itertools.product([1, 2, 4, 8], [0, 1, 2], ['rrf', 'lin']):
        r = {s: ev(wfuse(W[s], p, shape, a), TRAIN, s) for s in SETUPS}
        print(p, a, shape, ' '.join(f'{s}={v:.4f}({(v / base[s] - 1) * 100:+.1f}%)' for s, v in r.items()), flush=True)
