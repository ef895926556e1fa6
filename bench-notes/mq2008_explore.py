"""Scratch exploration for the unsupervised fusion ranker (not shipped). Run: .venv/bin/python bench-notes/mq2008_explore.py"""
from __future__ import annotations
import math, sys, collections, random
from serpfuse.bench import mq2008 as m
import os
DATA_DIR = os.path.join(os.environ.get('SERPFUSE_DATA', '../shared/data'), 'mq2008-agg')

C = m.load_mq2008(DATA_DIR)
Q = m.queries_of(C)
S7 = (2, 7, 9, 12, 16, 21, 25)
SETUPS = {'all25@20': (m.RANKERS, 20), 'r1-5@10': (tuple(range(1, 6)), 10), 'S7@20': (S7, 20)}

def order(sc):
    return sorted(sc, key=lambda d: (-sc[d], d))

def rrf(lists, w=None, k=60):
    sc = collections.defaultdict(float)
    for e, l in lists.items():
        for j, d in enumerate(l, 1):
            sc[d] += (1 if w is None else w[e]) / (k + j)
    return order(sc)

def borda(lists, w=None):
    sc = collections.defaultdict(float)
    for e, l in lists.items():
        n = len(l)
        for j, d in enumerate(l, 1):
            sc[d] += (1 if w is None else w[e]) * (n - j + 1)
    return order(sc)

def combmnz(lists, w=None):
    sc = collections.defaultdict(float); cnt = collections.Counter()
    for e, l in lists.items():
        n = len(l)
        for j, d in enumerate(l, 1):
            sc[d] += (1 if w is None else w[e]) * (n - j + 1) / n; cnt[d] += 1
    return order({d: s * cnt[d] for d, s in sc.items()})

if __name__ == '__main__':
    for name, (rk, D) in SETUPS.items():
        singles = {r: m.metasearch(Q, m.single_fuser(r), rk, D).mean_ndcg for r in rk}
        print(name, 'singles', {r: round(v, 3) for r, v in sorted(singles.items(), key=lambda x: -x[1])})
        for fn in (rrf, borda, combmnz):
            print('  ', fn.__name__, round(m.metasearch(Q, fn, rk, D).mean_ndcg, 4))
        w = {m.engine_name(r): v for r, v in singles.items()}
        for p in (1, 2, 4, 8):
            wp = {e: v ** p for e, v in w.items()}
            print('   oracle corpus weights^%d' % p, 'rrf', round(m.metasearch(Q, lambda l: rrf(l, wp), rk, D).mean_ndcg, 4),
                  'borda', round(m.metasearch(Q, lambda l: borda(l, wp), rk, D).mean_ndcg, 4),
                  'mnz', round(m.metasearch(Q, lambda l: combmnz(l, wp), rk, D).mean_ndcg, 4))
