"""Alternative agreement measure: the others' support of each of my top rows (no order-based ideal). Scratch."""
import sys, json, collections, math; sys.path.insert(0, 'bench-notes')
from mq2008_select import Q, DEV, CHECK, BASELINES, m

def support_fuser(k, power, coverage, depth=8, iters=1):
    def f(lists):
        E = list(lists)
        if not lists: return []
        longest = max(len(l) for l in lists.values())
        cov = {e: (len(lists[e]) / longest) ** coverage for e in E}
        w = dict(cov)
        if len(E) >= 3 and power > 0:
            for _ in range(iters):
                sup = {}
                for e in E:
                    c = collections.defaultdict(float)
                    for g in E:
                        if g == e: continue
                        for j, d in enumerate(lists[g], 1): c[d] += w[g] / (k + j)
                    top = max(c.values(), default=0) or 1
                    disc = [1 / math.log2(j + 1) for j in range(1, depth + 1)]
                    sup[e] = sum(c.get(d, 0) / top * disc[j] for j, d in enumerate(lists[e][:depth])) / sum(disc)
                best = max(sup.values()) or 1
                w = {e: cov[e] * max((sup[e] / best) ** power, 1e-6) for e in E}
        sc = collections.defaultdict(float)
        for e in E:
            for j, d in enumerate(lists[e], 1): sc[d] += w[e] / (k + j)
        return sorted(sc, key=lambda d: (-sc[d], d))
    return f

setups = dict(DEV, **CHECK)
base = {}
for s, (rk, D) in setups.items():
    vals = [m.metasearch(Q, fn, rk, D).mean_ndcg for fn in BASELINES.values()] + [m.best_single(Q, rk, D)[1].mean_ndcg]
    base[s] = max(vals)
for k, power, coverage in [(10, 0, 1), (10, 1, 1), (10, 2, 1), (10, 4, 1), (10, 2, 0), (10, 4, 0), (30, 2, 1), (10, 8, 1)]:
    g = {s: (m.metasearch(Q, support_fuser(k, power, coverage), rk, D).mean_ndcg / base[s] - 1) * 100 for s, (rk, D) in setups.items()}
    dev = sum(g[s] for s in DEV) / len(DEV); chk = sum(g[s] for s in CHECK) / len(CHECK)
    print(k, power, coverage, f'dev {dev:+.2f} chk {chk:+.2f}', ' '.join(f'{s}={v:+.1f}' for s, v in g.items()), flush=True)
