"""5-fold selection of the `agree` knobs and the report table, from bench-notes/mq2008_select.json.

    .venv/bin/python bench-notes/mq2008_select.py && .venv/bin/python bench-notes/mq2008_report.py
"""
from __future__ import annotations

import collections, json, sys
from pathlib import Path

from serpfuse.bench import mq2008 as m
import os
DATA_DIR = os.path.join(os.environ.get('SERPFUSE_DATA', '../shared/data'), 'mq2008-agg')
from serpfuse.bench.stats import paired_bootstrap

HERE = Path(__file__).parent
D = json.loads((HERE / 'mq2008_select.json').read_text())
R = D['results']
C = m.load_mq2008(sys.argv[1] if len(sys.argv) > 1 else DATA_DIR)
SUBSET_OF = {qid: s for s, qs in C.items() for qid in qs}
CFGS = sorted(n for n in R['all25@20'] if n.startswith('cfg:'))


def mean(xs):
    xs = list(xs)
    return sum(xs) / len(xs) if xs else 0.0


def qids_in(setup, subsets):
    return [q for q in R[setup]['rrf']['ndcg'] if SUBSET_OF[q] in subsets]


def metric_mean(setup, name, qids, metric='ndcg'):
    per = R[setup][name][metric]
    return mean(per[q] for q in qids)


def best_baseline(setup, qids):
    """(name, mean) of the best of RRF, CombMNZ, Borda and the best single engine on these queries."""
    names = ['rrf', 'combmnz', 'borda'] + [n for n in R[setup] if n.startswith('single:')]
    return max(((n, metric_mean(setup, n, qids)) for n in names), key=lambda x: x[1])


def objective(cfg, subsets, setups):
    gains = []
    for s in setups:
        qids = qids_in(s, subsets)
        gains.append(metric_mean(s, cfg, qids) / best_baseline(s, qids)[1] - 1)
    return mean(gains)


def five_fold(setups):
    chosen, test_scores = {}, collections.defaultdict(dict)
    for fold in m.FOLDS:
        ranked = sorted(CFGS, key=lambda c: -objective(c, fold.train, setups))[:5]
        pick = max(ranked, key=lambda c: objective(c, [fold.vali], setups))
        chosen[fold.name] = pick
        for s in R:
            for metric in ('ndcg', 'p', 'rr'):
                per = R[s][pick][metric]
                test_scores[(s, metric)].update({q: per[q] for q in qids_in(s, [fold.test])})
    return chosen, test_scores


def fmt_cfg(name):
    c = json.loads(name[4:])
    return f"k={c['rrf_constant']:g} power={c['power']:g} coverage={c['coverage']:g} iterations={c['iterations']}"


def table(setups, test_scores, fixed=None):
    lines = ['| setup | engines@depth | method | nDCG@8 | P@8 | MRR@8 | vs best baseline | 95 % CI (paired bootstrap) |',
             '|---|---|---|---:|---:|---:|---:|---|']
    summary = []
    for s in setups:
        rk, depth = D['setups'][s]
        allq = qids_in(s, m.SUBSETS)
        bname, bmean = best_baseline(s, allq)
        rows = [(n, {mt: R[s][n][mt] for mt in ('ndcg', 'p', 'rr')}) for n in ('rrf', 'combmnz', 'borda')]
        single = max((n for n in R[s] if n.startswith('single:')), key=lambda n: metric_mean(s, n, allq))
        rows.append((f'best single ({single[7:]})', {mt: R[s][single][mt] for mt in ('ndcg', 'p', 'rr')}))
        rows.append(('agree 5-fold', {mt: test_scores[(s, mt)] for mt in ('ndcg', 'p', 'rr')}))
        if fixed:
            rows.append(('agree default', {mt: R[s][fixed][mt] for mt in ('ndcg', 'p', 'rr')}))
        base_per = [R[s][bname]['ndcg'][q] for q in allq]
        for name, per in rows:
            nd = mean(per['ndcg'][q] for q in allq)
            extra = ['', '']
            if name.startswith('agree'):
                bs = paired_bootstrap(base_per, [per['ndcg'][q] for q in allq])
                extra = [f'{(nd / bmean - 1) * 100:+.1f} %', f'[{bs.low:+.4f}, {bs.high:+.4f}]']
                summary.append((s, name, nd / bmean - 1, bs.low, bs.high))
            lines.append(f"| {s} | {len(rk)}@{depth} | {name} | {nd:.4f} | {mean(per['p'][q] for q in allq):.4f} | "
                         f"{mean(per['rr'][q] for q in allq):.4f} | {extra[0]} | {extra[1]} |")
        lines.append(f'| | | (best baseline: {bname}) | | | | | |')
    return '\n'.join(lines), summary


if __name__ == '__main__':
    dev, check = D['dev'], D['check']
    chosen, test_scores = five_fold(dev)
    print('chosen per fold:', {f: fmt_cfg(c) for f, c in chosen.items()})
    fixed = max(CFGS, key=lambda c: objective(c, m.SUBSETS, dev))
    print('best on all queries of the dev setups (for the shipped default):', fmt_cfg(fixed))
    text, summary = table(dev + check, test_scores, fixed)
    print(text)
    for s, name, g, lo, hi in summary:
        pass
    print('\nsetups:', {s: D['setups'][s] for s in dev + check})
    # the top configs by the all-query objective, for the notes
    print('\ntop 10 configs by mean gain over the dev setups (all queries):')
    for c in sorted(CFGS, key=lambda c: -objective(c, m.SUBSETS, dev))[:10]:
        print(f'  {fmt_cfg(c)}: dev {objective(c, m.SUBSETS, dev) * 100:+.2f} %, check {objective(c, m.SUBSETS, check) * 100:+.2f} %')


def robustness(setups, fixed, test_scores=None):
    """Each fixed method against the best of the four baselines chosen per setup in hindsight."""
    print('\n| method | mean gap to best-of-four | worst gap | setups within 0.5 % or better | vs RRF mean | vs Borda mean |')
    print('|---|---:|---:|---:|---:|---:|')
    methods = {'rrf': 'rrf', 'combmnz': 'combmnz', 'borda': 'borda', 'agree (default knobs)': fixed}
    if test_scores:
        methods['agree (5-fold test)'] = None
    for label, name in methods.items():
        gaps, vs_rrf, vs_borda = [], [], []
        for s in setups:
            qids = qids_in(s, m.SUBSETS)
            v = metric_mean(s, name, qids) if name else mean(test_scores[(s, 'ndcg')][q] for q in qids)
            gaps.append(v / best_baseline(s, qids)[1] - 1)
            vs_rrf.append(v / metric_mean(s, 'rrf', qids) - 1)
            vs_borda.append(v / metric_mean(s, 'borda', qids) - 1)
        near = sum(g >= -0.005 for g in gaps)
        print(f'| {label} | {mean(gaps) * 100:+.2f} % | {min(gaps) * 100:+.2f} % | {near}/{len(setups)} | '
              f'{mean(vs_rrf) * 100:+.2f} % | {mean(vs_borda) * 100:+.2f} % |')


if __name__ == '__main__':
    robustness(D['dev'] + D['check'], max(CFGS, key=lambda c: objective(c, m.SUBSETS, D['dev'])), five_fold(D['dev'])[1])


def condensed(setups, test_scores, fixed):
    """One row per setup: the best baseline, agree (5-fold test) and agree (default knobs), with the CI."""
    print('\n| setup | engines@depth | best baseline | nDCG@8 | agree 5-fold | gain | 95 % CI | agree default | gain | 95 % CI |')
    print('|---|---|---|---:|---:|---:|---|---:|---:|---|')
    for s in setups:
        rk, depth = D['setups'][s]
        qids = qids_in(s, m.SUBSETS)
        bname, bmean = best_baseline(s, qids)
        base = [R[s][bname]['ndcg'][q] for q in qids]
        cells = []
        for per in (test_scores[(s, 'ndcg')], R[s][fixed]['ndcg']):
            ours = [per[q] for q in qids]
            bs = paired_bootstrap(base, ours)
            cells.append(f'{mean(ours):.4f} | {(mean(ours) / bmean - 1) * 100:+.1f} % | [{bs.low:+.4f}, {bs.high:+.4f}]')
        label = bname.replace('single:', 'single ')
        print(f"| {s} | {','.join(map(str, rk)) if len(rk) < 25 else 'all 25'}@{depth} | {label} | {bmean:.4f} | {cells[0]} | {cells[1]} |")


if __name__ == '__main__':
    fixed_cfg = max(CFGS, key=lambda c: objective(c, m.SUBSETS, D['dev']))
    condensed(D['dev'] + D['check'], five_fold(D['dev'])[1], fixed_cfg)
