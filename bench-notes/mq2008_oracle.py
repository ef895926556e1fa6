"""Upper bounds (cheating, uses labels of the test query): per-query oracle engine weights. Not shipped."""
import sys; sys.path.insert(0, 'bench-notes')
from mq2008_explore import *

for name, (rk, D) in SETUPS.items():
    res = {}
    for p in (1, 4, 16):
        for fn in (rrf, borda, combmnz):
            vals = []
            for qid, q in Q.items():
                if not q.has_relevant: continue
                lists = m.shown_lists(q, rk, D)
                w = {e: m.score_ranked(l, q.grades)[0] ** p + 1e-6 for e, l in lists.items()}
                vals.append(m.score_ranked(fn(lists, w)[:8], q.grades)[0])
            res[(fn.__name__, p)] = round(sum(vals) / len(vals), 4)
    # pool ideal
    vals = []
    for qid, q in Q.items():
        if not q.has_relevant: continue
        pool = {d for l in m.shown_lists(q, rk, D).values() for d in l}
        vals.append(m.score_ranked(sorted(pool, key=lambda d: -q.grades[d])[:8], q.grades)[0])
    print(name, res, 'pool-ideal', round(sum(vals) / len(vals), 4))
