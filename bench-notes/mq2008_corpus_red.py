"""Corpus-level redundancy: engines that duplicate each other across the corpus share one vote. Scratch."""
import sys, itertools; sys.path.insert(0, 'bench-notes')
from mq2008_family import *
from mq2008_redund import rbo

def corpus_sim(queries, rk, D, p=0.9):
    acc = collections.defaultdict(list)
    for q in queries.values():
        lists = m.shown_lists(q, rk, D)
        for e, f in itertools.combinations(sorted(lists), 2):
            s = rbo(lists[e], lists[f], p); acc[e, f].append(s); acc[f, e].append(s)
    return {k_: sum(v) / len(v) for k_, v in acc.items()}

def red_fuse(S, power, shape, k=60, per_query=False):
    def f(lists):
        es = list(lists)
        w = {e: 1 / (1 + sum(S.get((e, g), 0.0) ** power for g in es if g != e)) for e in es}
        sc = collections.defaultdict(float)
        for e, l in lists.items():
            n = len(l)
            for j, d in enumerate(l, 1):
                sc[d] += w[e] * phi(j, n, shape, k)
        return order(sc)
    return f

if __name__ == '__main__':
    base = bases(TRAIN)
    for power, shape, k in itertools.product([1, 2, 4], ['rrf', 'lin'], [60]):
        gains = {}
        for s, (rk, D) in ALL.items():
            S = corpus_sim(TRAIN, rk, D)
            gains[s] = (m.metasearch(TRAIN, red_fuse(S, power, shape, k), rk, D).mean_ndcg / base[s] - 1) * 100
        print(power, shape, k, 'mean %+.2f min %+.1f' % (sum(gains.values()) / len(gains), min(gains.values())), ' '.join(f'{s}={g:+.1f}' for s, g in gains.items()), flush=True)
