"""Which unsupervised per-query signal tracks an engine's true per-query nDCG@8? Not shipped."""
import sys; sys.path.insert(0, 'bench-notes')
from mq2008_agree import *

def spearman(a, b):
    def ranks(x):
        o = sorted(range(len(x)), key=lambda i: x[i]); r = [0.0] * len(x)
        i = 0
        while i < len(o):
            j = i
            while j + 1 < len(o) and x[o[j + 1]] == x[o[i]]: j += 1
            for t in range(i, j + 1): r[o[t]] = (i + j) / 2
            i = j + 1
        return r
    ra, rb = ranks(a), ranks(b); n = len(a)
    ma, mb = sum(ra) / n, sum(rb) / n
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = math.sqrt(sum((x - ma) ** 2 for x in ra)); vb = math.sqrt(sum((y - mb) ** 2 for y in rb))
    return cov / (va * vb) if va and vb else None

def estimators(lists):
    out = {}
    w1 = {e: 1.0 for e in lists}
    for name, g in (('loo_lin', g_lin), ('loo_rrf', g_rrf)):
        for md in (8, 20):
            out[f'{name}@{md}'] = {e: ndcg_vs(l, consensus(lists, w1, g, skip=e), md) for e, l in lists.items()}
    out['len'] = {e: len(l) for e, l in lists.items()}
    votes = collections.Counter(d for l in lists.values() for d in l)
    out['meanvotes'] = {e: sum(votes[d] - 1 for d in l) / len(l) for e, l in lists.items()}
    out['sumvotes_disc'] = {e: sum((votes[d] - 1) / math.log2(j + 1) for j, d in enumerate(l[:8], 1)) for e, l in lists.items()}
    out['top1votes'] = {e: votes[l[0]] for e, l in lists.items()}
    return out

for setup in SETUPS:
    rk, D = SETUPS[setup]
    acc = collections.defaultdict(list)
    for q in TRAIN.values():
        if not q.has_relevant: continue
        lists = m.shown_lists(q, rk, D)
        if len(lists) < 3: continue
        truth = {e: m.score_ranked(l, q.grades)[0] for e, l in lists.items()}
        es = list(lists)
        for name, est in estimators(lists).items():
            s = spearman([est[e] for e in es], [truth[e] for e in es])
            if s is not None: acc[name].append(s)
    print(setup, {k: round(sum(v) / len(v), 3) for k, v in acc.items()})
