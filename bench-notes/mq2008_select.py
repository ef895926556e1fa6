"""Choose the `agree` knobs with the LETOR 5-fold protocol and report test numbers (bench-notes, not shipped).

Every method here is unsupervised per query, so a query's score does not depend on the training data: the script
scores every (config, setup, query) once, then each fold picks the config with the best objective on its three
training subsets, keeps it if it is also best-or-near on the validation subset (top 5 by train, best on vali),
and reports it on the test subset. The objective is the mean over DEVELOPMENT setups of the relative nDCG@8 gain
over that setup's best baseline (max of RRF, CombMNZ, Borda, best single, all measured on the same queries).
Random CHECK subsets are never used for choosing.

    .venv/bin/python bench-notes/mq2008_select.py            # writes bench-notes/mq2008_select.json
"""
from __future__ import annotations

import collections, itertools, json, random, sys, time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from serpfuse.bench import mq2008 as m
import os
DATA_DIR = os.path.join(os.environ.get('SERPFUSE_DATA', '../shared/data'), 'mq2008-agg')
from serpfuse.rankers.agreement import AgreementConfig, fuse

DATA = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(DATA_DIR)
C = m.load_mq2008(DATA)
Q = m.queries_of(C)
S7 = (2, 7, 9, 12, 16, 21, 25)
NAMED = {'all25@20': (m.RANKERS, 20), 'r1-5@10': (tuple(range(1, 6)), 10), 'S7@20': (S7, 20)}


def random_setups(seed: int, count: int, prefix: str) -> dict:
    rng = random.Random(seed)
    out = {}
    for i in range(count):
        rk = tuple(sorted(rng.sample(m.RANKERS, rng.randint(3, 10))))
        out[f'{prefix}{i}'] = (rk, rng.choice((10, 20)))
    return out


DEV = dict(NAMED, **random_setups(11, 8, 'dev'))
CHECK = random_setups(29, 10, 'chk')
SETUPS = dict(DEV, **CHECK)


# Reference baselines (the conventions that reproduce issue 4's numbers; ties by docid ascending).
def _order(scores):
    return sorted(scores, key=lambda d: (-scores[d], d))


def ref_rrf(lists, k=60):
    sc = collections.defaultdict(float)
    for l in lists.values():
        for j, d in enumerate(l, 1):
            sc[d] += 1 / (k + j)
    return _order(sc)


def ref_borda(lists):
    sc = collections.defaultdict(float)
    for l in lists.values():
        for j, d in enumerate(l, 1):
            sc[d] += len(l) - j + 1
    return _order(sc)


def ref_combmnz(lists):
    sc = collections.defaultdict(float)
    hits = collections.Counter()
    for l in lists.values():
        for j, d in enumerate(l, 1):
            sc[d] += (len(l) - j + 1) / len(l)
            hits[d] += 1
    return _order({d: s * hits[d] for d, s in sc.items()})


BASELINES = {'rrf': ref_rrf, 'combmnz': ref_combmnz, 'borda': ref_borda}

GRID = {
    'rrf_constant': [10.0, 30.0, 60.0],
    'power': [0.0, 1.0, 2.0, 4.0, 8.0],
    'coverage': [0.0, 0.5, 1.0, 2.0],
    'iterations': [1, 2],
}


def configs():
    keys = list(GRID)
    out = []
    for values in itertools.product(*(GRID[k] for k in keys)):
        cfg = dict(zip(keys, values))
        if cfg['power'] == 0 and cfg['iterations'] > 1:
            continue  # identical to iterations=1
        out.append(cfg)
    return out


def per_query(fuser, setup):
    rk, depth = SETUPS[setup]
    s = m.metasearch(Q, fuser, rk, depth)
    return {'ndcg': s.ndcg, 'p': s.precision, 'rr': s.rr}


def agree_fuser(cfg):
    ac = AgreementConfig(**cfg)
    return lambda lists: [d for d, _ in fuse(lists, ac)[0]]


def job(args):
    name, setup = args
    if name.startswith('cfg:'):
        cfg = json.loads(name[4:])
        return name, setup, per_query(agree_fuser(cfg), setup)
    if name.startswith('single:'):
        return name, setup, per_query(m.single_fuser(int(name[7:])), setup)
    return name, setup, per_query(BASELINES[name], setup)


def main():
    t0 = time.time()
    jobs = [(b, s) for s in SETUPS for b in BASELINES]
    jobs += [(f'single:{r}', s) for s in SETUPS for r in SETUPS[s][0]]
    jobs += [('cfg:' + json.dumps(c, sort_keys=True), s) for s in SETUPS for c in configs()]
    results = collections.defaultdict(dict)
    with ProcessPoolExecutor(2) as pool:
        for i, (name, setup, scores) in enumerate(pool.map(job, jobs, chunksize=8)):
            results[setup][name] = scores
            if i % 200 == 0:
                print(f'{i}/{len(jobs)} {time.time() - t0:.0f}s', file=sys.stderr, flush=True)
    out = Path(__file__).with_name('mq2008_select.json')
    out.write_text(json.dumps({'setups': {s: [list(v[0]), v[1]] for s, v in SETUPS.items()},
                               'dev': list(DEV), 'check': list(CHECK), 'results': results}))
    print('wrote', out, f'{time.time() - t0:.0f}s')


if __name__ == '__main__':
    main()
