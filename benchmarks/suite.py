"""The generalization suite: every strategy against the best of the plain methods (RRF k=60, CombMNZ, Borda) on
every judged corpus and robustness setup here, so that a default is chosen by what holds across corpora.

    python -m benchmarks.suite                   # MQ2008 fixed setups + 3 seeds x 17 random subsets, crw56 dev
    python -m benchmarks.suite --markdown --subsets 17 --seeds 1,7,2026 --strategies adaptive,consensus,agree

What it reports:
- MQ2008 (metasearch protocol: each ranker shows its top 10 or 20, the fused top 8 is scored): on each fixed setup,
  each strategy's nDCG@8, its gap to the best plain method chosen in hindsight, and a paired bootstrap interval
  of that difference by query; over the random subsets of each seed, the mean and worst gap.
- Cross-validated choice: for each of the five standard subsets S1-S5 held out, the method with the best mean
  gap over every setup on the other four subsets' queries is chosen, and its gap on the held-out subset is what
  is reported. No figure comes from the data that chose it.
- crw56 dev (28 queries, graded judgments): each strategy and each plain method through the whole pipeline,
  the gap to the best plain method with its interval, and the gap on each of four query folds (by qid).
- trec-dl-passages (76 queries, six retrieval systems as engines, NIST's graded judgments): the same, its folds by
  the query's position in the file (benchmarks/trecdl.py).
The robustness variants of crw56 (misspelled, garbage engine, generic rows) are ``make bench-robustness``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks import mq2008 as mq
from benchmarks.setups import load_crw56, load_mq2008_queries
from serpfuse.bench.bootstrap import paired_bootstrap
from serpfuse.config import RankingConfig

PLAIN = ("rrf (plain)", "combmnz", "borda")
STRATEGIES = ("adaptive", "consensus", "agree")
FOLDS = ("S1", "S2", "S3", "S4", "S5")


def plain_config(name: str) -> RankingConfig:
    return mq.plain_rrf(RankingConfig()) if name == "rrf (plain)" else RankingConfig(strategy=name)


def method_config(name: str) -> RankingConfig:
    return plain_config(name) if name in PLAIN else RankingConfig(strategy=name)


@dataclass
class SetupScores:
    """One setup: each method's nDCG@8 per query."""

    name: str
    group: str  # "fixed" or "seed N"
    per_query: dict[str, dict[str, float]] = field(default_factory=dict)  # method -> qid -> nDCG@8

    def mean(self, method: str, qids: set[str] | None = None) -> float:
        values = [v for q, v in self.per_query[method].items() if qids is None or q in qids]
        return sum(values) / len(values) if values else 0.0

    def best_plain(self, qids: set[str] | None = None) -> tuple[str, float]:
        return max(((p, self.mean(p, qids)) for p in PLAIN), key=lambda kv: kv[1])

    def gap(self, method: str, qids: set[str] | None = None) -> float:
        return mq.gap_percent(self.mean(method, qids), self.best_plain(qids)[1])


def score_mq2008(
    queries: Mapping[str, mq.QueryData], setups: Sequence[tuple[str, mq.Setup]], methods: Sequence[str]
) -> list[SetupScores]:
    out = []
    for group, setup in setups:
        scores = SetupScores(setup.name, group)
        for method in methods:
            config = method_config(method)
            fuser = mq.strategy_fuser(config.strategy, config)
            scores.per_query[method] = mq.metasearch(queries, fuser, setup.rankers, setup.depth).ndcg
        out.append(scores)
        print(f"  {group}: {setup.name} done", file=sys.stderr)
    return out


def interval(scores: SetupScores, method: str) -> tuple[float, float, float]:
    """(mean difference, low, high): the method against the best plain method, paired by query."""
    best, _ = scores.best_plain()
    qids = sorted(scores.per_query[method])
    b = paired_bootstrap(
        [scores.per_query[best][q] for q in qids], [scores.per_query[method][q] for q in qids]
    )
    return b.delta, b.low, b.high


def cross_validated(
    results: Sequence[SetupScores], queries: Mapping[str, mq.QueryData], methods: Sequence[str]
) -> list[dict]:
    """For each held-out subset: the method with the best mean gap over every setup on the other four subsets,
    and that method's mean gap on the held-out one."""
    rows = []
    for held in FOLDS:
        train = {q for q, d in queries.items() if d.subset != held}
        test = {q for q, d in queries.items() if d.subset == held}
        chosen = max(methods, key=lambda m: sum(r.gap(m, train) for r in results) / len(results))
        gaps = [r.gap(chosen, test) for r in results]
        rows.append(
            {
                "held out": held,
                "chosen on the other four": chosen,
                "mean gap held out": sum(gaps) / len(gaps),
                "worst gap held out": min(gaps),
            }
        )
    return rows


def score_crw56(root: Path, methods: Sequence[str]) -> dict[str, dict[str, float]]:
    """method -> qid -> nDCG@8 on crw56 dev (queries with a relevant judged row), through the pipeline."""
    from benchmarks import crw56

    corpus = load_crw56(root)
    out: dict[str, dict[str, float]] = {}
    for method in methods:
        report = crw56.run(corpus, method_config(method), "dev", label=method, per_engine=False)
        out[method] = {q.qid: q.values["nDCG@8"] for q in report.per_query if "nDCG@8" in q.values}
    return out


def score_trecdl(root: Path, methods: Sequence[str]) -> tuple[dict[str, dict[str, float]], dict[str, int]]:
    """method -> qid -> nDCG@8 on trec-dl-passages through the pipeline, and each qid's fold."""
    from benchmarks import trecdl

    corpus = trecdl.load_trecdl(root)
    runner = trecdl.PipelineRunner(corpus)
    out: dict[str, dict[str, float]] = {}
    for method in methods:
        report = trecdl.run(corpus, method_config(method), method, runner)
        out[method] = {q.qid: q.values["nDCG@8"] for q in report.per_query if "nDCG@8" in q.values}
    return out, {str(q.qid): q.fold for q in corpus.queries}


def crw56_rows(
    per_query: dict[str, dict[str, float]], methods: Sequence[str], fold_of: Mapping[str, int] | None = None
) -> list[dict]:
    """Each method against the best plain method on a text corpus, overall and on each of four query folds
    (``fold_of``: qid -> fold; default crw56 dev's, by qid)."""

    def mean(m: str, qids: Sequence[str]) -> float:
        return sum(per_query[m][q] for q in qids) / len(qids)

    qids = list(per_query[PLAIN[0]])
    fold_of = fold_of or {q: int(q) // 2 % 4 for q in qids}  # crw56 dev qids are even
    folds = [[q for q in qids if fold_of[q] == f] for f in range(4)]
    best = max(PLAIN, key=lambda p: mean(p, qids))
    rows = []
    for m in methods:
        b = paired_bootstrap([per_query[best][q] for q in qids], [per_query[m][q] for q in qids])
        fold_gaps = []
        for fold in folds:
            fold_best = max(mean(p, fold) for p in PLAIN)
            fold_gaps.append(mean(m, fold) - fold_best)
        rows.append(
            {"method": m, "nDCG@8": mean(m, qids), "best plain": best, "Δ": b.delta, "low": b.low,
             "high": b.high, "fold Δ": fold_gaps}
        )  # fmt: skip
    return rows


def markdown(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" + "---:|" * (len(header) - 1)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def text_table(title: str, rows: list[dict]) -> list[str]:
    return [
        title,
        "",
        markdown(
            ["method", "nDCG@8", "Δ", "interval", "Δ on folds 0-3"],
            [
                [
                    c["method"],
                    f"{c['nDCG@8']:.4f}",
                    f"{c['Δ']:+.4f}",
                    f"[{c['low']:+.4f}, {c['high']:+.4f}]",
                    " ".join(f"{g:+.4f}" for g in c["fold Δ"]),
                ]
                for c in rows
            ],
        ),
        "",
    ]


def report(
    fixed: list[SetupScores],
    seeded: list[SetupScores],
    cv: list[dict],
    crw: list[dict],
    methods: Sequence[str],
    trec: list[dict] | None = None,
) -> str:
    out = ["### MQ2008 fixed setups (nDCG@8; Δ against the best plain method, 95 % paired bootstrap)", ""]
    head = ["setup", *PLAIN, *[m for m in methods if m not in PLAIN]]
    rows = []
    for r in fixed:
        best = r.best_plain()[0]
        cells = [f"**{r.mean(p):.4f}**" if p == best else f"{r.mean(p):.4f}" for p in PLAIN]
        for m in methods:
            if m in PLAIN:
                continue
            d, lo, hi = interval(r, m)
            cells.append(f"{r.mean(m):.4f} ({d:+.4f} [{lo:+.4f}, {hi:+.4f}])")
        rows.append([r.name, *cells])
    out += [markdown(head, rows), ""]
    out += ["### MQ2008 random subsets: gap to the best plain method, per seed", ""]
    groups = sorted({r.group for r in seeded})
    rows = []
    for m in methods:
        cells = []
        for g in groups:
            rs = [r for r in seeded if r.group == g]
            gaps = [r.gap(m) for r in rs]
            cells.append(f"{sum(gaps) / len(gaps):+.2f} % / {min(gaps):+.2f} % ({len(rs)})")
        rows.append([m, *cells])
    out += [markdown(["method", *[f"{g}: mean / worst (setups)" for g in groups]], rows), ""]
    out += ["### Cross-validated choice of the method (MQ2008, by standard subset)", ""]
    out += [
        markdown(
            ["held out", "chosen on the other four", "mean gap held out", "worst gap held out"],
            [
                [
                    c["held out"],
                    c["chosen on the other four"],
                    f"{c['mean gap held out']:+.2f} %",
                    f"{c['worst gap held out']:+.2f} %",
                ]
                for c in cv
            ],
        ),  # fmt: skip
        "",
    ]
    out += ["### crw56 dev through the pipeline (Δ against the best plain method, 95 % paired bootstrap)", ""]
    out += [
        markdown(
            ["method", "nDCG@8", "Δ", "interval", "Δ on folds 0-3"],
            [
                [
                    c["method"],
                    f"{c['nDCG@8']:.4f}",
                    f"{c['Δ']:+.4f}",
                    f"[{c['low']:+.4f}, {c['high']:+.4f}]",
                    " ".join(f"{g:+.4f}" for g in c["fold Δ"]),
                ]
                for c in crw
            ],
        ),  # fmt: skip
        "",
        f"(best plain method on crw56 dev: {crw[0]['best plain']})",
    ]
    if trec:
        out += [
            "",
            *text_table("### trec-dl-passages through the pipeline (Δ against the best plain method)", trec),
        ]
        out += [f"(best plain method on trec-dl: {trec[0]['best plain']})"]
    return "\n".join(out)


def main(argv: Sequence[str] | None = None, echo: Callable[[str], None] = print) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.suite", description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=Path(os.environ.get("SERPFUSE_DATA", "../shared/data")))
    ap.add_argument("--strategies", default=",".join(STRATEGIES))
    ap.add_argument("--subsets", type=int, default=17, help="random subsets per seed")
    ap.add_argument("--seeds", default="1,7,2026")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args(argv)
    strategies = [s for s in args.strategies.split(",") if s]
    methods = [*PLAIN, *strategies]
    seeds = [int(s) for s in args.seeds.split(",") if s]
    if not (args.data / "mq2008-agg").is_dir() or not (args.data / "crw56").is_dir():
        print(f"data directory not found or incomplete: {args.data} (set SERPFUSE_DATA)", file=sys.stderr)
        return 2
    queries = load_mq2008_queries(args.data)
    fixed = score_mq2008(queries, [("fixed", s) for s in mq.REFERENCE_SETUPS], methods)
    seeded = score_mq2008(
        queries,
        [(f"seed {seed}", s) for seed in seeds for s in mq.random_setups(args.subsets, seed)],
        methods,
    )
    cv = cross_validated(fixed + seeded, queries, methods)
    crw = crw56_rows(score_crw56(args.data, methods), methods)
    trec = None
    if (args.data / "trec-dl-passages").is_dir():
        per_query, folds = score_trecdl(args.data, methods)
        trec = crw56_rows(per_query, methods, folds)
    if args.json:
        echo(
            json.dumps(
                {"fixed": [r.per_query for r in fixed], "cv": cv, "crw56": crw, "trecdl": trec}, default=str
            )
        )
    else:
        echo(report(fixed, seeded, cv, crw, methods, trec))
    return 0


if __name__ == "__main__":
    sys.exit(main())
