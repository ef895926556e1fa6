"""Redundancy-discounted fusion: near-duplicate engines share one vote. Scratch, not shipped."""
import sys, itertools; sys.path.insert(0, 'bench-notes')
from mq2008_agree import *

def rbo(a, b, p=0.9):
    K = max(len(a), len(b))
    if K == 0: return 0.0
    sa, sb = set(), set(); inter = 0; s = 0.0
    for k in range(1, K + 1):
        x = a[k - 1] if k <= len(a) else None; y = b[k - 1] if k <= len(b) else None
        if x is not None:
            inter += x in sb; sa.add(x)
        if y is not None:
            inter += y in sa; sb.add(y)
        if x is not None and x == y: inter -= 1 if False else 0
        s += p ** (k - 1) * inter / k
    return (1 - p) * s / (1 - p ** K)

def overlap(a, b):
    return len(set(a) & set(b)) / max(len(a), len(b))

def redundancy_weights(lists, sim, power=1.0):
    es = list(lists)
    return {e: 1.0 / sum(sim(lists[e], lists[f]) ** power for f in es) for e in es}

def red_fuser(sim, final, power=1.0):
    def fuse(lists):
        w = redundancy_weights(lists, sim, power)
        return {'rrf': rrf, 'borda': borda, 'combmnz': combmnz}[final](lists, w)
    return fuse

if __name__ == '__main__':
    base = {s: max(ev(f, TRAIN, s) for f in (rrf, borda, combmnz)) for s in SETUPS}
    print('train best baseline', {s: round(v, 4) for s, v in base.items()})
    for simname, sim in (('rbo9', rbo), ('rbo7', lambda a, b: rbo(a, b, 0.7)), ('overlap', overlap)):
        for power in (1, 2, 4):
            for final in ('rrf', 'borda', 'combmnz'):
                f = red_fuser(sim, final, power)
                r = {s: ev(f, TRAIN, s) for s in SETUPS}
                print(simname, power, final, ' '.join(f'{s}={v:.4f}({(v / base[s] - 1) * 100:+.1f}%)' for s, v in r.items()), flush=True)
