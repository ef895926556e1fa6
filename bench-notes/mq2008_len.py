"""How much of the signal is list length (an artifact of the judged pool)? Scratch."""
import sys, itertools; sys.path.insert(0, 'bench-notes')
from mq2008_agree import *

def lenw(a, shape, k=60):
    def f(lists):
        sc = collections.defaultdict(float)
        for e, l in lists.items():
            n = len(l)
            for j, d in enumerate(l, 1):
                s = 1 / (k + j) if shape == 'rrf' else (n - j + 1) / n
                sc[d] += n ** a * s
        return order(sc)
    return f

base = {s: max(ev(f, TRAIN, s) for f in (rrf, borda, combmnz)) for s in SETUPS}
print('train best baseline', {s: round(v, 4) for s, v in base.items()})
for a, shape in itertools.product([0, 0.5, 1, 1.5, 2, 3], ['rrf', 'lin']):
    r = {s: ev(lenw(a, shape), TRAIN, s) for s in SETUPS}
    print(a, shape, ' '.join(f'{s}={v:.4f}({(v / base[s] - 1) * 100:+.1f}%)' for s, v in r.items()), flush=True)
