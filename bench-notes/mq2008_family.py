"""One parametric family covering what helped: per-query LOO agreement (reliability), list coverage, the rank
shape (RRF k vs linear), vote-count exponent. Random search on TRAIN (S1-S3). Scratch, not shipped."""
import sys, itertools, random as rnd, json; sys.path.insert(0, 'bench-notes')
from mq2008_agree import *

R = rnd.Random(7)
SUBS = {f'rand{i}': (tuple(sorted(R.sample(range(1, 26), R.randint(3, 10)))), R.choice([10, 20])) for i in range(6)}
ALL = dict(SETUPS, **SUBS)

def phi(j, n, shape, k):
    if shape == 'rrf':
        return 1 / (k + j)
    return (n - j + 1) / n  # linear, normalised by the engine's own list length

def family(p=2.0, a=0.0, k=60, shape='rrf', beta=0.0, iters=1, md=8, est='rrf'):
    g_est = g_rrf if est == 'rrf' else g_lin
    def f(lists):
        E = len(lists)
        if E == 0: return []
        nmax = max(len(l) for l in lists.values())
        cov = {e: (len(l) / nmax) ** a for e, l in lists.items()}
        w = dict(cov)
        if E >= 3 and p > 0:
            for _ in range(iters):
                rel = {e: ndcg_vs(l, consensus(lists, w, g_est, skip=e), md) for e, l in lists.items()}
                top = max(rel.values()) or 1.0
                w = {e: cov[e] * ((rel[e] / top) ** p + 1e-6) for e in lists}
        sc = collections.defaultdict(float); cnt = collections.Counter()
        for e, l in lists.items():
            n = len(l)
            for j, d in enumerate(l, 1):
                sc[d] += w[e] * phi(j, n, shape, k); cnt[d] += 1
        if beta:
            sc = {d: s * cnt[d] ** beta for d, s in sc.items()}
        return order(sc)
    return f

def bases(queries):
    out = {}
    for s, (rk, D) in ALL.items():
        vals = [m.metasearch(queries, fn, rk, D).mean_ndcg for fn in (rrf, borda, combmnz)]
        single = m.best_single(queries, rk, D)[1].mean_ndcg
        out[s] = max(vals + [single])
    return out

if __name__ == '__main__':
    print({s: v for s, v in SUBS.items()})
    base = bases(TRAIN)
    print('train best baseline', {s: round(v, 4) for s, v in base.items()})
    space = dict(p=[0, 1, 2, 4, 8], a=[0, 0.5, 1, 2], k=[1, 5, 20, 60], shape=['rrf', 'lin'], beta=[0, 0.5, 1], iters=[1, 2], md=[8, 20], est=['rrf', 'lin'])
    results = []
    for t in range(int(sys.argv[1]) if len(sys.argv) > 1 else 60):
        cfg = {k_: R.choice(v) for k_, v in space.items()}
        f = family(**cfg)
        r = {s: ev(f, TRAIN, s) if s in SETUPS else m.metasearch(TRAIN, f, *ALL[s]).mean_ndcg for s in ALL}
        gains = {s: (v / base[s] - 1) * 100 for s, v in r.items()}
        results.append((min(gains.values()), cfg, gains))
        print(json.dumps(cfg), 'min %+.1f' % min(gains.values()), ' '.join(f'{s}={g:+.1f}' for s, g in gains.items()), flush=True)
    results.sort(key=lambda x: -x[0])
    print('BEST'); [print(json.dumps(c), round(g, 2)) for g, c, _ in results[:8]]
